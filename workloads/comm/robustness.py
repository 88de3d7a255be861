"""The comm server's part in the hostile-client suite (msgbench.robustness): how to start a
server, a well-behaved client, and the hostile bytes of its wire format (SPEC §1-§2)."""

from __future__ import annotations

import socket
import struct

from msgbench.robustness import probes
from msgbench.robustness.hostile import Endpoint, loopback_server

TRANSPORT = "tcp"
HEADER = struct.Struct(">BQ")
DEFAULT, REPLY = 0, 2


def frame(kind: int, body: bytes) -> bytes:
    return HEADER.pack(kind, len(body)) + body


server = loopback_server  # the server on a free loopback port, pinned


class Client:
    """One 64-byte message at a time on one connection; the reply must echo it as REPLY."""

    def __init__(self, ep: Endpoint) -> None:
        self.sock = socket.create_connection((ep.host, ep.port), timeout=probes.IO_TIMEOUT_S)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.n = 0

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("server closed the connection")
            data += chunk
        return data

    def exchange(self) -> None:
        self.n += 1
        body = (b"%08d" % self.n) * 8
        self.sock.sendall(frame(DEFAULT, body))
        kind, length = HEADER.unpack(self._read(HEADER.size))
        got = self._read(length) if length <= len(body) else b""
        if kind != REPLY or got != body:
            raise ValueError(f"expected REPLY {body[:8]!r}…, got type {kind} length {length}")

    def close(self) -> None:
        self.sock.close()


def target(ep: Endpoint, w) -> probes.Target:
    return probes.Target(
        transport=TRANSPORT, host=ep.host, port=ep.port,
        request=frame(DEFAULT, b"hostile" * 10),
        partial=HEADER.pack(DEFAULT, 1000) + b"x" * 500,
        huge={
            "length-2^63": HEADER.pack(DEFAULT, 2**63),
            "length-2^64-1": HEADER.pack(DEFAULT, 2**64 - 1),
            "length-cap+1": HEADER.pack(DEFAULT, 64 * 1024 * 1024 + 1),
            "length-cap": HEADER.pack(DEFAULT, 64 * 1024 * 1024),
        },
        flood=frame(DEFAULT, b"f" * 65536),
        connections=int(w.robustness.get("connections", 1000)),
    )  # fmt: skip
