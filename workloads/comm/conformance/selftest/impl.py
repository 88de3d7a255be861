"""The comm self-test's implementation: a small, correct comm server (threads, blocking
sockets) or, with --bug NAME, the same server with ONE classic mistake. test_selftest.py checks
that the suite catches every bug.

    impl.py --port PORT [--host ADDR] [--pool N] [--max-body N] [--bug NAME]
    impl.py --list-bugs
"""

from __future__ import annotations

import argparse
import ipaddress
import signal
import socket
import struct
import sys
import threading

HEADER = struct.Struct(">BQ")
LITTLE = struct.Struct("<BQ")
REPLY, END, QUIT = 2, 4, 8
BUGS = {
    "echo-type": "replies carry the request's type instead of REPLY",
    "little-endian": "little-endian lengths in both directions",
    "end-before-drain": "answers END before the replies owed (a large body ends the session)",
    "no-close-after-end": "keeps the connection open after sending END",
    "ignore-cap": "accepts bodies above --max-body",
    "drop-split-header": "a header split across reads is taken for EOF",
    "bind-any": "listens on every address (0.0.0.0) instead of --host's",
}


def recv_exact(conn: socket.socket, n: int, bug: str | None) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = conn.recv(min(1 << 20, n - len(buf)))
        if not chunk:
            return None
        if bug == "drop-split-header" and n == HEADER.size and len(chunk) < n:
            return None  # a header split across reads is taken for EOF
        buf += chunk
    return bytes(buf)


def handle(conn: socket.socket, max_body: int, bug: str | None) -> None:
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    codec = LITTLE if bug == "little-endian" else HEADER
    with conn:
        while True:
            head = recv_exact(conn, HEADER.size, bug)
            if head is None:
                return
            kind, length = codec.unpack(head)
            if length > max_body and bug != "ignore-cap":
                print(f"refused a body of {length} bytes", file=sys.stderr)
                return
            if kind in (END, QUIT):
                conn.sendall(codec.pack(END, 0))
                if bug == "no-close-after-end":
                    conn.recv(1)
                    return
                # Half-close, then drain: closing with unread input would reset the connection
                # and destroy replies still in flight.
                conn.shutdown(socket.SHUT_WR)
                while conn.recv(1 << 16):
                    pass
                return
            body = recv_exact(conn, length, bug) if length else b""
            if body is None:
                return
            if bug == "end-before-drain" and len(body) > 1000:
                conn.sendall(codec.pack(END, 0))
                return
            conn.sendall(codec.pack(kind if bug == "echo-type" else REPLY, len(body)) + body)


def main() -> None:
    if sys.argv[1:] == ["--list-bugs"]:
        print("\n".join(BUGS))
        return
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--host", type=ipaddress.IPv4Address, default="127.0.0.1")
    p.add_argument("--pool", type=int, default=8)
    p.add_argument("--max-body", type=int, default=64 << 20)
    p.add_argument("--bug", choices=list(BUGS), default=None)
    args = p.parse_args()
    if not 0 < args.port < 65536 or args.pool < 1 or args.max_body < 0:
        p.error("--port must be 1-65535, --pool at least 1, --max-body at least 0")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0" if args.bug == "bind-any" else str(args.host), args.port))
    srv.listen(1024)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=handle, args=(conn, args.max_body, args.bug), daemon=True).start()


if __name__ == "__main__":
    main()
