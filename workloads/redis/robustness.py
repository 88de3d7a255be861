"""The redis server's part in the hostile-client suite (msgbench.robustness): how to start a
server, a well-behaved client, and the hostile bytes of RESP (SPEC §2's limits)."""

from __future__ import annotations

import socket

from msgbench.robustness import probes
from msgbench.robustness.hostile import Endpoint, loopback_server

TRANSPORT = "tcp"


def command(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


server = loopback_server  # the server on a free loopback port, pinned


class Client:
    """PING, one at a time; the reply must be one simple-string line (the floor answers +OK to
    everything, a key-value server +PONG)."""

    def __init__(self, ep: Endpoint) -> None:
        self.sock = socket.create_connection((ep.host, ep.port), timeout=probes.IO_TIMEOUT_S)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def exchange(self) -> None:
        self.sock.sendall(command(b"PING"))
        reply = b""
        while not reply.endswith(b"\r\n"):
            chunk = self.sock.recv(64)
            if not chunk:
                raise ConnectionError("server closed the connection")
            reply += chunk
        if not reply.startswith(b"+"):
            raise ValueError(f"unexpected reply {reply[:40]!r}")

    def close(self) -> None:
        self.sock.close()


BIG = 1 << 20  # the value whose GET replies flood a client that never reads


def target(ep: Endpoint, w) -> probes.Target:
    return probes.Target(
        transport=TRANSPORT, host=ep.host, port=ep.port,
        request=command(b"SET", b"hostile", b"value") + command(b"GET", b"hostile"),
        partial=b"*3\r\n$3\r\nSET\r\n$5\r\nhel",
        huge={
            "multibulk-count-2^63": b"*9223372036854775807\r\n",
            "multibulk-count-2^31-1": b"*2147483647\r\n",
            "bulk-length-2^63": b"*1\r\n$9223372036854775807\r\n",
            "bulk-length-512MiB": b"*2\r\n$3\r\nSET\r\n$536870912\r\n",
            "inline-64KiB-no-newline": b"P" * 65536,
        },
        flood=command(b"GET", b"big"),
        flood_setup=command(b"SET", b"big", b"x" * BIG),
        connections=int(w.robustness.get("connections", 1000)),
    )  # fmt: skip
