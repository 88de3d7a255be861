"""The reference controller: uEcho for Python's Controller (uecho 1.0.3, the seed author's
framework) in the lab's command line (SPEC §8).

    controller_main.py [--bind IPV4] [--ifaddr IPV4] [--port N] [--timeout-ms MS]
                       [--retries N] COMMAND ARGS...

Every request is a uecho Message sent with Controller.post_message, which sends it and waits on
a condition until uecho's receive thread sees a reply with the same TID; discovery is
Controller.search with a ControleListener (uecho's spelling) told of every node found. What this
file adds is the lab's: the command line, bounded retries (post_message again with the same
message, so the same TID), the checks of SPEC §8 on what uecho returns, and the JSON.

Where uecho decides differently from SPEC §8 (the report's notes say the same):
- SEOJ: uecho's Controller.send_message sets every request's SEOJ to 0x0EF001 (its node
  profile), not 0x05FF01; replies therefore carry DEOJ 0x0EF001. It cannot be changed: its
  message_received raises AttributeError (NodeProfile.CODE_READ_ONLY does not exist) for any
  Get_Res or INF whose DEOJ is not 0x0EF001, before the waiting request is woken.
- Matching: uecho matches a reply by TID alone; the source address and ESV are checked here
  after post_message returns, and a reply that fails them counts as ignored and the request is
  sent again (an attempt).
- Timeout: uecho waits DEFAULT_POST_MSG_TIMEOUT (2 s, a module constant of uecho.controller)
  per post; --timeout-ms sets that constant.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import sys
import time

import transport
import uecho.controller
from uecho import (
    ESV,
    Controller,
    Message,
    ReadRequest,
    RemoteNode,
    WriteReadRequest,
    WriteRequest,
    WriteResponseRequiredRequest,
)
from uecho.controller import ControleListener

NODE_PROFILE = 0x0EF001
# The replies that answer each request ESV (SPEC §8 "matches").
ANSWERS = {
    ESV.WRITE_REQUEST: (ESV.WRITE_REQUEST_ERROR,),
    ESV.WRITE_REQUEST_RESPONSE_REQUIRED: (
        ESV.WRITE_RESPONSE,
        ESV.WRITE_REQUEST_RESPONSE_REQUIRED_ERROR,
    ),
    ESV.READ_REQUEST: (ESV.READ_RESPONSE, ESV.READ_REQUEST_ERROR),
    ESV.NOTIFICATION_REQUEST: (ESV.NOTIFICATION, ESV.NOTIFICATION_REQUEST_ERROR),
    ESV.WRITE_READ_REQUEST: (ESV.WRITE_READ_RESPONSE, ESV.WRITE_READ_REQUEST_ERROR),
}
# SPEC §8 bench: the node profile's 12 properties, in this order.
BENCH_EPCS = (0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7)


class Failure(Exception):
    """A request unanswered or a reply that is wrong: exit 1 with {"error": ...}."""


# ---- the command line ------------------------------------------------------------------------


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)


def ipv4(text: str) -> str:
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an IPv4 address: {text!r}") from None


def bounded(lo: int, hi: int, what: str):
    def parse(text: str) -> int:
        try:
            n = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not lo <= n <= hi:
            raise argparse.ArgumentTypeError(f"{what} {n} is outside {lo}-{hi}")
        return n

    return parse


def eoj(text: str) -> int:
    if len(text) != 6:
        raise argparse.ArgumentTypeError(f"an EOJ is six hex digits, not {text!r}")
    return int(_hex(text, "EOJ"), 16)


def _hex(text: str, what: str) -> str:
    try:
        bytes.fromhex(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} is not hex: {text!r}") from None
    if " " in text or len(text) % 2:
        raise argparse.ArgumentTypeError(f"{what} is not hex bytes: {text!r}")
    return text


def epcs(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        if len(part) != 2:
            raise argparse.ArgumentTypeError(f"an EPC is two hex digits, not {part!r}")
        out.append(int(_hex(part, "EPC"), 16))
    return out


def sets(text: str) -> list[tuple[int, bytes]]:
    out = []
    for part in text.split(","):
        epc, eq, data = part.partition("=")
        if not eq:
            raise argparse.ArgumentTypeError(f"a set is EPC=HEXDATA, not {part!r}")
        (code,) = epcs(epc)
        out.append((code, bytes.fromhex(_hex(data, "EDT"))))
    return out


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = Parser(
        prog="controller_main.py",
        description="ECHONET Lite controller (SPEC §8) on uEcho for Python's Controller.",
    )
    p.add_argument(
        "--bind",
        type=ipv4,
        default=transport.ANY,
        metavar="IPV4",
        help="address to send from and listen on (default 0.0.0.0)",
    )
    p.add_argument(
        "--ifaddr",
        type=ipv4,
        default=None,
        metavar="IPV4",
        help="interface for multicast (default: --bind)",
    )
    p.add_argument(
        "--port",
        type=bounded(1, 65535, "port"),
        default=3610,
        metavar="N",
        help="the controller's port and the nodes' port (default 3610)",
    )
    p.add_argument(
        "--timeout-ms",
        type=bounded(1, 3_600_000, "timeout"),
        default=500,
        metavar="MS",
        help="how long one attempt waits (default 500)",
    )
    p.add_argument(
        "--retries",
        type=bounded(0, 1_000_000, "retries"),
        default=3,
        metavar="N",
        help="attempts after the first (default 3)",
    )
    cmds = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    c = cmds.add_parser("get", help="one Get")
    c.add_argument("host", type=ipv4)
    c.add_argument("eoj", type=eoj)
    c.add_argument("epcs", type=epcs)
    for name, what in (("setc", "one SetC"), ("seti", "one SetI (no reply on success)")):
        c = cmds.add_parser(name, help=what)
        c.add_argument("host", type=ipv4)
        c.add_argument("eoj", type=eoj)
        c.add_argument("sets", type=sets)
    c = cmds.add_parser("setget", help="one SetGet")
    c.add_argument("host", type=ipv4)
    c.add_argument("eoj", type=eoj)
    c.add_argument("sets", type=sets)
    c.add_argument("epcs", type=epcs)
    c = cmds.add_parser("inf-req", help="one INF_REQ")
    c.add_argument("host", type=ipv4)
    c.add_argument("eoj", type=eoj)
    c.add_argument("epcs", type=epcs)
    c = cmds.add_parser("discover", help="multicast Get of 0xD6 to every node profile")
    c.add_argument("--expect", type=bounded(1, 1_000_000, "expect"), default=None, metavar="N")
    c.add_argument("--wait-ms", type=bounded(0, 3_600_000, "wait"), default=1000, metavar="MS")
    c = cmds.add_parser("bench", help="the seed's loop: 12 Gets (faithful) or one (batched)")
    c.add_argument("host", type=ipv4)
    c.add_argument("--mode", choices=("faithful", "batched"), required=True)
    c.add_argument("--iterations", type=bounded(1, 10**9, "iterations"), required=True)
    c.add_argument("--warmup", type=bounded(0, 10**9, "warmup"), default=0)
    args = p.parse_args(argv)
    if args.ifaddr is None:
        args.ifaddr = args.bind
    return args


# ---- uecho's Controller, bound where the lab says ---------------------------------------------


class Discovered(ControleListener):
    """uecho calls node_add for every node-profile answer carrying an instance list (and, by a
    slip in uecho, node_updated callbacks also arrive as node_add): first sight per address."""

    def __init__(self) -> None:
        self.first_seen: dict[str, float] = {}

    def node_add(self, node: RemoteNode):
        self.first_seen.setdefault(node.ip, time.perf_counter())

    def node_updated(self, node: RemoteNode):
        pass

    def object_updated(self, node, obj):
        pass

    def property_updated(self, node, obj, prop):
        pass


class LabController:
    """A uecho Controller whose sockets are bound by transport.attach, with SPEC §8's retries
    and checks around post_message."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        uecho.controller.DEFAULT_POST_MSG_TIMEOUT = args.timeout_ms / 1000.0
        self.counters = transport.Counters()
        self.ctrl = Controller()
        self.discovered = Discovered()
        self.ctrl.add_listener(self.discovered)
        self.accepted = 0  # datagrams taken as the answer (the rest are "ignored")
        # uecho keeps its Manager private (LocalNode.__manager); Controller.start() would bind
        # every address netifaces lists and multicast a search at once.
        self.manager = self.ctrl._LocalNode__manager
        # post_message sends, then waits on this Condition; uecho's receive thread sets the
        # reply and notifies it. A reply handled before the wait starts (a fast node, the GIL
        # handed to the receive thread during sendto) is a lost wakeup: the request then
        # sleeps its whole timeout before returning the reply it already has (2 of 300 Gets
        # to the C++ node here). Held across post_message (it is re-entrant: uecho's
        # Condition() wraps an RLock, and wait() releases every level), the notify waits until
        # the wait has begun. uecho's code is unchanged.
        self.post_lock = self.ctrl._Controller__last_post_cond
        # Only a unicast socket: answers (discovery's too) come by unicast, and a socket joined
        # to the group would hear this controller's own search, which uecho's node profile
        # would answer (its IGNORE_SELF_MESSAGE test, LocalNode._is_self_message, never
        # returns True) and list as a node.
        transport.attach(self.ctrl, self.manager, args.bind, args.ifaddr, args.port,
                         self.counters, None, multicast=False)  # fmt: skip
        transport.start(self.manager)

    def close(self) -> None:
        self.ctrl.stop()

    @property
    def ignored(self) -> int:
        c = self.counters.as_dict()
        return c["received"] - self.accepted

    def know(self, host: str) -> None:
        """uecho's Controller handles every Get_Res by updating the node it found before
        (Controller._update_properties); for a node it has not found, that code reaches
        None.get_object and raises, and the waiting request is never woken. A node is found by
        discovery; asking one by address registers it as discovery would have."""
        if self.ctrl.get_node(host) is None:
            self.ctrl._add_found_node(RemoteNode((host, self.args.port)))

    def request(self, host: str, msg: Message, attempts: int | None = None):
        """post_message until a matching reply: (reply, attempts). None when unanswered."""
        self.know(host)
        wanted = ANSWERS[msg.ESV]
        attempts = attempts or 1 + self.args.retries
        for attempt in range(1, attempts + 1):
            with self.post_lock:
                reply = self.ctrl.post_message(msg, (host, self.args.port))
            if reply is None:
                continue
            if reply.from_addr[0] == host and reply.ESV in wanted:
                self.accepted += 1
                return reply, attempt
        return None, attempts


