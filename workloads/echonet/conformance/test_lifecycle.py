"""The node program (SPEC §7): READY once bound, one line of JSON counters and exit 0 on SIGTERM
or SIGINT, exit 2 on a bad command line, exit 1 when the address is taken, --help."""

from __future__ import annotations

import signal
import subprocess
import time

import echonet_procs as P
import echonet_spec as S
import pytest


def test_ready_means_bound(fresh_node, peer):
    """READY is the first line, and a Get sent the moment it appears is answered."""
    n = fresh_node()
    assert n.stdout_lines == ["READY\n"], n.stdout_lines
    req = S.get_request(1, S.NODE_PROFILE, [0x80])
    assert peer.ask(n.addr, req) == S.get_reply(req, S.NODE_PROFILE, {0x80: b"\x30"}, [0x80])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_prints_counters_and_exits_0(fresh_node, peer, sig):
    n = fresh_node()
    for tid in range(1, 6):
        req = S.get_request(tid, S.NODE_PROFILE, [0xD6])
        peer.ask(n.addr, req)
    t0 = time.monotonic()
    status, lines = n.stop(sig)
    took = time.monotonic() - t0
    assert status == 0, f"exit status {status} after {sig.name}:\n{n.stderr_tail()}"
    assert took < 2.0, f"{took:.2f} s to exit after {sig.name}"
    c = P.parse_counters(lines)
    # Five Gets were asked and answered; a node bound to a unicast address receives nothing else.
    assert (c["received"], c["requests"], c["replies"]) == (5, 5, 5), c


def test_idle_node_counts_nothing(fresh_node):
    c = fresh_node().counters()
    assert (c["received"], c["requests"], c["replies"]) == (0, 0, 0), c
    assert c["send_errors"] <= 1, c  # at most the start INF (no multicast route)


@pytest.mark.parametrize("how", ["bind-only", "ifaddr-apart", "other-port"])
def test_address_in_0x83_and_port_follow_the_command_line(impl, peer, how):
    """ADDR in 0x83 is --ifaddr, else --bind (SPEC §5); --port moves the node."""
    bind, ifaddr = P.fresh_addr(), P.fresh_addr()
    port = 3611 if how == "other-port" else S.PORT
    args = {"bind-only": ["--bind", bind],
            "ifaddr-apart": ["--bind", bind, "--ifaddr", ifaddr],
            "other-port": ["--bind", bind, "--port", str(port)]}[how]  # fmt: skip
    n = P.Node(impl.argv(), impl.cwd(), addr=bind, args=args)
    try:
        req = S.get_request(0x0201, S.NODE_PROFILE, [0x83])
        peer.send(bind, req, port)
        got = peer.recv(1.0)
        assert got is not None, f"no reply from {bind}:{port} ({' '.join(args)})"
        addr = ifaddr if how == "ifaddr-apart" else bind
        want = S.get_reply(req, S.NODE_PROFILE, S.node_profile(addr), [0x83])
        assert got[0] == want, f"{' '.join(args)}: 0x83 should end with {addr}: {got[0].hex(' ')}"
        assert got[1] == (bind, port), f"reply from {got[1]}"
    finally:
        n.kill()


@pytest.mark.semantics
def test_counters_are_exact(fresh_node, peer):
    """Each kind of datagram lands in its own counter, and a successful SetI sends nothing."""
    n = fresh_node()
    get = S.get_request(1, S.NODE_PROFILE, [0x80])
    peer.ask(n.addr, get)  # request, reply
    peer.send(n.addr, S.frame(2, S.CONTROLLER, S.AIRCON, S.SETI, [(0x81, b"\x07")]))  # no reply
    peer.send(n.addr, S.frame(3, S.CONTROLLER, 0x029001, S.GET, [(0x80, b"")]))  # ignored
    peer.send(n.addr, S.frame(4, S.CONTROLLER, S.NODE_PROFILE, S.GET_RES, [(0x80, b"\x30")]))
    peer.send(n.addr, b"\x10\x81\x00")  # malformed
    peer.send(n.addr, b"\x10\x82\x00\x05" + bytes(20))  # format 2
    peer.fence(n.addr)  # request, reply
    c = n.counters()
    want = {"received": 7, "requests": 3, "replies": 2, "ignored": 2, "dropped_malformed": 1,
            "dropped_format2": 1}  # fmt: skip
    assert {k: c[k] for k in want} == want, c


@pytest.mark.parametrize(
    "args",
    [["--bind", "not-an-address"], ["--bind", "256.1.2.3"], ["--bind", "1.2.3"],
     ["--ifaddr", "1.2.3.4.5"], ["--port", "0"], ["--port", "65536"], ["--port", "x"],
     ["--port"], ["--no-such-option"], ["extra-argument"]],
    ids=["bind-word", "bind-256", "bind-3-parts", "ifaddr-5-parts", "port-0", "port-65536",
         "port-word", "port-missing", "unknown-option", "positional"],
)  # fmt: skip
def test_bad_command_line_exits_2(impl, args):
    """The bad option is the only fault of an otherwise valid line."""
    own = {"--bind": P.fresh_addr(), "--port": "3610"}
    own.pop(args[0], None)
    argv = impl.argv() + [w for kv in own.items() for w in kv] + args
    try:
        p = subprocess.run(argv, cwd=impl.cwd(), capture_output=True, text=True, timeout=5,
                           stdin=subprocess.DEVNULL)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the node started with a bad command line: {argv}") from None
    assert p.returncode == 2, f"exit status {p.returncode} for {args}: {p.stderr!r}"
    assert p.stderr.strip(), "no message on stderr"
    assert "READY" not in p.stdout


def test_help_exits_0(impl):
    p = subprocess.run(impl.argv() + ["--help"], cwd=impl.cwd(), capture_output=True, text=True,
                       timeout=5, stdin=subprocess.DEVNULL)  # fmt: skip
    assert p.returncode == 0, f"--help: exit status {p.returncode}: {p.stderr!r}"
    assert "--bind" in p.stdout, f"--help prints no usage on stdout: {p.stdout!r}"


def test_address_in_use_exits_1(impl):
    with P.Peer(S.PORT) as squatter:  # ADDR:3610 taken by the test
        argv = impl.argv() + ["--bind", squatter.addr, "--port", str(S.PORT)]
        try:
            p = subprocess.run(argv, cwd=impl.cwd(), capture_output=True, text=True, timeout=5,
                               stdin=subprocess.DEVNULL)  # fmt: skip
        except subprocess.TimeoutExpired:
            raise AssertionError("the node kept running on an address in use") from None
    assert p.returncode == 1, f"exit status {p.returncode}: {p.stderr!r}"
    assert p.stderr.strip(), "no message on stderr"
    assert "READY" not in p.stdout
