"""driver.py end to end, as the harness runs it: the driver contract's command line and JSON
(docs/driver-contract.md), failures as {"error": ...} with exit 1, every wait bounded, and
nothing left behind (no Chromium or host process, no temporary directory) whether the trial
passed, failed, timed out or was terminated.

Waits on other processes (Chromium, the hosts, whoever reaps an orphan) poll for their
condition with generous bounds: a loaded 2-core machine may take seconds, and a test must not
depend on how fast another process is scheduled or reaps."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from conftest import DRIVER, fixture_argv, lab_impls, python_argv

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

ORIGIN = "chrome-extension://dbdfabaehflnngajmmlhhmbokhdlaifa/"
#: The fields of the native driver's output (docs/driver-contract.md).
NATIVE_FIELDS = {
    "driver", "mode", "op", "size", "iterations", "warmup", "driver_cpus", "impl_cpus", "ops",
    "elapsed_s", "ops_per_s", "mb_per_s", "latency_us", "impl", "checked",
}  # fmt: skip
LATENCY_FIELDS = ["min", "mean", "stdev", "p50", "p90", "p99", "p999", "max"]
IMPL_FIELDS = {
    "cpu_s", "cpu_clock", "cpu_us_per_op", "maxrss_kb", "exit_status", "processes",
}  # fmt: skip
#: How long another process may take to do what a test waits for (start, exit, be reaped).
WAIT_S = 60.0


def impl(impl_id: str):
    for i in lab_impls():
        if i.id == impl_id:
            if not i.built:
                pytest.skip(f"{impl_id} not built: run msgbench build nativemsg")
            return i
    pytest.skip(f"no implementation {impl_id}")


def run_driver(tmp: Path, args: list[str], host_argv: list[str], timeout: float = 90):
    """Run driver.py with its temporary files under `tmp`; returns (status, JSON, seconds)."""
    env = {**os.environ, "TMPDIR": str(tmp)}
    started = time.monotonic()
    done = subprocess.run(
        [*python_argv(), str(DRIVER), *args, "--", *host_argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    return done.returncode, json.loads(done.stdout), time.monotonic() - started


def processes_of(tmp: Path) -> list[str]:
    """Live processes of a run whose files are under `tmp`: Chromium's have its profile
    directory on their command line, the hosts have HOME under `tmp` in their environment
    (Chromium's children overwrite theirs with their titles)."""
    in_argv, in_env = str(tmp).encode(), f"HOME={tmp}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                mine = in_argv in f.read()
            with open(f"/proc/{name}/environ", "rb") as f:
                mine = mine or any(v.startswith(in_env) for v in f.read().split(b"\0"))
            if mine:
                with open(f"/proc/{name}/comm") as f:
                    found.append(f"{name} {f.read().strip()}")
        except OSError:
            continue
    return found


def zombies() -> set[tuple[int, str]]:
    """Zombie processes named like Chromium's or the hosts' (a zombie has no environment to
    tell whose it is): one left behind means its parent died and nobody reaped it."""
    found = set()
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/stat") as f:
                raw = f.read()
        except OSError:
            continue
        comm = raw[raw.find("(") + 1 : raw.rfind(")")]
        state = raw[raw.rfind(")") + 2 :].split()[0]
        if state == "Z" and comm.startswith(("chrom", "nativemsg", "msgbench.")):
            found.add((int(name), comm))
    return found


def wait_until_gone(find, seconds: float = WAIT_S):
    """Polls `find()` until it finds nothing or `seconds` pass; returns what is left."""
    deadline = time.monotonic() + seconds
    while (left := find()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def assert_nothing_left(tmp: Path, zombies_before: set) -> None:
    # A SIGKILLed process may take a moment to vanish, longer on a loaded machine.
    assert wait_until_gone(lambda: processes_of(tmp)) == []
    # A zombie is left behind only if nobody reaps it. A descendant re-parented away from the
    # driver (to init or a subreaper) stays a zombie until that process gets round to reaping
    # it, which on a loaded machine can take seconds: wait for that, bounded, instead of
    # assuming it is quick.
    new_zombies = zombies() - zombies_before
    assert wait_until_gone(lambda: new_zombies & zombies()) == set()
    assert list(tmp.iterdir()) == []


@pytest.fixture
def tmp():
    """The run's TMPDIR: short (so the driver keeps its directory in it rather than falling
    back to /tmp, see session._make_root) and private, so that what is left there is ours."""
    d = Path(tempfile.mkdtemp(prefix="nmb-", dir="/tmp"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def nothing_left(tmp):
    """Asserts after the test that the runs left no process, zombie or file behind."""
    before = zombies()
    yield
    assert_nothing_left(tmp, before)


@pytest.mark.usefixtures("nothing_left")
def test_persistent_ping_reports_the_native_drivers_fields(tmp, tmp_path):
    c = impl("c")
    stderr_log = tmp_path / "host.stderr.log"
    args = "--mode persistent --op ping --size 0 --iterations 300 --warmup 30 --check-full 20"
    args += f" --impl-stderr {stderr_log} --timeout-s 60"
    status, doc, _ = run_driver(tmp, args.split(), c.argv())
    assert status == 0, doc
    assert NATIVE_FIELDS <= set(doc) and IMPL_FIELDS <= set(doc["impl"])
    assert "host" not in doc and "host_cpus" not in doc
    assert (doc["driver"], doc["mode"], doc["op"], doc["ops"]) == (
        "nativemsg-browser",
        "persistent",
        "ping",
        300,
    )
    lat = doc["latency_us"]
    assert list(lat) == LATENCY_FIELDS
    assert 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p999"] <= lat["max"]
    assert lat["min"] <= lat["mean"] <= lat["max"]
    # A Chromium round trip is far above a pipe's ~10-50 µs and below a second.
    assert 50 < lat["p50"] < 1e6
    assert doc["measured_in"] == "extension page (performance.now, 5 µs resolution)"
    assert doc["checked"] == {"full": 20, "length": 280}
    assert doc["ops_per_s"] == pytest.approx(300 / doc["elapsed_s"], rel=1e-3)
    assert doc["mb_per_s"] == pytest.approx(doc["ops_per_s"] * 13 / 1e6, rel=1e-3)
    host = doc["impl"]
    assert host["processes"] == 1 and host["exit_status"] == [0]
    assert host["maxrss_kb"] > 0 and host["cpu_us_per_op"] > 0
    # The live host's process CPU clock, over every message it served.
    assert host["cpu_clock"] == "process-cpu-clock"
    assert host["cpu_us_per_op"] == pytest.approx(host["cpu_s"] * 1e6 / 330, rel=1e-3)
    assert doc["browser"]["cross_origin_isolated"] is True
    assert doc["browser"]["timer_step_us"] == 5
    assert doc["browser"]["cpu_us_per_op"]["browser"] > 0
    assert stderr_log.exists()  # Chromium's stderr (and so the host's) went there


@pytest.mark.usefixtures("nothing_left")
def test_placement_is_applied_and_reported(tmp):
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs 2 CPUs")
    c = impl("c")
    args = "--mode persistent --op ping --iterations 50 --warmup 5 --timeout-s 60"
    args += f" --driver-cpus {cpus[0]} --impl-cpus {cpus[-1]}"
    status, doc, _ = run_driver(tmp, args.split(), c.argv())
    assert status == 0, doc
    assert doc["driver_cpus"] == [cpus[0]] and doc["impl_cpus"] == [cpus[-1]]
    assert doc["host_placement"].startswith(f"pinned to cpu {cpus[-1]} ")
    status, doc, _ = run_driver(tmp, [*args.replace("persistent", "spawn").split()], c.argv())
    assert status == 0, doc
    assert doc["impl_cpus"] == [cpus[0]]  # spawned hosts inherit Chromium's mask
    assert doc["impl_cpus_requested"] == [cpus[-1]]
    assert doc["host_placement"].startswith(f"inherits chromium (cpu {cpus[0]})")


@pytest.mark.usefixtures("nothing_left")
def test_spawn_counts_one_process_per_message(tmp):
    c = impl("c")
    args = "--mode spawn --op ping --iterations 20 --warmup 5 --timeout-s 60".split()
    status, doc, _ = run_driver(tmp, args, c.argv())
    assert status == 0, doc
    assert doc["ops"] == 20 and doc["impl"]["processes"] == 25
    # Every one of the 25 hosts exited 0 (process events; as root, nothing is missing).
    assert doc["impl"]["exit_status"] == [0] and "exit_status_note" not in doc["impl"]
    assert doc["impl"]["cpu_us_per_op"] >= 0 and "cpu_note" in doc["impl"]
    # Chromium forks and reaps them: its children's ticks are all there is.
    assert doc["impl"]["cpu_clock"] == "proc-children-ticks"
    assert doc["latency_us"]["p50"] > 100  # a process start under Chromium: ms, not µs


@pytest.mark.usefixtures("nothing_left")
def test_python_host_runs_through_its_launcher_with_echo(tmp):
    py = impl("python")
    args = "--mode persistent --op echo --size 1024 --iterations 50 --warmup 5 --timeout-s 60"
    status, doc, _ = run_driver(tmp, [*args.split(), "--impl-cwd", py.cwd()], py.argv())
    assert status == 0, doc
    reg = doc["browser"]["host"]
    assert reg["launcher"].startswith(f"generated '#!{python_argv()[0]} -ES' script")
    assert reg["cwd"] == py.cwd()
    assert doc["mb_per_s"] == pytest.approx(doc["ops_per_s"] * 1024 / 1e6, rel=1e-3)
    assert doc["impl"]["exit_status"] == [0]


@pytest.mark.usefixtures("nothing_left")
def test_host_that_exits_mid_trial_fails_it_with_chromiums_error(tmp, tmp_path):
    stderr_log = tmp_path / "host.stderr.log"
    args = f"--mode persistent --op ping --iterations 10 --warmup 0 --impl-stderr {stderr_log}"
    status, doc, _ = run_driver(tmp, args.split(), fixture_argv("exit", ORIGIN))
    assert status == 1
    assert list(doc) == ["error"]
    assert "after 1 of 10 replies: Native host has exited." in doc["error"]
    assert "fixture_host: mode exit started" in stderr_log.read_text()  # the host's stderr


@pytest.mark.usefixtures("nothing_left")
def test_silent_host_times_out_within_the_budget(tmp):
    args = "--mode persistent --op ping --iterations 10 --warmup 0 --timeout-s 8".split()
    status, doc, seconds = run_driver(tmp, args, fixture_argv("silent", ORIGIN))
    assert status == 1 and "timed out after 0 of 10 replies" in doc["error"]
    # The budget, plus the interpreter's own start and exit (seconds on a loaded machine).
    assert seconds < 8 + 15


@pytest.mark.usefixtures("nothing_left")
def test_missing_host_program_is_a_clear_error(tmp):
    args = "--mode spawn --op ping --iterations 1 --warmup 0 --timeout-s 30".split()
    status, doc, _ = run_driver(tmp, args, ["/nonexistent/host", ORIGIN])
    assert status == 1 and "not an executable file" in doc["error"]


def _start_silent_trial(tmp: Path) -> subprocess.Popen:
    argv = [*python_argv(), str(DRIVER), "--mode", "persistent", "--op", "ping"]
    argv += ["--iterations", "5", "--warmup", "0", "--timeout-s", "60", "--"]
    proc = subprocess.Popen(
        [*argv, *fixture_argv("silent", ORIGIN)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    deadline = time.monotonic() + WAIT_S
    # Wait for the host itself: a process of the run named after its launcher (msgbench.nativemsg).
    while not any(p.split(" ", 1)[1].startswith("msgbench.native") for p in processes_of(tmp)):
        assert time.monotonic() < deadline, "the host never started"
        time.sleep(0.05)
    return proc


@pytest.mark.usefixtures("nothing_left")
def test_terminated_driver_cleans_up(tmp):
    proc = _start_silent_trial(tmp)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 1 and json.loads(out) == {"error": "interrupted"}


# Not `nothing_left`: a SIGKILLed driver cannot remove its files (the tmp fixture does).
def test_killed_driver_takes_chromium_and_the_host_with_it(tmp):
    proc = _start_silent_trial(tmp)
    # No cleanup code runs. Chromium exits as its DevTools pipe closes (and PDEATHSIG would
    # kill it otherwise); its children follow it, and the host sees EOF on stdin.
    proc.kill()
    proc.communicate(timeout=30)
    assert wait_until_gone(lambda: processes_of(tmp)) == []
