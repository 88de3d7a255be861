"""The comm echo server: `python -E -S server_main.py --port PORT [--host ADDR] [--pool N]
[--max-body BYTES]`.

Listens on ADDR:PORT and only there (--host: an IPv4 address literal, default 127.0.0.1);
--pool worker threads (default 8), each an asyncio event loop, serve the accepted connections;
--max-body (default 64 MiB) caps a message body. Standard library only. Bad arguments: one line
on stderr, exit status 2. SIGTERM or SIGINT: stop accepting, close the connections, exit 0.
Nothing on stdout; one stderr line per refused connection.
"""

from __future__ import annotations

import asyncio
import ipaddress
import resource
import signal
import sys

from frame import DEFAULT_MAX_BODY, MAX_LENGTH
from listener import HOST, Listener

PROGRAM = "comm-python-server"
USAGE = "usage: server_main.py --port PORT [--host ADDR] [--pool N] [--max-body BYTES]"
MAX_POOL = 1024


class UsageError(Exception):
    pass


def _number(option: str, text: str, lo: int, hi: int) -> int:
    # int() would also take "+5", " 5", "5_000" and "٥": only plain ASCII digits are numbers.
    if not (text.isascii() and text.isdigit()) or not lo <= int(text) <= hi:
        raise UsageError(f"bad {option} {text!r}: expected an integer from {lo} to {hi}")
    return int(text)


def _host(text: str) -> str:
    # An IPv4 literal only: no names, and not "" (which socket would bind to every address).
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        raise UsageError(f"bad --host {text!r}: expected an IPv4 address") from None


def parse_args(args: list[str]) -> tuple[int, int, int, str]:
    """(port, pool, max_body, host) from the command line; UsageError if it is not valid."""
    values = {"--port": None, "--host": HOST, "--pool": "8", "--max-body": str(DEFAULT_MAX_BODY)}
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if name not in values:
            raise UsageError(f"unknown argument {arg!r}")
        if not eq:
            if i + 1 >= len(args):
                raise UsageError(f"{name} needs a value")
            i += 1
            value = args[i]
        values[name] = value
        i += 1
    if values["--port"] is None:
        raise UsageError("--port is required")
    return (
        _number("--port", values["--port"], 1, 65535),
        _number("--pool", values["--pool"], 1, MAX_POOL),
        _number("--max-body", values["--max-body"], 0, MAX_LENGTH),
        _host(values["--host"]),
    )


def raise_open_file_limit() -> None:
    """Hundreds of clients need as many descriptors: lift the soft limit to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass


def log(line: str) -> None:
    sys.stderr.write(f"{PROGRAM}: {line}\n")
    sys.stderr.flush()


async def serve(listener: Listener) -> None:
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: stop.done() or stop.set_result(None))
    await listener.serve(stop)


def main(argv: list[str]) -> int:
    try:
        port, pool, max_body, host = parse_args(argv)
    except UsageError as e:
        sys.stderr.write(f"{PROGRAM}: {e} ({USAGE})\n")
        return 2
    raise_open_file_limit()
    try:
        listener = Listener(port, pool, max_body, log, host)
    except OSError as e:
        log(f"cannot listen on {host}:{port}: {e.strerror or e}")
        return 1
    asyncio.run(serve(listener))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
