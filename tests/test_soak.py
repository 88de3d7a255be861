"""The soak with faults (msgbench.robustness.soak): a short soak of the C comm and redis servers
must pass, and servers with a planted fault must fail it: one that loses a reply, one that leaks
memory and descriptors. Then the pure parts: the verdict, the growth measure, the redis and
echonet final-state rules. Nothing here asserts a timing: counts and verdicts only."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from msgbench import paths, registry, topology
from msgbench.robustness import soak, soakload

SOAK_MINUTES = 0.2  # 12 s per server

needs_netns = pytest.mark.skipif(
    soak.unavailable_reason("comm") is not None,
    reason=f"the soak runs servers in network namespaces: {soak.unavailable_reason('comm')}",
)

# A comm server (SPEC §1-§2, one thread per connection) with a planted fault: `lose` drops the
# reply to every 40th message of a connection; `leak` keeps 20 MiB more every second once
# loaded and never closes a socket its client closed or reset; `good` has none. Port 0: any.
FAKE_COMM = textwrap.dedent("""
    import signal, socket, struct, sys, threading, time
    mode, port = sys.argv[1], int(sys.argv[2])
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    H = struct.Struct(">BQ")
    hoard = []

    def exact(c, n):
        b = bytearray()
        while len(b) < n:
            d = c.recv(min(n - len(b), 1 << 20))
            if not d:
                return None
            b += d
        return bytes(b)

    def leak():  # 20 MiB a second, whatever the load, up to 512 MiB
        while len(hoard) < 256:
            hoard.append(b"\\x01" * (2 << 20))
            time.sleep(0.1)

    def serve(c):
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        n = 0
        try:
            while True:
                h = exact(c, 9)
                if h is None:
                    break
                kind, size = H.unpack(h)
                body = exact(c, size) if size else b""
                if body is None:
                    break
                if kind in (4, 8):
                    c.sendall(H.pack(4, 0))
                    c.close()  # after END even the leaky one closes (as the SPEC asks)
                    return
                n += 1
                if mode == "lose" and n % 40 == 0:
                    continue
                c.sendall(H.pack(2, len(body)) + body)
        except OSError:
            pass
        if mode == "leak":
            hoard.append(c)
        else:
            c.close()

    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(1024)
    print(s.getsockname()[1], flush=True)
    while True:
        c, _ = s.accept()
        if mode == "leak" and not hoard:
            threading.Thread(target=leak, daemon=True).start()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
