"""Entry point: `python -E main.py --port PORT`.

A Redis-protocol (RESP2) server on 127.0.0.1:PORT, single-threaded on a uvloop event loop.
SIGTERM or SIGINT closes every connection and exits 0. The modules sit next to this file,
which Python puts first on sys.path; uvloop and sortedcontainers come from the lab's venv.
"""

from __future__ import annotations

import asyncio
import resource
import signal
import socket
import sys

import uvloop
from server import Server

HOST = "127.0.0.1"
BACKLOG = 4096  # the kernel caps it at net.core.somaxconn


class UsageError(Exception):
    pass


def parse_args(args: list[str]) -> int:
    """The port from `--port PORT` (or `--port=PORT`), the only argument."""
    port = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--port" and i + 1 < len(args):
            value = args[i + 1]
            i += 2
        elif arg.startswith("--port="):
            value = arg.split("=", 1)[1]
            i += 1
        else:
            raise UsageError(f"unknown argument {arg!r} (usage: main.py --port PORT)")
        if not value.isdigit() or not 0 < int(value) < 65536:
            raise UsageError(f"bad port {value!r}: expected 1-65535")
        port = int(value)
    if port is None:
        raise UsageError("missing --port PORT")
    return port


def raise_open_file_limit() -> None:
    """1,000+ clients need as many descriptors: lift the soft limit to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass


def listening_socket(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.setblocking(False)
    return sock


async def serve(port: int) -> None:
    loop = asyncio.get_running_loop()
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    server = Server(port, max_clients=max(soft - 32, 1))
    listener = await loop.create_server(
        server.new_client, sock=listening_socket(port), backlog=BACKLOG
    )
    stop = loop.create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: stop.done() or stop.set_result(None))
    server.start_expiry(loop)
    await stop
    listener.close()
    server.close_all()


def main(args: list[str]) -> int:
    try:
        port = parse_args(args)
    except UsageError as e:
        print(f"redis-python: {e}", file=sys.stderr)
        return 2
    raise_open_file_limit()
    try:
        uvloop.run(serve(port))
    except OSError as e:
        print(f"redis-python: cannot listen on {HOST}:{port}: {e.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
