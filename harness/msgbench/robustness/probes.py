"""The hostile clients: each probe attacks a server for a while from a process of its own.

A probe is a function `probe(target, seconds, seed) -> dict of counters`, run in a child process
(so that its sockets and CPU never share an interpreter with the well-behaved client whose latency
is measured meanwhile). `target` carries the endpoint and the protocol's hostile material from
the workload's adapter (robustness.py). Probes never judge; they count what happened (sent,
connections, resets, replies seen, closes by the server) and the runner judges the server.
"""

from __future__ import annotations

import contextlib
import errno
import random
import resource
import select
import socket
import struct
import time
from dataclasses import dataclass, field

IO_TIMEOUT_S = 2.0


@dataclass
class Target:
    """What a probe needs, picklable: where the server is and the protocol's bytes."""

    transport: str  # tcp | udp
    host: str
    port: int
    request: bytes  # one complete, valid request with a reply
    partial: bytes  # a request cut in the middle of a frame
    huge: dict[str, bytes]  # declared lengths and counts up to 2^63, by name
    flood: bytes  # a request with a large reply, pipelined by a client that never reads
    flood_setup: bytes = b""  # sent (and its replies read) once before the flood
    connections: int = 1000  # idle connections the SPEC's cap asks for
    extra: dict = field(default_factory=dict)


