"""The hostile-client suite's judgement on two small servers of known behaviour: one that
survives garbage, one that dies of it, and one that allocates what a header declares. The
suite must call the first held and the others not (timings are recorded, never asserted)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import textwrap
import time
from types import SimpleNamespace

import pytest

from msgbench.robustness import hostile, probes

# A line server: "PING\n" -> "+PONG\n". MODE decides how it meets anything else.
SERVER = textwrap.dedent("""
    import selectors, socket, sys
    mode = sys.argv[1]
    lsock = socket.socket(); lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", 0)); lsock.listen(512); lsock.setblocking(False)
    print(lsock.getsockname()[1], flush=True)
    sel = selectors.DefaultSelector(); sel.register(lsock, selectors.EVENT_READ)
    bufs, hoard = {}, []
    while True:
        for key, _ in sel.select():
            if key.fileobj is lsock:
                c, _ = lsock.accept(); c.setblocking(False)
                sel.register(c, selectors.EVENT_READ); bufs[c] = b""
                continue
            c = key.fileobj
            try:
                data = c.recv(65536)
            except OSError:
                data = b""
            if not data:
                sel.unregister(c); c.close(); bufs.pop(c, None); continue
            bufs[c] += data
            while b"\\n" in bufs[c]:
                line, bufs[c] = bufs[c].split(b"\\n", 1)
                if line == b"PING":
                    c.send(b"+PONG\\n")
                elif mode == "fragile":
                    sys.exit(3)                     # one bad line kills the server
                elif mode == "hoarder" and line.startswith(b"$"):
                    hoard.append(bytearray(min(int(line[1:]), 200 << 20)))  # trusts the header
            if len(bufs[c]) > 4096:
                bufs[c] = b""                       # garbage without newlines: dropped
""")


class Client:
    def __init__(self, ep):
        self.s = socket.create_connection((ep.host, ep.port), timeout=2)

    def exchange(self):
        self.s.sendall(b"PING\n")
        if self.s.recv(16) != b"+PONG\n":
            raise ValueError("no PONG")

    def close(self):
        self.s.close()


def adapter(mode: str) -> SimpleNamespace:
    @contextlib.contextmanager
    def server(impl, cpu):
        p = subprocess.Popen([sys.executable, "-c", SERVER, mode], stdout=subprocess.PIPE)
        port = int(p.stdout.readline())
        try:
            yield hostile.Endpoint("127.0.0.1", port, p.pid, lambda: p.poll() is None)
        finally:
            p.kill()
            p.wait()

    def target(ep, w):
        return probes.Target(
            transport="tcp", host=ep.host, port=ep.port, request=b"PING\n", partial=b"PI",
            huge={"declared-100MiB": b"$104857600\n"}, flood=b"PING\n", connections=50,
        )  # fmt: skip

    return SimpleNamespace(TRANSPORT="tcp", server=server, Client=Client, target=target)


def attack(mode: str, probe: str) -> hostile.ProbeResult:
    mod = adapter(mode)
    w = SimpleNamespace(name="toy", robustness={})
    with mod.server(None, 0) as ep:
        time.sleep(0.1)
        return hostile.run_probe(mod, ep, probe, probes.TCP_PROBES[probe], 1.5, 1,
                                 cap_kb=64 * 1024, w=w, impl=SimpleNamespace(id=mode))  # fmt: skip


def test_a_sturdy_server_holds_garbage_and_its_client_is_served():
    r = attack("sturdy", "garbage")
    assert r.held, r
    assert r.server_alive and r.served_after
    assert r.client["requests"] > 0 and r.client["failures"] == 0
    assert r.attack["bytes_sent"] > 0


def test_a_server_killed_by_garbage_is_not_held():
    r = attack("fragile", "garbage")
    assert not r.held
    assert not r.server_alive


@pytest.mark.parametrize("probe", ["declared-huge"])
def test_a_server_that_allocates_what_a_header_declares_is_not_held(probe):
    r = attack("hoarder", probe)
    assert not r.held
    assert r.rss_growth_kb > r.cap_kb, r


def test_idle_connections_are_counted():
    r = attack("sturdy", "idle-connections")
    assert r.attack["opened"] == 50 and r.attack["still_open"] == 50
    assert r.held