# ---- the commands ----------------------------------------------------------------------------


def props_json(props) -> list[dict]:
    return [{"epc": f"{p.code:02x}", "edt": bytes(p.data).hex()} for p in props]


def reply_json(host: str, msg: Message, reply: Message | None, attempts: int, ignored: int):
    out = {"host": host, "tid": f"{msg.TID:04x}"}
    if reply is None:  # SetI without a refusal
        out.update({"seoj": None, "deoj": None, "esv": None})
    else:
        out.update(
            {"seoj": f"{reply.SEOJ:06x}", "deoj": f"{reply.DEOJ:06x}", "esv": f"{reply.ESV:02x}"}
        )
        if reply.ESV in (ESV.WRITE_READ_RESPONSE, ESV.WRITE_READ_REQUEST_ERROR):
            out["set"] = props_json(reply.set_properties)
            out["get"] = props_json(reply.get_properties)
        else:
            out["properties"] = props_json(reply.properties)
    out["attempts"] = attempts
    out["ignored"] = ignored
    return out


def build_request(args) -> Message:
    cmd = args.command
    if cmd == "get":
        msg = ReadRequest(args.eoj)
        for code in args.epcs:
            msg.add_property(code)
    elif cmd == "inf-req":
        msg = Message()
        msg.ESV = ESV.NOTIFICATION_REQUEST
        msg.DEOJ = args.eoj
        for code in args.epcs:
            msg.add_property(code)
    elif cmd in ("setc", "seti"):
        msg = (WriteResponseRequiredRequest if cmd == "setc" else WriteRequest)(args.eoj)
        for code, data in args.sets:
            msg.add_property((code, data))
    else:  # setget
        msg = WriteReadRequest(args.eoj)
        for code, data in args.sets:
            msg.add_set_property((code, data))
        for code in args.epcs:
            msg.add_get_property(code)
    return msg