def _connect(t: Target, timeout: float = IO_TIMEOUT_S) -> socket.socket:
    s = socket.create_connection((t.host, t.port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def _reset(s: socket.socket) -> None:
    """Close with an RST instead of a FIN (SO_LINGER 0): an abrupt disconnect."""
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def _read_some(s: socket.socket, wait: float) -> tuple[int, bool]:
    """Bytes read within `wait` seconds, and whether the server closed the connection."""
    got, deadline = 0, time.monotonic() + wait
    s.setblocking(False)
    while time.monotonic() < deadline:
        ready, _, _ = select.select([s], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        try:
            data = s.recv(1 << 16)
        except BlockingIOError:
            continue
        except OSError:
            return got, True
        if not data:
            return got, True
        got += len(data)
    return got, False


# ---- TCP probes -----------------------------------------------------------------------------


def slow_sender(t: Target, seconds: float, seed: int) -> dict:
    """Clients that send valid requests one byte at a time (10 ms apart) and read the replies:
    the server must not block on them, and must answer each once it is whole."""
    n = 32
    socks = [_connect(t) for _ in range(n)]
    sent = replies = 0
    end = time.monotonic() + seconds
    pos = 0
    while time.monotonic() < end:
        for s in socks:
            with contextlib.suppress(OSError):
                s.send(t.request[pos : pos + 1])
                sent += 1
        pos += 1
        if pos == len(t.request):
            for s in socks:
                got, _ = _read_some(s, 0.5)
                replies += got > 0
                s.setblocking(True)
            pos = 0
        time.sleep(0.01)
    for s in socks:
        s.close()
    return {"clients": n, "bytes_sent": sent, "requests_answered": replies}


def _raise_nofile() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def idle_connections(t: Target, seconds: float, seed: int) -> dict:
    """Thousands of connections that connect and say nothing, held for the whole window."""
    limit = _raise_nofile()
    wanted = min(t.connections, limit - 64)
    socks, refused = [], 0
    for _ in range(wanted):
        try:
            socks.append(_connect(t, timeout=5.0))
        except OSError:
            refused += 1
            if refused > 50:
                break
    # Each still open (not reset by the server) at the end of the window?
    time.sleep(max(0.0, seconds - 0.5))
    alive = 0
    for s in socks:
        s.setblocking(False)
        try:
            alive += s.recv(1) != b""
        except BlockingIOError:
            alive += 1  # nothing to read and not closed: still connected
        except OSError:
            pass
        s.close()
    return {"wanted": t.connections, "own_fd_limit": limit, "opened": len(socks),
            "refused": refused, "still_open": alive}  # fmt: skip


def reset_mid_frame(t: Target, seconds: float, seed: int) -> dict:
    """Connect, send half a frame, close with an RST; as fast as possible."""
    n = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            s = _connect(t)
            s.sendall(t.partial)
            _reset(s)
            n += 1
        except OSError:
            time.sleep(0.01)
    return {"resets": n}


def half_close(t: Target, seconds: float, seed: int) -> dict:
    """Send a whole request, shut down the sending side, read until the server closes: the reply
    must still come (a half-close is not an abort)."""
    n = answered = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            s = _connect(t)
            s.sendall(t.request)
            s.shutdown(socket.SHUT_WR)
            got, _ = _read_some(s, IO_TIMEOUT_S)
            s.close()
            n += 1
            answered += got > 0
        except OSError:
            time.sleep(0.01)
    return {"half_closes": n, "answered": answered}


def declared_huge(t: Target, seconds: float, seed: int) -> dict:
    """Headers that declare lengths and counts up to 2^63, each followed by silence: the server
    must refuse or wait without allocating what was declared."""
    counts = dict.fromkeys(t.huge, 0)
    closed = dict.fromkeys(t.huge, 0)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for name, data in t.huge.items():
            try:
                s = _connect(t)
                s.sendall(data)
                _, was_closed = _read_some(s, 0.2)
                closed[name] += was_closed
                s.close()
                counts[name] += 1
            except OSError:
                time.sleep(0.01)
    return {"sent": counts, "closed_by_server": closed}


def flood_no_read(t: Target, seconds: float, seed: int) -> dict:
    """Clients that pipeline requests with large replies and never read one: the server must
    bound what it holds for them (its output cap, or by not reading)."""
    n = 2
    if t.flood_setup:
        with _connect(t) as s:
            s.sendall(t.flood_setup)
            _read_some(s, 1.0)
    socks = [_connect(t) for _ in range(n)]
    for s in socks:
        s.setblocking(False)
    sent = 0
    closed = 0
    block = t.flood * max(1, 65536 // max(1, len(t.flood)))
    end = time.monotonic() + seconds
    live = list(socks)
    while time.monotonic() < end and live:
        _, writable, _ = select.select([], live, [], 0.05)
        for s in writable:
            try:
                sent += s.send(block)
            except BlockingIOError:
                pass
            except OSError:
                live.remove(s)
                closed += 1
    for s in socks:
        with contextlib.suppress(OSError):
            _reset(s)
    return {"clients": n, "bytes_sent": sent, "closed_by_server": closed}


def garbage(t: Target, seconds: float, seed: int) -> dict:
    """Random bytes on many connections, reconnecting whenever the server closes one."""
    rng = random.Random(seed)
    sent = reconnects = 0
    end = time.monotonic() + seconds
    socks: list[socket.socket] = []
    while time.monotonic() < end:
        while len(socks) < 8:
            try:
                socks.append(_connect(t))
                reconnects += 1
            except OSError:
                time.sleep(0.01)
                break
        for s in list(socks):
            data = rng.randbytes(rng.choice((1, 16, 512, 4096)))
            try:
                s.setblocking(False)
                sent += s.send(data)
            except BlockingIOError:
                pass
            except OSError:
                socks.remove(s)
                s.close()
        time.sleep(0.001)
    for s in socks:
        s.close()
    return {"bytes_sent": sent, "connections": reconnects}


# ---- UDP probes -----------------------------------------------------------------------------


def udp_flood(t: Target, seconds: float, seed: int) -> dict:
    """Datagrams as fast as one process can send: garbage of every size, and valid requests
    whose replies are never read (the node must keep answering the measured client)."""
    rng = random.Random(seed)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((t.extra.get("attacker_addr", "127.0.0.1"), 0))
    sent = dropped = 0
    end = time.monotonic() + seconds
    sizes = (0, 1, 12, 14, 64, 512, 1472, 65507)
    while time.monotonic() < end:
        for _ in range(64):
            data = t.request if rng.random() < 0.3 else rng.randbytes(rng.choice(sizes))
            try:
                s.sendto(data, (t.host, t.port))
                sent += 1
            except OSError as e:
                if e.errno not in (errno.ENOBUFS, errno.EAGAIN):
                    raise
                dropped += 1
    s.close()
    return {"datagrams_sent": sent, "send_errors": dropped}


TCP_PROBES = {
    "slow-sender": slow_sender,
    "idle-connections": idle_connections,
    "reset-mid-frame": reset_mid_frame,
    "half-close": half_close,
    "declared-huge": declared_huge,
    "flood-no-read": flood_no_read,
    "garbage": garbage,
}
UDP_PROBES = {"udp-flood": udp_flood}
