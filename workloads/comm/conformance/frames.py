"""The comm wire format (SPEC §1) and a socket helper that never hangs.

A frame is 1 type byte, an 8-byte big-endian body length, then the body.
"""

from __future__ import annotations

import socket
import struct
import threading
import time

DEFAULT, TEXT, REPLY, END, QUIT, FLUSH, STRING, BINARY = 0, 1, 2, 4, 8, 16, 64, 128
HEADER = struct.Struct(">BQ")
IO_TIMEOUT_S = 10.0


def frame(kind: int, body: bytes = b"") -> bytes:
    return HEADER.pack(kind, len(body)) + body


def pattern(client: int, message: int, size: int) -> bytes:
    """The body pattern of SPEC §3: byte i = (c * 7 + m * 13 + i) mod 251."""
    start = (client * 7 + message * 13) % 251
    cycle = bytes((start + i) % 251 for i in range(251))
    reps = size // 251 + 1
    return (cycle * reps)[:size]


def connect(port: int, timeout: float = IO_TIMEOUT_S, host: str = "127.0.0.1") -> socket.socket:
    s = socket.create_connection((host, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def send_in_background(sock: socket.socket, data: bytes) -> threading.Thread:
    """sendall from a thread, so the caller can read replies meanwhile: a server that stops
    reading while its replies are not being read (back-pressure) must not deadlock the test."""
    t = threading.Thread(target=_send_quietly, args=(sock, data), daemon=True)
    t.start()
    return t


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    try:
        sock.sendall(data)
    except OSError:
        pass  # the reader reports what went wrong


class Reader:
    """Reads frames from a socket with a deadline per call; EOF is reported, never hangs."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.eof = False

    def _fill(self, n: int, deadline: float) -> bool:
        while len(self.buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"waited for {n} bytes, have {len(self.buf)}")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 20)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                self.eof = True
                return False
            self.buf += chunk
        return True

    def frame(self, timeout: float = IO_TIMEOUT_S) -> tuple[int, bytes] | None:
        """The next frame, or None at EOF (a partial frame before EOF is an error)."""
        deadline = time.monotonic() + timeout
        if not self._fill(HEADER.size, deadline):
            assert not self.buf, f"EOF inside a reply header: {bytes(self.buf)!r}"
            return None
        kind, length = HEADER.unpack_from(self.buf)
        if not self._fill(HEADER.size + length, deadline):
            raise AssertionError(f"EOF inside a reply body of {length} bytes")
        body = bytes(self.buf[HEADER.size : HEADER.size + length])
        del self.buf[: HEADER.size + length]
        return kind, body

    def eof_next(self, timeout: float = IO_TIMEOUT_S) -> bool:
        """True if the peer closes without sending anything more."""
        deadline = time.monotonic() + timeout
        return not self._fill(len(self.buf) + 1, deadline) and not self.buf


def session_end(reader: Reader, timeout: float = IO_TIMEOUT_S) -> str:
    """After the last reply: "END" (an END frame then EOF) or "EOF"; anything else fails."""
    f = reader.frame(timeout)
    if f is None:
        return "EOF"
    assert f == (END, b""), f"expected END or EOF, got type {f[0]} with {len(f[1])} bytes"
    assert reader.eof_next(timeout), "the server did not close after END"
    return "END"
