"""The redis self-test's implementation: redis-server behind a proxy, faithful or, with
--bug NAME, damaging the conversation in ONE way. test_selftest.py checks that the suite catches
every bug.

    impl.py --port PORT [--host ADDR] [--bug NAME]
    impl.py --list-bugs
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import re
import signal
import socket
import subprocess
import sys
import time

BUGS = {
    "lowercase-errors": "error replies in lower case (-err instead of -ERR)",
    "keep-open": "the connection stays open after the server closed it (a protocol error)",
    "nil-as-empty": "a nil bulk string ($-1) becomes an empty one ($0)",
    "int-as-bulk": "integer replies become bulk strings",
    "bind-any": "listens on every address (0.0.0.0) instead of --host's",
}
_INT_REPLY = re.compile(rb"(^|(?<=\r\n)):(-?\d+)\r\n")


def damage_reply(bug: str | None, data: bytes) -> bytes:
    if bug == "lowercase-errors":
        return data.replace(b"-ERR ", b"-err ")
    if bug == "nil-as-empty":
        return data.replace(b"$-1\r\n", b"$0\r\n\r\n")
    if bug == "int-as-bulk":
        return _INT_REPLY.sub(lambda m: b"$%d\r\n%s\r\n" % (len(m[2]), m[2]), data)
    return data


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_upstream() -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--logfile", ""],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(500):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            time.sleep(0.01)
    proc.kill()
    sys.exit("proxy: redis-server did not start")


async def pump(reader, writer, transform, close_when_done: bool) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(transform(data))
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    if close_when_done:
        writer.close()


async def serve(host: str, port: int, upstream: int, bug: str | None) -> None:
    async def client(creader, cwriter) -> None:
        ureader, uwriter = await asyncio.open_connection("127.0.0.1", upstream)
        to_server = asyncio.create_task(pump(creader, uwriter, lambda d: d, True))
        to_client = asyncio.create_task(
            pump(ureader, cwriter, lambda d: damage_reply(bug, d), bug != "keep-open")
        )
        await asyncio.wait([to_server, to_client], return_when=asyncio.ALL_COMPLETED)
        cwriter.close()

    srv = await asyncio.start_server(client, "0.0.0.0" if bug == "bind-any" else host, port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    async with srv:
        await stop.wait()


def main() -> None:
    if sys.argv[1:] == ["--list-bugs"]:
        print("\n".join(BUGS))
        return
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--host", type=ipaddress.IPv4Address, default="127.0.0.1")
    p.add_argument("--bug", choices=list(BUGS), default=None)
    args = p.parse_args()
    proc, upstream = start_upstream()
    try:
        asyncio.run(serve(str(args.host), args.port, upstream, args.bug))
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
