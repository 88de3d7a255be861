"""Entry point: `python -E main.py --port PORT [--host ADDR]`.

A Redis-protocol (RESP2) server on ADDR:PORT only (--host: an IPv4 address literal, default
127.0.0.1), single-threaded on a uvloop event loop.
SIGTERM or SIGINT closes every connection and exits 0. The modules sit next to this file,
which Python puts first on sys.path; uvloop and sortedcontainers come from the lab's venv.
"""

from __future__ import annotations

import asyncio
import ipaddress
import resource
import signal
import socket
import sys

import uvloop
from server import Server

HOST = "127.0.0.1"  # the default address (--host)
USAGE = "usage: main.py --port PORT [--host ADDR]"
BACKLOG = 4096  # the kernel caps it at net.core.somaxconn


class UsageError(Exception):
    pass


def parse_args(args: list[str]) -> tuple[int, str]:
    """(port, host) from `--port PORT [--host ADDR]` (or `--port=PORT`, `--host=ADDR`)."""
    port = None
    host = HOST
    i = 0
    while i < len(args):
        name, eq, value = args[i].partition("=")
        if name not in ("--port", "--host") or (not eq and i + 1 >= len(args)):
            raise UsageError(f"unknown argument {args[i]!r} ({USAGE})")
        if not eq:
            value = args[i + 1]
            i += 1
        i += 1
        if name == "--host":
            # An IPv4 literal only: no names, and not "" (which socket binds to every address).
            try:
                host = str(ipaddress.IPv4Address(value))
            except ValueError:
                raise UsageError(f"bad host {value!r}: expected an IPv4 address") from None
        elif not (value.isascii() and value.isdigit()) or not 0 < int(value) < 65536:
            raise UsageError(f"bad port {value!r}: expected 1-65535")
        else:
            port = int(value)
    if port is None:
        raise UsageError("missing --port PORT")
    return port, host


def raise_open_file_limit() -> None:
    """1,000+ clients need as many descriptors: lift the soft limit to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass


def listening_socket(port: int, host: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.setblocking(False)
    return sock


async def serve(port: int, host: str) -> None:
    loop = asyncio.get_running_loop()
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    server = Server(port, max_clients=max(soft - 32, 1), host=host)
    listener = await loop.create_server(
        server.new_client, sock=listening_socket(port, host), backlog=BACKLOG
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
        port, host = parse_args(args)
    except UsageError as e:
        print(f"redis-python: {e}", file=sys.stderr)
        return 2
    raise_open_file_limit()
    try:
        uvloop.run(serve(port, host))
    except OSError as e:
        print(f"redis-python: cannot listen on {host}:{port}: {e.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