def one_request(lab: LabController, args) -> dict:
    msg = build_request(args)
    if args.command == "seti":
        # Sent once; success has no reply, so one timeout's wait for a SetI_SNA.
        reply, attempts = lab.request(args.host, msg, attempts=1)
        return reply_json(args.host, msg, reply, attempts, lab.ignored)
    reply, attempts = lab.request(args.host, msg)
    if reply is None:
        raise Failure(f"no reply from {args.host} after {attempts} attempts (TID {msg.TID:04x})")
    return reply_json(args.host, msg, reply, attempts, lab.ignored)


def discover(lab: LabController, args) -> dict:
    ctrl, seen = lab.ctrl, lab.discovered.first_seen
    interval = args.timeout_ms / 1000.0

    def search() -> None:
        try:
            ctrl.search()
        except OSError as e:  # uecho lets sendto's error out (no multicast route, ...)
            raise Failure(f"the discovery multicast was not sent: {e}") from None

    start = time.perf_counter()
    attempts = 1
    search()  # uecho's SearchMessage: Get 0xD6 to 0x0EF001 at 224.0.23.0
    if args.expect is None:
        time.sleep(args.wait_ms / 1000.0)
    else:
        deadline = start + interval
        while len(seen) < args.expect:
            now = time.perf_counter()
            if now >= deadline:
                if attempts > args.retries:
                    raise Failure(f"{len(seen)} of {args.expect} nodes answered after "
                                  f"{attempts} attempts")  # fmt: skip
                search()
                attempts += 1
                deadline = now + interval
            time.sleep(0.001)
    found = sorted(ctrl.nodes, key=lambda n: ipaddress.IPv4Address(n.ip))
    times = sorted(seen.values())
    needed = times[: args.expect] if args.expect else times
    lab.accepted += len(found)
    nodes = [
        {
            "host": n.ip,
            "eoj": f"{NODE_PROFILE:06x}",
            "instances": [f"{o.code:06x}" for o in n.objects if o.code != NODE_PROFILE],
        }
        for n in found
    ]
    return {
        "nodes": nodes,
        "elapsed_s": round((needed[-1] - start) if needed else 0.0, 6),
        "attempts": attempts,
        "ignored": lab.ignored,
    }


