"""Start-up and shutdown: clean exit on SIGTERM with sessions open, usage errors."""

from __future__ import annotations

import time

import frames
import pytest
from frames import frame

from msgbench.serverproc import assert_usage_error


def test_sigterm_exits_cleanly_with_sessions_open(start_server):
    srv = start_server()
    conns = [frames.connect(srv.port) for _ in range(10)]
    conns[0].sendall(frame(frames.DEFAULT, b"a"))
    conns[1].sendall(frame(frames.DEFAULT, b"b" * 100)[:50])  # mid-frame
    time.sleep(0.1)
    t0 = time.monotonic()
    status = srv.terminate(timeout=5)
    took = time.monotonic() - t0
    for c in conns:
        c.close()
    assert status == 0, f"exit status {status} after SIGTERM:\n{srv.log_tail()}"
    assert took < 2.5, f"{took:.2f} s to exit after SIGTERM"


@pytest.mark.lab_cli
@pytest.mark.parametrize(
    "args",
    [["--port"], ["--port", "notaport"], ["--port", "70000"], ["--pool", "0"],
     ["--max-body", "-1"], ["--no-such-option"]],
)  # fmt: skip
def test_bad_arguments_are_a_usage_error(impl, args):
    argv = [a for a in impl.argv() if a != "{port}"]
    i = argv.index("--port")
    argv = argv[:i] + argv[i + 1 :]
    if args[0] != "--port":
        argv += ["--port", "1"]  # an otherwise valid line; the bad option is the only fault
    assert_usage_error(argv + args, impl.cwd(), f"arguments {args}")


#: Another address of this machine's loopback (Linux routes all of 127/8 there), so the test of
#: `--host` needs no namespace.
OTHER_HOST = "127.0.0.2"


@pytest.mark.lab_cli
def test_listens_on_the_given_host_and_only_there(start_server):
    """`--host ADDR` (SPEC §2): the server echoes on ADDR:PORT and listens nowhere else, as a
    driver on another host reaches it at its host's address (docs/hosts.md); one bound to every
    address (0.0.0.0) or still to 127.0.0.1 fails."""
    srv = start_server(host=OTHER_HOST)
    with frames.connect(srv.port, host=OTHER_HOST) as s:
        s.sendall(frame(frames.DEFAULT, b"on the given host"))
        got = frames.Reader(s).frame()
    assert got == (frames.REPLY, b"on the given host"), f"echo on {OTHER_HOST}: {got!r}"
    with pytest.raises(ConnectionRefusedError):
        frames.connect(srv.port, host="127.0.0.1").close()


@pytest.mark.lab_cli
@pytest.mark.parametrize("host", ["nope", "300.1.1.1", ""])
def test_bad_host_is_a_usage_error(impl, host):
    assert_usage_error(impl.argv(port=1, host=host), impl.cwd(), f"--host {host!r}")
