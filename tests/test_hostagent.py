"""The host agent (msgbench.hostagent, docs/hosts.md): it starts, measures and stops an
implementation for a driver on another host, answers only its token, refuses what it cannot
do with a sentence, and leaves nothing running when its driver or its runner goes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from msgbench import hostagent, paths
from msgbench.hostagent import AgentClient, AgentError

TOKEN = "t" * 32
# A small server: listens on 127.0.0.1:PORT, spins a little CPU per connection, exits 0 on
# SIGTERM (or 3 with --bad-exit).
SERVER = r"""
import signal, socket, sys
port = int(sys.argv[1])
signal.signal(signal.SIGTERM, lambda *_: sys.exit(3 if "--bad-exit" in sys.argv else 0))
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port)); s.listen(16)
while True:
    c, _ = s.accept()
    sum(i * i for i in range(200_000))
    c.close()
"""


def start_agent(log_dir) -> tuple[subprocess.Popen, str]:
    """An agent as the runner starts it: its stdin the control channel; (process, address)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "msgbench.hostagent", "--listen", "127.0.0.1",
         "--log-dir", str(log_dir)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        env={**os.environ, hostagent.TOKEN_ENV: TOKEN},
    )  # fmt: skip
    said = json.loads(proc.stdout.readline())
    assert said["agent"] == "ready"
    return proc, said["address"]


@pytest.fixture
def agent(tmp_path):
    proc, address = start_agent(tmp_path / "logs")
    yield address
    proc.stdin.close()
    assert proc.wait(10) == 0


def server_argv(tmp_path, port, *extra):
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    return [sys.executable, str(script), str(port), *extra]


def free_port(client):
    return client.call("free_port", addr="127.0.0.1")["port"]


def test_starts_measures_and_stops_an_implementation(agent, tmp_path):
    with AgentClient(agent, TOKEN) as c:
        assert c.host["hostname"] == socket.gethostname()
        port = free_port(c)
        pid = c.call("start", argv=server_argv(tmp_path, port), cwd=str(tmp_path),
                     cpus=None, log="srv.log")["pid"]  # fmt: skip
        c.call("ready", addr="127.0.0.1", port=port, timeout_s=15)
        before = c.call("cpu")
        for _ in range(3):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        time.sleep(0.3)
        after = c.call("cpu")
        assert after["cpu_ns"] > before["cpu_ns"], "its CPU clock advanced with the work"
        assert after["run_delay_ns"] >= before["run_delay_ns"] >= 0
        memory = c.call("memory")
        assert memory["vmhwm_kb"] >= memory["vmrss_kb"] > 0
        assert c.call("status") == {"ok": True, "running": True}
        stopped = c.call("stop", wait_s=5)
        assert stopped["exited"] and stopped["exit"]["code"] == 0
        assert c.call("status")["running"] is False
        with pytest.raises(AgentError, match="no cpu to read"):
            c.call("cpu")
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_says_how_an_implementation_ended(agent, tmp_path):
    with AgentClient(agent, TOKEN) as c:
        c.call("start", argv=[sys.executable, "-c", "import sys; sys.exit(5)"], log="x.log")
        with pytest.raises(AgentError, match="exited with status 5 before it accepted"):
            c.call("ready", addr="127.0.0.1", port=free_port(c), timeout_s=10)
    with AgentClient(agent, TOKEN) as c:
        port = free_port(c)
        c.call("start", argv=server_argv(tmp_path, port, "--bad-exit"), log="y.log")
        c.call("ready", addr="127.0.0.1", port=port, timeout_s=15)
        stopped = c.call("stop", wait_s=5)
        assert stopped["exit"] == {"code": 3, "signal": None, "describe": "exited with status 3"}


def test_a_driver_that_goes_takes_its_implementation_with_it(agent, tmp_path):
    c = AgentClient(agent, TOKEN)
    port = free_port(c)
    pid = c.call("start", argv=server_argv(tmp_path, port), log="z.log")["pid"]
    c.call("ready", addr="127.0.0.1", port=port, timeout_s=15)
    c.close()  # the driver died
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    pytest.fail("the implementation outlived its driver's connection")


def test_refuses_strangers_and_bad_requests(agent, tmp_path):
    with pytest.raises(AgentError, match="wrong token"):
        AgentClient(agent, "x" * 32)
    with AgentClient(agent, TOKEN) as c:
        for fields, says in [
            ({"op": "cpu"}, "no implementation started"),
            ({"op": "start", "argv": []}, "argv, a non-empty list"),
            ({"op": "start", "argv": ["x"], "log": "../etc/passwd"}, "plain file name"),
            ({"op": "start", "argv": ["/no/such/program"]}, "cannot start /no/such/program"),
            ({"op": "dance"}, "unknown op"),
        ]:
            with pytest.raises(AgentError, match=says):
                c.call(**fields)
    host, port = agent.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"x" * (hostagent.MAX_LINE + 10) + b"\n")
        reply = json.loads(s.makefile("rb").readline())
    assert reply == {"ok": False, "error": f"request longer than {hostagent.MAX_LINE} bytes"}


def test_the_agent_exits_with_its_runner_and_kills_what_runs(tmp_path):
    proc, address = start_agent(tmp_path)
    c = AgentClient(address, TOKEN)
    port = free_port(c)
    pid = c.call("start", argv=server_argv(tmp_path, port), log="w.log")["pid"]
    c.call("ready", addr="127.0.0.1", port=port, timeout_s=15)
    proc.stdin.close()  # the runner is gone
    assert proc.wait(10) == 0
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    c.close()


def test_a_short_token_is_refused(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "msgbench.hostagent", "--log-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=30, env={**os.environ, hostagent.TOKEN_ENV: "x"},
    )  # fmt: skip
    assert done.returncode == 2 and "at least 16 characters" in done.stderr


def test_the_client_half_is_standard_library_only():
    """drivers/redisbench imports it under `python -E -S` (no site-packages)."""
    done = subprocess.run(
        [sys.executable, "-E", "-S", "-c",
         "import sys; sys.path.insert(0, sys.argv[1]); import msgbench.hostagent",
         str(paths.ROOT / "harness")],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_the_control_channel_gives_free_ports_only(tmp_path):
    """The runner asks for ports on the agent's stdin: it may not reach the agent's address."""
    from msgbench.sites import SiteError, agent_free_port

    proc, _ = start_agent(tmp_path)
    port = agent_free_port(proc, "127.0.0.1", "here")
    assert 0 < port < 65536
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # it was free
    with pytest.raises(SiteError, match="no free port on 192.0.2.1"):
        agent_free_port(proc, "192.0.2.1", "here")  # not an address of this host
    proc.stdin.write(b'{"op": "start", "argv": ["true"]}\n')
    proc.stdin.flush()
    assert (
        json.loads(proc.stdout.readline())["error"] == "the control channel serves free_port only"
    )
    proc.stdin.close()
    assert proc.wait(10) == 0