def bench(lab: LabController, args) -> dict:
    host = args.host
    requests = retries = 0
    if args.mode == "faithful":
        plan = [(code,) for code in BENCH_EPCS]
    else:
        plan = [BENCH_EPCS]

    def iteration() -> None:
        nonlocal requests, retries
        for codes in plan:
            msg = ReadRequest(NODE_PROFILE)
            for code in codes:
                msg.add_property(code)
            reply, attempts = lab.request(host, msg)
            if reply is None:
                raise Failure(f"no reply from {host} after {attempts} attempts")
            got = tuple(p.code for p in reply.properties)
            if reply.ESV != ESV.READ_RESPONSE or got != codes:
                raise Failure(f"wrong reply to TID {msg.TID:04x}: ESV {reply.ESV:02x}, "
                              f"EPCs {bytes(got).hex()}")  # fmt: skip
            requests += 1
            retries += attempts - 1

    for _ in range(args.warmup):
        iteration()
    requests = retries = 0
    start = time.perf_counter()
    for _ in range(args.iterations):
        iteration()
    elapsed = time.perf_counter() - start
    return {
        "mode": args.mode,
        "iterations": args.iterations,
        "requests": requests,
        "elapsed_s": round(elapsed, 6),
        "retries": retries,
        "ignored": lab.ignored,
    }


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if transport.address_taken(args.bind, args.port):
        print(f"uecho controller: {args.bind}:{args.port} is already in use", file=sys.stderr)
        return 1
    try:
        lab = LabController(args)
    except OSError as e:
        print(f"uecho controller: cannot bind {args.bind}:{args.port}: {e}", file=sys.stderr)
        return 1
    try:
        if args.command == "discover":
            out = discover(lab, args)
        elif args.command == "bench":
            out = bench(lab, args)
        else:
            out = one_request(lab, args)
    except Failure as e:
        print(json.dumps({"error": str(e)}), flush=True)
        return 1
    finally:
        lab.close()
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
