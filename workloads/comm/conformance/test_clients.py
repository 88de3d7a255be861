"""Many concurrent clients, each with its own session, all served at once."""

from __future__ import annotations

import threading

import frames
import pytest
from frames import Reader, frame


@pytest.mark.parametrize("clients", [16, 256])
def test_concurrent_clients(server, clients):
    errors: list[str] = []
    ready = threading.Barrier(clients)
    socks = []

    def client(c: int) -> None:
        try:
            with frames.connect(server.port) as s:
                socks.append(s)
                ready.wait(30)  # all connected at once before anyone sends
                bodies = [frames.pattern(c, m, 4096) for m in range(20)]
                s.sendall(b"".join(frame(frames.DEFAULT, b) for b in bodies) + frame(frames.END))
                r = Reader(s)
                for m, b in enumerate(bodies):
                    got = r.frame(30)
                    if got != (frames.REPLY, b):
                        errors.append(f"client {c} message {m}: wrong reply")
                        return
                if frames.session_end(r, 30) != "END":
                    errors.append(f"client {c}: no END")
        except Exception as e:  # reported with the client's number
            errors.append(f"client {c}: {e!r}")

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert not errors, errors[:5]
    assert server.alive()


def test_all_clients_served_before_any_finishes(server):
    """Twelve clients each send one message and wait for its reply before ending: a server that
    binds a fixed pool of 8 threads to whole sessions answers only 8 and stalls the rest."""
    conns = [frames.connect(server.port) for _ in range(12)]
    try:
        for i, s in enumerate(conns):
            s.sendall(frame(frames.DEFAULT, b"hello %d" % i))
        for i, s in enumerate(conns):
            assert Reader(s).frame(5) == (frames.REPLY, b"hello %d" % i), f"client {i} starved"
    finally:
        for s in conns:
            s.close()
