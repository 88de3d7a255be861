"""Talking RESP to a server under test: encoding requests, reading whole reply streams.

The differential suite never interprets replies to judge them (bytes are compared with
redis-server's); it only needs to know where a stream of replies ends. Each exchange ends with
an `ECHO <marker>` request whose reply is unique, so "the replies are complete" is "the marker's
bulk reply has arrived" — or the server closed the connection (protocol errors, QUIT).
"""

from __future__ import annotations

import os
import socket
import time

IO_TIMEOUT_S = 5.0


def command(*args: bytes | str | int) -> bytes:
    """One multibulk request: *N then N bulk strings."""
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, int):
            a = str(a)
        if isinstance(a, str):
            a = a.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(parts)


def commands(*cmds: list | tuple) -> bytes:
    return b"".join(command(*c) for c in cmds)


def connect(port: int, timeout: float = IO_TIMEOUT_S, host: str = "127.0.0.1") -> socket.socket:
    s = socket.create_connection((host, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def new_marker() -> bytes:
    return b"msgbench-end-" + os.urandom(8).hex().encode()


def marker_reply(marker: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(marker), marker)


def read_until(
    sock: socket.socket, end: bytes, timeout: float = IO_TIMEOUT_S
) -> tuple[bytes, bool]:
    """Read until the buffer ends with `end` or the peer closes; (bytes, closed)."""
    buf = bytearray()
    deadline = time.monotonic() + timeout
    while not buf.endswith(end):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no complete reply within {timeout} s; got {bytes(buf[-200:])!r}")
        sock.settimeout(left)
        try:
            chunk = sock.recv(1 << 20)
        except ConnectionResetError:
            return bytes(buf), True
        if not chunk:
            return bytes(buf), True
        buf += chunk
    return bytes(buf), False


def exchange(
    port: int, parts: list[bytes], pause_s: float = 0.0, setget_marker: bool = False
) -> tuple[bytes, bool]:
    """Send `parts` (each its own write, `pause_s` apart) then the marker; return every reply
    byte before the marker's reply, and whether the server closed the connection instead.
    The marker is ECHO <marker>, or with setget_marker SET then GET of a key of its own (for a
    server that knows only SET and GET, such as mini-redis): its replies end the stream."""
    marker = new_marker()
    end = marker_reply(marker)
    marker_request = command("ECHO", marker)
    if setget_marker:
        marker_request = command("SET", marker, marker) + command("GET", marker)
        end = b"+OK\r\n" + end
    with connect(port) as s:
        for i, p in enumerate(parts):
            if i and pause_s:
                time.sleep(pause_s)
            try:
                s.sendall(p)
            except (BrokenPipeError, ConnectionResetError):
                break
        try:
            s.sendall(marker_request)
        except (BrokenPipeError, ConnectionResetError):
            pass
        data, closed = read_until(s, end)
    if not closed:
        data = data[: -len(end)]
    return data, closed


def until_closed(port: int, stream: bytes, timeout: float = 5.0) -> tuple[bytes, bool]:
    """Send `stream` alone and read until the server closes the connection (or `timeout`):
    for requests that must end the connection, where a marker request could change the error."""
    with connect(port) as s:
        try:
            s.sendall(stream)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            return read_until(s, b"\x00never-sent\x00", timeout)
        except TimeoutError:
            return b"", False


def call(port: int, *args, setget_marker: bool = False) -> bytes:
    """One request, its raw reply bytes."""
    data, closed = exchange(port, [command(*args)], setget_marker=setget_marker)
    assert not closed, f"server closed the connection on {args!r}"
    return data


def flushall(port: int) -> None:
    """FLUSHALL on a connection of its own (no marker: the floor answers +OK to anything)."""
    with connect(port) as s:
        s.sendall(command("FLUSHALL"))
        data, closed = read_until(s, b"\r\n")
    assert data == b"+OK\r\n", f"FLUSHALL answered {data!r}"


class Reader:
    """A small RESP2 reply parser for the tests that look inside replies (property checks)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _line(self) -> bytes:
        end = self.data.index(b"\r\n", self.pos)
        line = self.data[self.pos : end]
        self.pos = end + 2
        return line

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            value = self.data[self.pos : self.pos + n]
            self.pos += n + 2
            return value
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise ValueError(f"not a RESP2 reply: {line!r}")

    def all(self) -> list:
        out = []
        while self.pos < len(self.data):
            out.append(self.reply())
        return out


def parse(data: bytes) -> list:
    return Reader(data).all()
