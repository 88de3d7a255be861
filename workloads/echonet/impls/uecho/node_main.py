"""The reference node: uEcho for Python (uecho 1.0.3, the seed author's framework) in the lab's
command line (SPEC §7).

    node_main.py [--bind IPV4] [--ifaddr IPV4] [--port N]

A uecho LocalNode carries SPEC §5's objects (objects.py) on uecho's sockets, bound where the
lab says (transport.py). Requests go through uecho's own parser, dispatch and responder
(LocalNode.message_received -> Object.message_received): replies are what uecho makes of them.
The main thread waits for SIGTERM/SIGINT while uecho's server threads answer.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import signal
import sys

import objects
import transport
from uecho import ESV, LocalNode, Message

USAGE_EXIT = 2


class LabNode(LocalNode):
    """uecho's LocalNode, counting what it sends. uecho sends every reply through
    send_message (unicast) or announce_message (a notification: multicast)."""

    def __init__(self, counters: transport.Counters) -> None:
        super().__init__()
        self.counters = counters

    def send_message(self, msg, addr) -> bool:
        return self._counted(super().send_message, msg, addr)

    def announce_message(self, msg) -> bool:
        return self._counted(super().announce_message, msg)

    def _counted(self, send, *args) -> bool:
        try:
            sent = send(*args)
        except OSError as e:  # uecho lets sendto's error out
            self.counters.add("send_errors")
            print(f"uecho node: send failed: {e}", file=sys.stderr, flush=True)
            return False
        self.counters.add("replies" if sent else "send_errors")
        return sent

    def announce_start(self) -> None:
        """SPEC §6: one INF of the instance list (0xD5) to 224.0.23.0 at start, through uecho's
        own announce; not a reply, so only a failure is counted."""
        inf = Message()
        inf.ESV = ESV.NOTIFICATION
        inf.SEOJ = objects.NODE_PROFILE
        inf.DEOJ = objects.NODE_PROFILE
        inf.add_property((0xD5, self.get_object(objects.NODE_PROFILE).get_property_data(0xD5)))
        try:
            LocalNode.announce_message(self, inf)
        except OSError as e:
            self.counters.add("send_errors")
            print(f"uecho node: the INF at start was not sent: {e}", file=sys.stderr, flush=True)

    def classify(self, msg) -> str:
        """What uecho will do with a parsed datagram: answer it (a request to one of its objects:
        LocalNode.get_object finds the DEOJ, Object.message_received takes requests) or not."""
        if msg.is_request() and self.get_object(msg.DEOJ) is not None:
            return "requests"
        return "ignored"


def ipv4(text: str) -> str:
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an IPv4 address: {text!r}") from None


def port(text: str) -> int:
    try:
        n = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"port {n} is outside 1-65535")
    return n


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="node_main.py",
        description="ECHONET Lite node (SPEC §7) on uEcho for Python: a node profile and a "
        "home air conditioner, answering over UDP until SIGTERM, then its counters as JSON.",
    )
    p.add_argument(
        "--bind",
        type=ipv4,
        default=transport.ANY,
        metavar="IPV4",
        help="address to bind; 0.0.0.0 also receives multicast (default 0.0.0.0)",
    )
    p.add_argument(
        "--ifaddr",
        type=ipv4,
        default=None,
        metavar="IPV4",
        help="interface address for multicast and 0x83 (default: --bind)",
    )
    p.add_argument("--port", type=port, default=3610, metavar="N", help="UDP port (default 3610)")
    args = p.parse_args(argv)
    if args.ifaddr is None:
        args.ifaddr = args.bind
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    # Signals wait for the main thread only: blocked before uecho's threads exist, which
    # inherit the mask.
    stop_signals = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)

    counters = transport.Counters()
    node = LabNode(counters)
    objects.build(node, args.ifaddr)
    if transport.address_taken(args.bind, args.port):
        print(f"uecho node: {args.bind}:{args.port} is already in use", file=sys.stderr)
        return 1
    # uecho keeps its Manager private (LocalNode.__manager): reached by its mangled name.
    manager = node._LocalNode__manager
    try:
        transport.attach(node, manager, args.bind, args.ifaddr, args.port, counters,
                         node.classify, multicast=True)  # fmt: skip
    except OSError as e:
        print(f"uecho node: cannot bind {args.bind}:{args.port}: {e}", file=sys.stderr)
        return 1
    transport.start(manager)
    node.announce_start()
    print("READY", flush=True)

    signal.sigwait(stop_signals)
    node.stop()  # uecho's Manager.stop: shuts every socket down and joins its thread
    print(json.dumps(counters.as_dict()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
