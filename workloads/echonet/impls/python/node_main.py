"""The echonet node (SPEC §7): `python -E -S node_main.py [--bind IPV4] [--ifaddr IPV4] [--port N]`.

Binds one UDP socket, multicasts the start INF, prints READY, then answers requests one
datagram at a time until SIGTERM or SIGINT, when it prints its counters as one line of JSON
and exits 0. Standard library only. Bad command line: a message on stderr, exit 2; a socket
that cannot be bound (address in use, not local): a message on stderr, exit 1.
"""

from __future__ import annotations

import json
import signal
import socket
import sys

import frame
import objects
import options
import transport
from responder import Responder

PROGRAM = "echonet-python-node"
START_TID = b"\x00\x01"  # the start INF answers nobody: any TID will do
# How long a blocked receive sleeps before it looks at the stop flag again. A signal normally
# wakes it at once (transport.wake_receiver); this only bounds the case of a signal landing
# between the flag check and the recvfrom(2) call.
STOP_CHECK_S = 0.25


class Stop:
    """Set by the SIGTERM/SIGINT handler, read by the receive loop once per datagram."""

    __slots__ = ("requested",)

    def __init__(self) -> None:
        self.requested = False


def log(line: str) -> None:
    sys.stderr.write(f"{PROGRAM}: {line}\n")
    sys.stderr.flush()


def parse_args(argv: list[str] | None):
    parser = options.Parser(
        prog="node_main.py",
        description="An ECHONET Lite node (node profile and a home air conditioner) over UDP.",
    )
    options.add_network_options(parser)
    args = parser.parse_args(argv)
    if args.ifaddr is None:
        args.ifaddr = args.bind
    return args


def serve(sock: socket.socket, responder: Responder, stop: Stop) -> dict[str, int]:
    """Answer datagrams until `stop` is requested; the counters of SPEC §7."""
    # 64 KiB holds the largest IPv4 datagram (65,507 bytes), so no read is ever truncated.
    buf = bytearray(frame.RECV_SIZE)
    view = memoryview(buf)
    recv = sock.recvfrom_into
    send = sock.sendto
    decode = frame.decode
    answer = responder.answer
    Malformed, Format2 = frame.Malformed, frame.Format2
    received = requests = replies = ignored = malformed = format2 = send_errors = 0
    while not stop.requested:
        try:
            n, addr = recv(buf)
        except OSError:
            # The stop check's timeout (EAGAIN), or an error queued by an earlier send
            # (ECONNREFUSED): neither is a datagram, neither ends the loop.
            continue
        if addr is None:  # woken by transport.wake_receiver: no datagram
            continue
        received += 1
        try:
            request = decode(view[:n].tobytes())
        except Malformed:
            malformed += 1
            continue
        except Format2:
            format2 += 1
            continue
        out = answer(request)
        if out is None:
            ignored += 1
            continue
        requests += 1
        for datagram in out:
            try:
                send(datagram, addr)
                replies += 1
            except OSError:
                send_errors += 1
    return {
        "received": received,
        "requests": requests,
        "replies": replies,
        "ignored": ignored,
        "dropped_malformed": malformed,
        "dropped_format2": format2,
        "send_errors": send_errors,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    stop = Stop()
    sock: socket.socket | None = None

    def on_signal(signum, _frame) -> None:
        stop.requested = True
        if sock is not None:
            transport.wake_receiver(sock)

    # Before the socket exists: a SIGTERM right after READY must already be ours.
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    try:
        sock = transport.open_socket(args.bind, args.port, args.ifaddr)
        transport.set_receive_timeout(sock, STOP_CHECK_S)
    except OSError as e:
        log(f"cannot open UDP {args.bind}:{args.port} (ifaddr {args.ifaddr}): {e.strerror or e}")
        return 1
    if args.bind == transport.ANY:
        try:
            transport.join_group(sock, args.ifaddr)
        except OSError as e:
            log(f"cannot join {frame.MULTICAST_GROUP} on {args.ifaddr}: {e.strerror or e}")

    responder = Responder(objects.node_objects(socket.inet_aton(args.ifaddr)))
    start_errors = 0
    try:
        transport.multicast(sock, responder.announcement(START_TID), args.port)
    except OSError as e:
        start_errors = 1
        log(f"cannot send the start INF to {frame.MULTICAST_GROUP}: {e.strerror or e}")
    sys.stdout.write("READY\n")
    sys.stdout.flush()

    counters = serve(sock, responder, stop)
    sock.close()
    counters["send_errors"] += start_errors
    sys.stdout.write(json.dumps(counters) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
