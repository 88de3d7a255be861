"""The browser driver's parts that need no browser: statistics, the command line, host
registration and its generated launcher, /proc parsing, and the DevTools pipe client against
a scripted fake browser (timeouts, errors, a browser that dies, large messages)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from conftest import python_argv
from nmbrowser import cli, hostreg, procevents, procfs, stats
from nmbrowser.cdp import BrowserGone, CdpClient, CdpError
from nmbrowser.deadline import Timeout

ORIGIN = "chrome-extension://dbdfabaehflnngajmmlhhmbokhdlaifa/"

# ---- statistics ---------------------------------------------------------------------------


def test_percentiles_are_nearest_rank():
    samples = list(range(1, 1001))  # 1..1000 µs
    s = stats.summarize(reversed(samples))
    assert (s["min"], s["p50"], s["p90"], s["p99"], s["p999"], s["max"]) == (
        1,
        500,
        900,
        990,
        999,
        1000,
    )
    assert s["mean"] == 500.5


def test_stdev_is_the_populations():
    assert stats.summarize([10, 20, 30, 40])["stdev"] == pytest.approx(11.180, abs=1e-3)
    assert stats.summarize([7])["p999"] == 7
    with pytest.raises(ValueError):
        stats.summarize([])


# ---- command line -------------------------------------------------------------------------


def test_parses_the_native_drivers_command_line():
    args = cli.parse(
        "--mode persistent --op echo --size 1024 --iterations 10 --warmup 2 --driver-cpus 0 "
        "--impl-cpus 1,0 --impl-stderr /tmp/e --timeout-s 5 --check-full 3 --impl-cwd /tmp "
        f"--port 7 --client-json [] -- /bin/host {ORIGIN} extra".split()
    )
    assert (args.mode, args.op, args.size, args.iterations, args.warmup) == (
        "persistent",
        "echo",
        1024,
        10,
        2,
    )
    assert (args.driver_cpus, args.impl_cpus, args.check_full) == ([0], [1, 0], 3)
    assert (args.timeout_s, args.impl_cwd, args.impl_stderr) == (5.0, "/tmp", "/tmp/e")
    assert args.impl_argv == ["/bin/host", ORIGIN, "extra"]
    ranges = cli.parse(
        "--mode spawn --op ping --iterations 1 --warmup 0 --impl-cpus 0-2,5 -- h".split()
    )
    assert ranges.impl_cpus == [0, 1, 2, 5]


def test_defaults_are_the_native_drivers():
    args = cli.parse("--mode spawn --op ping --iterations 1 --warmup 0 -- h".split())
    assert (args.size, args.timeout_s, args.check_full, args.driver_cpus) == (0, 60.0, 50, None)


@pytest.mark.parametrize(
    "line",
    [
        "--mode spawn --op ping --size 5 --iterations 1 --warmup 0 -- h",
        "--mode spawn --op echo --size 10 --iterations 1 --warmup 0 -- h",
        "--mode spawn --op echo --size 99999999 --iterations 1 --warmup 0 -- h",
        "--mode spawn --op ping --iterations 0 --warmup 0 -- h",
        "--mode spawn --op ping --iterations 1 --warmup 0 --timeout-s 0 -- h",
        "--mode spawn --op ping --iterations 1 --warmup 0",
        "--mode other --op ping --iterations 1 --warmup 0 -- h",
        "--mode spawn --op ping --iterations 1 --warmup 0 --driver-cpus a -- h",
        "--mode spawn --op ping --iterations 1 --warmup 0 --",
        "--mode spawn --op ping --iterations 1 --warmup 0 --host-cpus 1 -- h",
        "--mode spawn --op ping --iterations 1 --warmup 0 --impl-cpus 2-1 -- h",
    ],
)
def test_refuses_bad_command_lines_with_status_2(line, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.parse(line.split())
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    assert "error:" in err
    # The contract's error document, for the harness.
    doc = json.loads(out)
    assert list(doc) == ["error"] and doc["error"].startswith("bad command line: ")


# ---- host registration --------------------------------------------------------------------


def test_program_host_is_registered_as_itself(tmp_path):
    reg = hostreg.register(tmp_path / "ud", tmp_path / "l", "a.b_c", ["/bin/cat", ORIGIN], ORIGIN)
    manifest = json.loads((tmp_path / "ud" / "NativeMessagingHosts" / "a.b_c.json").read_text())
    assert manifest == {
        "name": "a.b_c",
        "description": "msgbench nativemsg host under test",
        "path": "/bin/cat",
        "type": "stdio",
        "allowed_origins": [ORIGIN],
    }
    assert reg.launcher is None and reg.cwd == "/bin" and reg.comm == "cat"
    assert reg.matches(["/bin/cat", ORIGIN]) and not reg.matches(["/bin/catx", ORIGIN])


@pytest.mark.parametrize("name", ["Upper", "a-b", ".a", "a.", "a..b", "", "a b"])
def test_invalid_host_names_are_refused(tmp_path, name):
    with pytest.raises(hostreg.HostError, match="host name"):
        hostreg.register(tmp_path, tmp_path, name, ["/bin/cat"], ORIGIN)


def test_missing_or_unusable_programs_are_refused(tmp_path):
    with pytest.raises(hostreg.HostError, match="not an executable"):
        hostreg.register(tmp_path, tmp_path, "x", [str(tmp_path / "nope"), ORIGIN], ORIGIN)
    with pytest.raises(hostreg.HostError, match="only a Python host"):
        hostreg.register(tmp_path, tmp_path, "x", ["/bin/sh", "-c", "true", ORIGIN], ORIGIN)


def test_python_host_gets_a_launcher_that_runs_it_as_its_command_line_would(tmp_path):
    script_dir = tmp_path / "impl"
    script_dir.mkdir()
    (script_dir / "helper.py").write_text("VALUE = 'imported from the script folder'\n")
    script = script_dir / "main.py"
    script.write_text(
        "import json, os, sys\nimport helper\n"
        "print(json.dumps({'argv': sys.argv, 'path0': sys.path[0], 'cwd': os.getcwd(),\n"
        "  'helper': helper.VALUE, 'name': __name__, 'file': __file__,\n"
        "  'E': sys.flags.ignore_environment, 'S': sys.flags.no_site}))\n"
        "sys.exit(3)\n"
    )
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    argv = [*python_argv(), str(script), "--mode", "x", ORIGIN]
    reg = hostreg.register(
        tmp_path / "ud", tmp_path / "launchers", "py.host", argv, ORIGIN, str(cwd)
    )
    assert reg.path == tmp_path / "launchers" / "py.host" and os.access(reg.path, os.X_OK)
    first_line = reg.path.read_text().splitlines()[0]
    assert first_line == f"#!{python_argv()[0]} -ES"
    # Run it the way Chromium does: by path, the origin as the only argument, in its folder.
    done = subprocess.run(
        [str(reg.path), ORIGIN], cwd=reg.path.parent, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 3, done.stderr  # the script's own exit status
    seen = json.loads(done.stdout)
    assert seen == {
        "argv": [str(script), "--mode", "x", ORIGIN],
        "path0": str(script_dir),
        "cwd": str(cwd),
        "helper": "imported from the script folder",
        "name": "__main__",
        "file": str(script),
        "E": 1,
        "S": 1,
    }
    assert reg.matches([python_argv()[0], "-ES", str(reg.path), ORIGIN])


# ---- /proc --------------------------------------------------------------------------------


def test_stat_survives_a_process_name_with_parentheses_and_spaces(tmp_path):
    odd = tmp_path / "a) b (c"
    odd.symlink_to("/bin/sleep")
    proc = subprocess.Popen([str(odd), "30"])
    try:
        # Until it has exec'd and gone to sleep, however long a loaded machine takes.
        s = _wait_for(lambda: (st := procfs.stat(proc.pid)) and st.state == "S" and st)
        assert (s.comm, s.ppid, s.state) == ("a) b (c", os.getpid(), "S")
        assert procfs.cmdline(proc.pid) == [str(odd), "30"]
        assert procfs.vm_hwm_kb(proc.pid) > 0
        assert proc.pid in [c.pid for c in procfs.children(os.getpid())]
    finally:
        proc.kill()
        proc.wait()
    assert procfs.stat(proc.pid) is None and procfs.vm_hwm_kb(proc.pid) is None


#: Bound of a wait for another process to get somewhere: generous, because on a loaded 2-core
#: machine a process may wait seconds for a CPU; the waits end as soon as the condition holds.
WAIT_S = 60.0


def _wait_for(condition, seconds: float = WAIT_S):
    """Polls `condition` until it returns something true (returned), failing after `seconds`."""
    deadline = time.monotonic() + seconds
    while not (value := condition()):
        assert time.monotonic() < deadline, f"not within {seconds:g} s"
        time.sleep(0.01)
    return value


def _zombie(pid: int):
    s = procfs.stat(pid)
    return s if s is not None and s.state == "Z" else None


def test_zombie_exit_status_is_read_before_the_parent_reaps():
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(7)"])
    s = _wait_for(lambda: _zombie(proc.pid))
    assert procfs.exit_status(s.exit_code) == 7
    proc.wait()
    killed = subprocess.Popen(["/bin/sleep", "30"])
    killed.kill()
    s = _wait_for(lambda: _zombie(killed.pid))
    assert procfs.exit_status(s.exit_code) == 128 + 9  # as the native driver reports it
    killed.wait()


def test_cpu_time_is_exact_and_pinning_reaches_every_thread():
    # 0.3 s of CPU in the main thread, then idle with a second (sleeping) thread alive.
    spin = (
        "import threading, time\n"
        "end = time.thread_time() + 0.3\n"
        "while time.thread_time() < end: pass\n"
        "threading.Thread(target=time.sleep, args=(30,)).start()\n"
        "print('done', flush=True); time.sleep(30)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "done\n"
        ns = procfs.cpu_ns(proc.pid)
        s = procfs.stat(proc.pid)
        ticks_ns = (s.utime + s.stime) * 1e9 / procfs.CLK_TCK
        # The spin's 0.3 s, plus the interpreter's start (CPU, not wall time: load does not
        # inflate it much).
        assert 0.3e9 <= ns < 1.0e9
        assert abs(ticks_ns - ns) <= 2e9 / procfs.CLK_TCK  # the ticks agree, to their resolution
        assert len(procfs.threads(proc.pid)) == 2
        cpu = sorted(os.sched_getaffinity(0))[-1]
        tids = procfs.pin_all_threads(proc.pid, [cpu])
        assert sorted(tids) == sorted(procfs.threads(proc.pid))
        assert all(procfs.affinity(t) == [cpu] for t in tids)
    finally:
        proc.kill()
        proc.wait()


def test_environment_marker_finds_exactly_the_marked_processes():
    marker = f"unit{os.getpid()}{time.monotonic_ns()}"
    env = {**os.environ, "MSGBENCH_BROWSER_RUN": marker}
    marked = subprocess.Popen(["/bin/sleep", "30"], env=env)
    other = subprocess.Popen(["/bin/sleep", "30"])
    try:
        # Once the marked one has exec'd (its environment is readable then).
        found = _wait_for(lambda: procfs.pids_with_env("MSGBENCH_BROWSER_RUN", marker))
        assert found == [marked.pid]
    finally:
        for p in (marked, other):
            p.kill()
            p.wait()


# ---- the DevTools pipe client -------------------------------------------------------------


class FakeBrowser:
    """The browser's end of the two pipes, answering each command with `respond(message)`:
    a list of raw messages to write (responses and events), or None for silence."""

    def __init__(self, respond):
        to_browser_r, self.client_w = os.pipe()
        self.client_r, from_browser_w = os.pipe()
        self._r, self._w = to_browser_r, from_browser_w
        self.respond = respond
        self.received: list[dict] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        buf = b""
        with os.fdopen(self._r, "rb", buffering=0) as r, os.fdopen(self._w, "wb") as w:
            while chunk := r.read(1 << 16):
                buf += chunk
                while b"\0" in buf:
                    raw, buf = buf.split(b"\0", 1)
                    message = json.loads(raw)
                    self.received.append(message)
                    out = self.respond(message)
                    if out == "close":
                        return
                    for reply in out or []:
                        w.write(json.dumps(reply).encode() + b"\0")
                    w.flush()

    def client(self) -> CdpClient:
        return CdpClient(self.client_r, self.client_w)


def test_call_returns_the_matching_result_and_keeps_events():
    def respond(m):
        return [
            {"method": "Target.targetCreated", "params": {"n": m["id"]}},
            {"id": m["id"] + 1000, "result": {"stale": True}},  # nobody waits for this id
            {"id": m["id"], "result": {"echo": m["params"]}, "sessionId": m.get("sessionId")},
        ]

    cdp = FakeBrowser(respond).client()
    assert cdp.call("A.b", {"x": 1}, timeout=5) == {"echo": {"x": 1}}
    assert cdp.call("A.c", {"y": 2}, session="S1", timeout=5) == {"echo": {"y": 2}}
    event = cdp.wait_event("Target.targetCreated", lambda p: p["n"] == 2, timeout=5)
    assert event["params"] == {"n": 2}
    cdp.close()


def test_error_response_raises_with_the_browsers_message():
    cdp = FakeBrowser(
        lambda m: [{"id": m["id"], "error": {"code": -32000, "message": "No such target"}}]
    ).client()
    with pytest.raises(CdpError, match="Target.attachToTarget: No such target"):
        cdp.call("Target.attachToTarget", timeout=5)
    cdp.close()


def test_silent_browser_times_out_within_the_bound():
    cdp = FakeBrowser(lambda m: None).client()
    started = time.monotonic()
    with pytest.raises(Timeout, match="Runtime.evaluate"):
        cdp.call("Runtime.evaluate", timeout=0.5)
    # Not before the timeout; after it, within what a loaded machine takes to wake a thread.
    assert 0.45 < time.monotonic() - started < 10.0
    cdp.close()


def test_browser_that_closes_the_pipe_is_reported_at_once():
    cdp = FakeBrowser(lambda m: "close").client()
    started = time.monotonic()
    with pytest.raises(BrowserGone):
        cdp.call("Browser.getVersion", timeout=30)
    assert time.monotonic() - started < 15  # at once, not at the 30 s timeout
    cdp.close()


def test_crashed_page_fails_calls_on_its_session():
    def respond(m):
        if m["method"] == "Runtime.evaluate":  # the page dies instead of answering
            return [{"method": "Inspector.targetCrashed", "params": {}, "sessionId": "S1"}]
        return [{"id": m["id"], "result": {}}]

    cdp = FakeBrowser(respond).client()
    with pytest.raises(CdpError, match="crashed"):
        cdp.call("Runtime.evaluate", session="S1", timeout=30)
    with pytest.raises(CdpError, match="crashed"):  # and fails later calls without waiting
        cdp.call("Runtime.evaluate", session="S1", timeout=30)
    assert cdp.call("Browser.getVersion", timeout=5) == {}  # the browser itself is fine
    cdp.close()


def test_large_messages_both_ways_do_not_deadlock():
    big = "x" * (4 << 20)  # far beyond a pipe's 64 KiB buffer in each direction

    def respond(m):
        events = [{"method": "Noise.event", "params": {"blob": big}}]
        return [*events, {"id": m["id"], "result": {"size": len(m["params"]["blob"])}}]

    cdp = FakeBrowser(respond).client()
    assert cdp.call("Big.call", {"blob": big}, timeout=20) == {"size": len(big)}
    cdp.close()


# ---- process events -----------------------------------------------------------------------


def test_process_events_give_every_childs_exit_status():
    try:
        events = procevents.ProcEvents(os.getpid())
    except procevents.Unavailable as e:
        pytest.skip(f"process events unavailable here: {e}")
    with events:
        exits = subprocess.Popen(["/bin/sh", "-c", "exit 7"])
        killed = subprocess.Popen(["/bin/sleep", "30"])
        killed.kill()
        exits.wait()
        killed.wait()
        threading.Thread(target=time.sleep, args=(0,)).start()  # a thread is not a child
        assert events.wait_exit(exits.pid, 5) is not None
        assert events.wait_exit(killed.pid, 5) is not None
        children = events.children
        assert {exits.pid, killed.pid} <= children.execed <= children.forked
        assert procfs.exit_status(children.exits[exits.pid]) == 7
        assert procfs.exit_status(children.exits[killed.pid]) == 128 + 9
        assert not events.lost
