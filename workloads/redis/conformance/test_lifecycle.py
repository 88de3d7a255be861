"""Start-up and shutdown: a clean exit on SIGTERM with clients connected, a usage error for
bad arguments, and every connection's descriptor released when its client goes, whatever it
left unsent."""

from __future__ import annotations

import os
import socket
import struct
import time

import pytest
import resp
from resp import command

from msgbench.serverproc import assert_usage_error


def test_sigterm_exits_cleanly_with_clients_connected(fresh_server):
    clients = [resp.connect(fresh_server.port) for _ in range(20)]
    clients[0].sendall(command("SET", "a", "1"))
    resp.read_until(clients[0], b"+OK\r\n")
    clients[1].sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$10\r\nabc")  # mid-request
    t0 = time.monotonic()
    status = fresh_server.terminate(timeout=5)
    took = time.monotonic() - t0
    for c in clients:
        c.close()
    assert status == 0, f"exit status {status} after SIGTERM:\n{fresh_server.log_tail()}"
    assert took < 2.0, f"took {took:.2f} s to exit after SIGTERM"


def _descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.parametrize("how", ["fin", "rst"])
def test_a_client_that_closes_mid_request_releases_its_descriptor(fresh_server, how):
    """Part of a request, then the client goes (a FIN, or an RST): the server must close that
    socket too. An edge-triggered loop that reads once and misses the close keeps it forever
    (one descriptor per such client: found by the soak, issue 12)."""

    def clients_that_go(n: int) -> None:
        for _ in range(n):
            s = resp.connect(fresh_server.port)
            s.sendall(b"*1\r\n$4\r\nPI")
            if how == "rst":
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()

    def settled() -> int:
        """The count once the server has had up to 10 s to close what the clients left."""
        deadline = time.monotonic() + 10
        while (n := _descriptors(fresh_server.pid)) > before + 5 and time.monotonic() < deadline:
            time.sleep(0.1)
        return n

    # A few first: whatever the server allocates once on this path (a runtime's lazy
    # descriptors) is then in `before`; a leak grows with the number of clients.
    before = 10**9
    clients_that_go(5)
    before = settled()
    clients_that_go(50)
    after = settled()
    assert after <= before + 5, f"{after - before} descriptors kept after 50 clients went"


@pytest.mark.lab_cli
@pytest.mark.parametrize(
    "args", [["--port"], ["--port", "notaport"], ["--port", "70000"], ["--no-such-option"]]
)
def test_bad_arguments_are_a_usage_error(impl, args):
    argv = [a for a in impl.argv() if a != "{port}"]
    i = argv.index("--port")
    assert_usage_error(argv[:i] + argv[i + 1 :] + args, impl.cwd(), f"arguments {args}")


#: Another address of this machine's loopback (Linux routes all of 127/8 there), so the test of
#: `--host` needs no namespace.
OTHER_HOST = "127.0.0.2"


def test_listens_on_the_given_host_and_only_there(start_server):
    """`--host ADDR` (SPEC §1): the server answers on ADDR:PORT and nowhere else, as a driver on
    another host reaches it at its host's address (docs/hosts.md); one bound to every address
    (0.0.0.0) or still to 127.0.0.1 fails."""
    srv = start_server(host=OTHER_HOST)
    with resp.connect(srv.port, host=OTHER_HOST) as s:
        s.sendall(command("PING"))
        data, closed = resp.read_until(s, b"\r\n")
    # +PONG, or the floor's +OK to everything
    assert data in (b"+PONG\r\n", b"+OK\r\n") and not closed, f"PING on {OTHER_HOST}: {data!r}"
    with pytest.raises(ConnectionRefusedError):
        resp.connect(srv.port, host="127.0.0.1").close()


@pytest.mark.lab_cli
@pytest.mark.parametrize("host", ["nope", "300.1.1.1", ""])
def test_bad_host_is_a_usage_error(impl, host):
    assert_usage_error(impl.argv(port=1, host=host), impl.cwd(), f"--host {host!r}")