""")


def fake_comm(tmp_path: Path, mode: str) -> SimpleNamespace:
    script = tmp_path / "fake_comm.py"
    script.write_text(FAKE_COMM)
    return SimpleNamespace(
        id=f"fake-{mode}", skip_markers=[], cwd=lambda: str(tmp_path),
        argv=lambda port=None: [sys.executable, str(script), mode, str(port)],
    )  # fmt: skip


def soak_of(workload: str, impl) -> dict:
    done = []
    doc = soak.run(registry.workload(workload), [impl], SOAK_MINUTES, 7,
                   lambda i, row: done.append(i))  # fmt: skip
    assert done == [impl.id]
    return doc["impls"][impl.id]


def real(workload: str, impl_id: str):
    impl = registry.select(workload, [impl_id])[0]
    if not impl.built:
        pytest.skip(f"{workload}/{impl_id} is not built (msgbench build {workload})")
    return impl


# ---- whole soaks (namespaces) ----------------------------------------------------------------


@needs_netns
@pytest.mark.parametrize("workload", ["comm", "redis"])
def test_a_short_soak_of_the_c_server_passes(workload):
    row = soak_of(workload, real(workload, "c"))
    assert row["ok"], row["failures"]
    assert row["server_alive"] and row["exit_status"] == 0
    assert row["operations"] > 0
    assert row["kills"] >= 1  # a worker was killed mid-request and replaced
    assert row["proxy"]["connections"] > soak.WORKERS[workload]  # reconnections happened
    if workload == "redis":
        assert row["keys_checked"] > 0  # the final keyspace was compared
    mine = f"{topology.PREFIX}-{os.getpid()}-"
    assert not [n for n in topology.namespaces() if n.startswith(mine)]  # all removed


@needs_netns
def test_a_server_that_loses_replies_fails_the_soak(tmp_path):
    row = soak_of("comm", fake_comm(tmp_path, "lose"))
    assert not row["ok"]
    assert row["server_alive"]
    assert any("differs from what was sent" in f or "unanswered" in f for f in row["failures"])


@needs_netns
def test_a_server_that_leaks_memory_and_descriptors_fails_the_soak(tmp_path):
    row = soak_of("comm", fake_comm(tmp_path, "leak"))
    assert not row["ok"]
    assert row["rss_growth_kb"] > soak.BOUNDS["rss_growth_mib"] * 1024
    assert row["fd_growth"] > 0  # every connection it was given is still open
    assert any("RSS grew" in r for r in row["reasons"])


@needs_netns
def test_the_fake_server_without_a_fault_passes(tmp_path):
    row = soak_of("comm", fake_comm(tmp_path, "good"))
    assert row["ok"], row["failures"]


# ---- a load worker on loopback (no namespaces needed) ----------------------------------------


def test_a_comm_worker_catches_a_lost_reply(tmp_path):
    impl = fake_comm(tmp_path, "lose")
    server = subprocess.Popen(impl.argv(0), stdout=subprocess.PIPE)
    log = tmp_path / "worker.jsonl"
    try:
        port = int(server.stdout.readline())
        worker = subprocess.Popen([sys.executable, "-m", "msgbench.robustness.soakload", "comm",
                                   "--target", f"127.0.0.1:{port}", "--log", str(log)],
                                  env={"PYTHONPATH": str(paths.ROOT / "harness")})  # fmt: skip
        # Until the worker has seen the lost reply (it stops after MAX_FAILURES failures).
        deadline = time.monotonic() + 120
        while not [f for f in _fails(log) if "differs from what was sent" in f]:
            if time.monotonic() > deadline or worker.poll() is not None:
                break
            time.sleep(0.1)
        worker.send_signal(signal.SIGTERM)
        worker.wait(60)
    finally:
        server.kill()
        server.wait()
    assert [f for f in _fails(log) if "differs from what was sent" in f], _fails(log)


def _fails(log: Path) -> list[str]:
    return [r["fail"] for r in soak.read_log(log) if "fail" in r]


# ---- the verdict and the final-state rules ---------------------------------------------------


def test_the_verdict_names_every_broken_bound():
    row = {"server_alive": True, "exit_status": 0, "operations": 10, "rss_growth_kb": 0,
           "fd_growth": 0}  # fmt: skip
    assert soak.judge(row, [])[0]
    ok, why = soak.judge({**row, "rss_growth_kb": 17 * 1024, "fd_growth": 11}, [])
    assert not ok and "RSS grew 17.0 MiB" in why and "11 more open descriptors" in why
    ok, why = soak.judge({**row, "server_alive": False}, ["x"])
    assert not ok and why.startswith("the server died")
    assert soak.reasons({**row, "rss_growth_kb": 17 * 1024}, ["lost"])[1] == "lost"
    assert not soak.judge({**row, "exit_status": 1}, [])[0]
    assert not soak.judge({**row, "exit_status": None}, [])[0]
    assert not soak.judge({**row, "operations": 0}, [])[0]


def test_growth_is_measured_from_the_end_of_the_warm_up():
    # 100 s at 1 MiB/s of growth after a warm-up at 10 MiB: a leak of ~80 MiB after warm-up.
    samples = [(float(t), 10240 + max(0, t - 20) * 1024, 7) for t in range(0, 101)]
    g = soak.growth(samples, 0.0, 100.0)
    assert 70 * 1024 < g["rss_growth_kb"] < 85 * 1024
    flat = [(float(t), 10240 + (t % 3) * 100, 7) for t in range(0, 101)]
    assert abs(soak.growth(flat, 0.0, 100.0)["rss_growth_kb"]) <= 200


def _log(path: Path, recs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_the_redis_keyspace_allows_only_the_write_in_flight(tmp_path):
    a, b = soakload.enc(b"a"), soakload.enc(b"b")
    log = _log(tmp_path / "w.jsonl", [
        {"intent": "soak:0.0:s0", "before": None, "after": a}, {"k": "soak:0.0:s0", "v": a},
        {"intent": "soak:0.0:s0", "before": a, "after": b},  # killed before the reply
        {"intent": "soak:0.0:s1", "before": None, "after": a}, {"k": "soak:0.0:s1", "v": a},
        {"intent": "soak:0.0:s2", "before": None, "after": a},
        {"k": "soak:0.0:s2", "v": None, "resolved": True},  # a reset: read again, not applied
    ])  # fmt: skip
    allowed = soak.expected_keyspace([log])
    assert allowed["soak:0.0:s0"] == [a, b]
    assert allowed["soak:0.0:s1"] == [a]
    assert allowed["soak:0.0:s2"] == [None]


def test_echonet_final_state_allows_the_last_ack_and_what_followed(tmp_path):
    S = soakload._echonet_spec()
    log = _log(tmp_path / "w.jsonl", [
        {"set": 0xB3, "v": 1, "valid": True, "tid": 1, "t": 1.0},
        {"ack": 0xB3, "v": 1, "tid": 1, "t1": 1.0, "t": 1.01},
        {"set": 0xB3, "v": 2, "valid": True, "tid": 2, "t": 3.0},
        {"ack": 0xB3, "v": 2, "tid": 2, "t1": 3.0, "t": 3.01},
        {"set": 0xB3, "v": 3, "valid": True, "tid": 3, "t": 5.0},  # in flight at the end
        {"set": 0x80, "v": 0x77, "valid": False, "tid": 4, "t": 5.5},  # refused: no effect
    ])  # fmt: skip
    allowed = soak.echonet_allowed(S, [log], max_late_ms=0.0)
    assert allowed[0xB3] == {2, 3}
    assert allowed[0x80] == {0x31}  # never set: its initial value
    # A proxy that lagged 2 s may deliver the copy of an earlier SetC after the last ack.
    assert soak.echonet_allowed(S, [log], max_late_ms=2500.0)[0xB3] == {1, 2, 3}


def test_the_report_shows_each_soak_verdict_and_its_bounds():
    from msgbench.report.sections.robustness import _soak

    doc = {"minutes": 3, "faults": ["delay", "resets"], "bounds": soak.BOUNDS,
           "warmup_share": 0.2, "run": {"id": "soak-x", "command": "msgbench soak comm"},
           "impls": {"c": {"ok": True, "verdict": "fine", "operations": 1200,
                           "rss_growth_kb": 2048, "fd_growth": 0},
                     "rust": {"ok": False, "verdict": "RSS grew", "operations": 10,
                              "rss_growth_kb": 40960, "fd_growth": 6}}}  # fmt: skip
    table = _soak(doc)[1]
    assert [r[1].text for r in table.rows] == ["passed", "FAILED"]
    assert table.rows[1][3].text == "+40.0 MiB" and table.rows[1][4].text == "+6"
    assert "16 MiB and 10 descriptors" in table.caption and "first 20%" in table.caption
