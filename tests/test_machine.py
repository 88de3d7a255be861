"""machine.py (the fingerprint, read from fixture /proc and /sys trees) and loadwatch.py (load and
steal before and during a run, the busy rule, the lab's own CPU)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from msgbench import loadwatch, machine, pipeline, runner
from msgbench.loadwatch import CpuTimes, LoadWatch, ProcReader
from msgbench.report import document
from msgbench.report.sections import environment

CPUINFO = """processor\t: {n}
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B13
cpu MHz\t\t: {mhz}
flags\t\t: fpu vme sse2 {flags}

"""


def put(root: Path, path: str, text: str) -> None:
    f = root / path.lstrip("/")
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)


def make_machine(
    root: Path,
    *,
    cores: int = 2,
    hostname: str = "lab-1",
    kernel: str = "6.1.0-18-amd64",
    mhz: str = "2450.000",
    loadavg: str = "0.10 0.20 0.30 1/100 42",
    mem_kb: int = 24684084,
    l3: str = "32768K",
    hypervisor: bool = True,
) -> Path:
    flags = "hypervisor" if hypervisor else ""
    put(
        root,
        "/proc/cpuinfo",
        "".join(CPUINFO.format(n=n, mhz=mhz, flags=flags) for n in range(cores)),
    )
    put(root, "/proc/meminfo", f"MemTotal:       {mem_kb} kB\nMemFree:  1000 kB\n")
    put(root, "/proc/loadavg", loadavg + "\n")
    put(root, "/proc/sys/kernel/osrelease", kernel + "\n")
    put(root, "/proc/sys/kernel/hostname", hostname + "\n")
    put(root, "/etc/os-release", 'NAME="Debian"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')
    cache = "/sys/devices/system/cpu/cpu0/cache"
    for i, (level, kind, size) in enumerate(
        [(1, "Data", "32K"), (1, "Instruction", "32K"), (2, "Unified", "512K"), (3, "Unified", l3)]
    ):
        put(root, f"{cache}/index{i}/level", f"{level}\n")
        put(root, f"{cache}/index{i}/type", f"{kind}\n")
        put(root, f"{cache}/index{i}/size", f"{size}\n")
    return root


def no_tool(option: str) -> None:
    return None


# --- the fingerprint ----------------------------------------------------------------------------


def test_fingerprint_reads_cpu_caches_frequency_and_memory_from_the_tree(tmp_path):
    root = make_machine(tmp_path)
    cpufreq = "/sys/devices/system/cpu/cpu0/cpufreq"
    put(root, f"{cpufreq}/scaling_governor", "performance\n")
    put(root, f"{cpufreq}/scaling_cur_freq", "2450000\n")
    put(root, f"{cpufreq}/cpuinfo_max_freq", "3500000\n")
    put(root, "/sys/class/dmi/id/sys_vendor", "QEMU\n")
    put(root, "/sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n")
    fp = machine.fingerprint(root, detect=lambda opt: {"--vm": "kvm", "--container": "none"}[opt])
    assert fp["cpu_model"] == "AMD EPYC 7B13" and fp["cores"] == 2
    assert fp["caches"] == {"L1d": "32K", "L1i": "32K", "L2": "512K", "L3": "32768K"}
    assert fp["frequency_mhz"] == {"cpuinfo": 2450.0, "current": 2450.0, "max": 3500.0}
    assert fp["governor"] == "performance"
    assert fp["kernel"] == "6.1.0-18-amd64" and fp["hostname"] == "lab-1"
    assert fp["os"] == "Debian GNU/Linux 12 (bookworm)"
    assert fp["memory_gib"] == 23.5
    assert fp["virtualization"] == {
        "vm": "kvm",
        "container": "none",
        "hypervisor_flag": True,
        "dmi": "QEMU Standard PC (Q35 + ICH9, 2009)",
    }
    assert fp["virtualized"] is True
    assert fp["loadavg"] == ["0.10", "0.20", "0.30"]
    assert fp["fingerprint_id"] == machine.fingerprint_id(fp)  # recomputable from a stored run


def test_an_empty_tree_gives_empty_values_not_errors(tmp_path):
    fp = machine.fingerprint(tmp_path)
    assert fp["caches"] == {} and fp["frequency_mhz"] == {} and fp["governor"] == "n/a"
    assert fp["cores"] == 0 and fp["cpu_model"] == "unknown" and fp["memory_gib"] == 0.0
    assert fp["kernel"] == "" and fp["loadavg"] == []
    # a fixture root never asks systemd-detect-virt, which would describe the real machine
    assert fp["virtualization"] == {
        "vm": None,
        "container": None,
        "hypervisor_flag": False,
        "dmi": "",
    }
    assert fp["virtualized"] is False
    assert fp["cgroup"] == {
        "version": "none",
        "cpu_quota": None,
        "cpuset": None,
        "memory_limit_gib": None,
    }


def test_a_container_is_recognised_without_the_tool(tmp_path):
    root = make_machine(tmp_path, hypervisor=False)
    put(root, "/.dockerenv", "")
    virt = machine.virtualization(root, detect=no_tool)
    assert virt == {"vm": None, "container": "docker", "hypervisor_flag": False, "dmi": ""}


def test_the_fingerprint_id_ignores_what_changes_between_runs_on_one_machine(tmp_path):
    def fp(name, **kw):
        return machine.fingerprint(make_machine(tmp_path / name, **kw), detect=no_tool)

    base = fp("base")
    same_machine = fp(
        "later",
        hostname="renamed",
        kernel="6.9.0",
        mhz="1800.000",
        loadavg="7.5 6.0 3.0 9/300 999",
        mem_kb=24584084,  # a kernel that reserves ~100 MB more
    )
    assert base["fingerprint_id"] == same_machine["fingerprint_id"]
    assert len(base["fingerprint_id"]) == 12
    for other in (
        fp("more-cores", cores=4),
        fp("other-l3", l3="16384K"),
        fp("more-memory", mem_kb=2 * 24684084),
        fp("bare-metal", hypervisor=False),
    ):
        assert other["fingerprint_id"] != base["fingerprint_id"]
    # the cgroup limits and the load are not part of it either
    stored = dict(base, cgroup={"version": "v2", "cpu_quota": 1.0}, loadavg=["9", "9", "9"])
    assert machine.fingerprint_id(stored) == base["fingerprint_id"]


# --- cgroup limits ------------------------------------------------------------------------------

V2_MOUNT = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"


def test_cgroup_v2_limits_are_the_tightest_of_the_cgroup_and_its_parents(tmp_path):
    put(tmp_path, "/proc/self/cgroup", "0::/lab.slice/run-1.scope\n")
    put(tmp_path, "/proc/self/mountinfo", V2_MOUNT)
    base = "/sys/fs/cgroup/lab.slice"
    put(tmp_path, f"{base}/cpu.max", "150000 100000\n")  # the slice: 1.5 CPUs
    put(tmp_path, f"{base}/memory.max", f"{4 * 2**30}\n")
    put(tmp_path, f"{base}/run-1.scope/cpu.max", "200000 100000\n")
    put(tmp_path, f"{base}/run-1.scope/memory.max", f"{2 * 2**30}\n")
    put(tmp_path, f"{base}/run-1.scope/cpuset.cpus.effective", "0-1\n")
    assert machine.cgroup_limits(tmp_path) == {
        "version": "v2",
        "cpu_quota": 1.5,
        "cpuset": "0-1",
        "memory_limit_gib": 2.0,
    }


def test_cgroup_v2_in_a_container_that_sees_only_its_own_cgroup(tmp_path):
    put(tmp_path, "/proc/self/cgroup", "0::/\n")
    put(tmp_path, "/proc/self/mountinfo", V2_MOUNT)
    put(tmp_path, "/sys/fs/cgroup/cpu.max", "50000 100000\n")
    put(tmp_path, "/sys/fs/cgroup/memory.max", "max\n")
    put(tmp_path, "/sys/fs/cgroup/cpuset.cpus.effective", "1\n")
    limits = machine.cgroup_limits(tmp_path)
    assert limits["cpu_quota"] == 0.5 and limits["cpuset"] == "1"
    assert limits["memory_limit_gib"] is None


def test_cgroup_v1_on_a_hybrid_host_with_a_mount_rooted_inside_the_hierarchy(tmp_path):
    put(
        tmp_path,
        "/proc/self/cgroup",
        "4:memory:/docker/abc\n3:cpuset:/docker/abc\n2:cpu,cpuacct:/docker/abc\n0::/\n",
    )
    put(
        tmp_path,
        "/proc/self/mountinfo",
        V2_MOUNT.replace("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
        + "32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
        + "34 31 0:31 /docker/abc /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
        + "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
    )
    put(tmp_path, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "200000\n")
    put(tmp_path, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n")
    put(tmp_path, "/sys/fs/cgroup/cpuset/cpuset.effective_cpus", "0-3\n")
    put(tmp_path, "/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n")
    assert machine.cgroup_limits(tmp_path) == {
        "version": "v1",
        "cpu_quota": 2.0,
        "cpuset": "0-3",
        "memory_limit_gib": None,  # the kernel's "no limit"
    }


def test_cgroup_v1_without_mountinfo_uses_the_usual_mount_points(tmp_path):
    put(tmp_path, "/proc/self/cgroup", "4:memory:/job\n2:cpu:/\n")
    put(tmp_path, "/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n")
    put(tmp_path, "/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n")
    put(tmp_path, "/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n")
    put(tmp_path, "/sys/fs/cgroup/memory/job/memory.limit_in_bytes", f"{2**29}\n")
    limits = machine.cgroup_limits(tmp_path)
    assert limits == {
        "version": "v1",
        "cpu_quota": None,
        "cpuset": None,
        "memory_limit_gib": 0.5,
    }


# --- the busy rule ------------------------------------------------------------------------------


def during(foreign: float, steal: float = 0.0) -> dict:
    return {"foreign_cpus": {"mean": foreign, "max": 2.0}, "steal_fraction": {"mean": steal}}


def test_busy_rule_foreign_cpu_and_steal_during_the_trials():
    assert loadwatch.is_busy(None, during(0.1, 0.01)) == (False, [])
    busy, why = loadwatch.is_busy(None, during(loadwatch.BUSY_FOREIGN_CPUS))
    assert busy and "other work took 0.25 CPU" in why[0]
    busy, why = loadwatch.is_busy(None, during(0.0, loadwatch.BUSY_STEAL_FRACTION + 0.01))
    assert busy and "stole 4.0%" in why[0]
    assert len(loadwatch.is_busy(None, during(1.0, 0.5))[1]) == 2


def test_busy_rule_reads_the_look_before_only_when_the_trials_gave_no_sample():
    before = {"foreign_cpus": 1.0, "steal_fraction": 0.0, "loadavg": [3.0, 3.0, 3.0]}
    assert loadwatch.is_busy(before, during(0.0)) == (False, [])
    busy, why = loadwatch.is_busy(before, None)
    assert busy and "before the trials" in why[0]
    assert loadwatch.is_busy({"seconds": None, "loadavg": [1.0]}, None) == (False, [])


# --- the sampler --------------------------------------------------------------------------------


class FakeMachine:
    """/proc of a virtual machine whose time moves one second each time the sampler reads the
    clock: CPU n is busy busy[n] of the time, steal[n] stolen, the lab uses `own` CPUs."""

    def __init__(self, busy=(0.75, 0.75), steal=(0.0, 0.0), own=0.5, fail=None):
        self.t, self.busy, self.steal, self.own, self.fail = 0, busy, steal, own, fail
        self.reads = 0

    def clock(self) -> float:
        self.t += 1
        return float(self.t)

    def cpu_times(self) -> dict[int, CpuTimes]:
        self.reads += 1
        if self.fail and self.reads >= self.fail:
            raise OSError("no /proc/stat here")
        return {
            n: CpuTimes(round(100 * self.t * b), round(100 * self.t * s), 100 * self.t)
            for n, (b, s) in enumerate(zip(self.busy, self.steal, strict=True))
        }

    def loadavg(self) -> list[float]:
        return [1.5, 1.0, 0.5]

    def tree_ticks(self, pid: int) -> int:
        return round(100 * self.t * self.own)


def watch(fake: FakeMachine, cpus=None) -> LoadWatch:
    return LoadWatch(
        cpus, reader=fake, interval=0.01, before=0.01, pid=1, clock=fake.clock, clk_tck=100
    )


def test_sampler_subtracts_the_labs_own_cpu_from_the_machines_busy_time():
    fake = FakeMachine(busy=(0.75, 0.75), own=0.5)
    w = watch(fake)
    w.start()
    time.sleep(0.05)
    record = w.stop()
    assert record["before"] == {
        "seconds": 1.0,
        "loadavg": [1.5, 1.0, 0.5],
        "busy_cpus": 1.5,
        "own_cpus": 0.5,
        "foreign_cpus": 1.0,
        "steal_fraction": 0.0,
    }
    d = record["during"]
    assert d["samples"] >= 1  # the last, partial window at least
    assert d["busy_cpus"] == {"mean": 1.5, "max": 1.5}
    assert d["own_cpus"]["mean"] == 0.5 and d["foreign_cpus"]["mean"] == 1.0
    assert d["per_cpu"] == {"0": {"busy": 0.75, "steal": 0.0}, "1": {"busy": 0.75, "steal": 0.0}}
    assert record["busy"] and record["reasons"] and record["rule"] == loadwatch.RULE
    assert record["notes"] == [] and record["sampler_cpu_seconds"] >= 0


def test_sampler_watches_only_the_cpus_the_trials_use_and_reports_steal():
    fake = FakeMachine(busy=(1.0, 0.1), steal=(0.0, 0.05), own=0.0)
    w = watch(fake, cpus=[1])
    w.start()
    record = w.stop()
    d = record["during"]
    assert record["cpus"] == [1] and set(d["per_cpu"]) == {"1"}
    assert d["busy_cpus"]["mean"] == 0.1 and d["steal_fraction"]["mean"] == 0.05
    assert record["busy"] and "stole 5.0%" in record["reasons"][0]


def test_a_quiet_machine_is_not_busy():
    fake = FakeMachine(busy=(0.3, 0.3), own=0.55)  # the lab's own work is not "other work"
    w = watch(fake)
    w.start()
    record = w.stop()
    assert record["during"]["foreign_cpus"]["mean"] == 0.05
    assert not record["busy"] and record["reasons"] == []


def test_a_failing_proc_becomes_a_note_never_an_error():
    fake = FakeMachine(fail=3)  # the look before works, the trials' samples fail
    w = watch(fake)
    w.start()
    time.sleep(0.03)
    record = w.stop()
    assert record["before"]["foreign_cpus"] == 1.0
    assert record["during"] is None and record["busy"]  # the look before decides
    assert record["notes"] == ["/proc unreadable: OSError: no /proc/stat here"]  # once

    dead = watch(FakeMachine(fail=1))
    dead.start()
    record = dead.stop()
    assert record["before"] == {"seconds": None, "loadavg": [1.5, 1.0, 0.5]}
    assert not record["busy"] and record["notes"]


def test_the_pipeline_stops_the_sampler_when_measuring_fails(fake_lab, monkeypatch, tmp_path):
    started, stopped = [], []

    class Watch:
        def __init__(self, cpus):
            started.append(cpus)

        def start(self):
            pass

        def stop(self):
            stopped.append(True)
            return {}

    def measure(*args, **kwargs):
        raise RuntimeError("the driver exploded")

    monkeypatch.setattr(loadwatch, "LoadWatch", Watch)
    monkeypatch.setattr(runner, "measure", measure)
    monkeypatch.setattr(pipeline.store, "run_dir", lambda run_id: tmp_path / run_id)
    hooks = SimpleNamespace(
        planned=lambda *a: None,
        measuring=lambda *a: lambda done: None,
        verify=lambda impls, log_dir: {(i.workload, i.id): SimpleNamespace(ok=True) for i in impls},
    )
    req = pipeline.BenchRequest("toy", ("ping",), profile="smoke", placement="none", build=False)
    with pytest.raises(RuntimeError, match="exploded"):
        pipeline.execute(pipeline.make_plan(req), hooks)
    assert started == [None] and stopped == [True]  # placement none: every CPU is watched


# --- the lab's own process tree -----------------------------------------------------------------


def proc_stat(pid: int, ppid: int, ticks: tuple[int, int, int, int], name: str = "x") -> str:
    utime, stime, cutime, cstime = ticks
    rest = ["S", ppid, pid, pid, 0, -1, 0, 0, 0, 0, 0, utime, stime, cutime, cstime, 20, 0, 1]
    return f"{pid} ({name}) " + " ".join(map(str, rest)) + "\n"


def fake_proc(root: Path, procs: dict[int, tuple[int, tuple]], children: bool) -> None:
    for pid, (ppid, ticks) in procs.items():
        put(root, f"/proc/{pid}/stat", proc_stat(pid, ppid, ticks, name="a) (b"))
        if children:
            kids = [str(p) for p, (pp, _) in procs.items() if pp == pid]
            put(root, f"/proc/{pid}/task/{pid}/children", " ".join(kids))


@pytest.mark.parametrize("children", [True, False], ids=["children-lists", "scan"])
def test_the_labs_cpu_carries_on_when_a_child_exits(tmp_path, children):
    # 100 is the lab; 101 its driver, 102 the driver's implementation; 200 is someone else's.
    procs = {
        100: (1, (10, 5, 0, 0)),
        101: (100, (20, 10, 0, 0)),
        102: (101, (30, 0, 0, 0)),
        200: (1, (999, 999, 0, 0)),
    }
    fake_proc(tmp_path, procs, children)
    reader = ProcReader(tmp_path)
    assert reader.tree_ticks(100) == 75
    # 102 runs 6 more ticks and exits; 101 reaps it: its time moves into 101's cutime.
    for f in (tmp_path / "proc" / "102").rglob("*"):
        f.unlink() if f.is_file() else None
    procs.pop(102)
    procs[101] = (100, (21, 10, 36, 0))
    fake_proc(tmp_path, procs, children)
    if children:
        put(tmp_path, "/proc/101/task/101/children", "102")  # a stale entry: the child vanished
    assert reader.tree_ticks(100) == 82


def test_the_labs_cpu_includes_a_real_child_that_exited():
    reader = ProcReader()
    burn = "import sys, time\nsys.stdin.read(1)\nt = time.process_time()\n" + (
        "while time.process_time() - t < 0.2: pass\n"
    )
    child = subprocess.Popen([sys.executable, "-c", burn], stdin=subprocess.PIPE)
    try:
        assert child.pid in reader._tree(os.getpid())
        before = reader.tree_ticks(os.getpid())
        child.communicate(b"x", timeout=60)
    finally:
        child.kill()
    assert child.returncode == 0
    after = reader.tree_ticks(os.getpid())
    assert child.pid not in reader._tree(os.getpid())
    assert after - before >= 0.15 * os.sysconf("SC_CLK_TCK")  # the child's 0.2 s of CPU


# --- the report ---------------------------------------------------------------------------------


def test_environment_shows_the_fingerprint_and_the_load_and_a_busy_run_says_so_first(tmp_path):
    fp = machine.fingerprint(make_machine(tmp_path), detect=no_tool)
    fake = FakeMachine()
    w = watch(fake, cpus=[0, 1])
    w.start()
    load = w.stop()
    run = {"id": "r1", "profile": "smoke", "machine": fp, "load": load}
    doc = document.build({"run": run, "workloads": [], "results": []}, with_charts=False)
    first = doc.blocks[0]
    assert first.cls == "warn" and first.text.startswith("**The machine was busy during this run**")
    assert "other work took 1.00 CPU on average during the trials" in first.text
    text = repr(doc.blocks)
    for shown in (fp["fingerprint_id"], "L3 32768K", "cgroup", "VM: unknown", "CPUs watched"):
        assert shown in text
    assert "mean 1.00 CPU, max 1.00 CPU" in text  # other work during
    assert "load average before" in text and "1.5 1 0.5" in text

    quiet = dict(run, load={**load, "busy": False, "reasons": []})
    doc = document.build({"run": quiet, "workloads": [], "results": []}, with_charts=False)
    assert not environment.busy_banner(quiet)
    assert "busy during this run" not in repr(doc.blocks)


def test_a_run_from_before_issue_13_still_renders_its_machine():
    old = {
        "cpu_model": "AMD EPYC",
        "cores": 2,
        "usable_cpus": [0, 1],
        "kernel": "6.1",
        "os": "Debian",
        "memory_gib": 23.5,
        "hostname": "old-host",
        "governor": "n/a",
        "virtualized": True,
        "loadavg": ["1.0", "0.5", "0.2"],
    }
    run = {"id": "old", "machine": old}
    assert environment.busy_banner(run) == ""
    doc = document.build({"run": run, "workloads": [], "results": []}, with_charts=False)
    text = repr(doc.blocks)
    assert "old-host" in text and "virtualized" in text and "Load" not in text
    assert "fingerprint" not in text


def test_marked_processes_count_as_the_labs_own_across_their_exit():
    """A run on Ray starts its drivers through Ray's processes: the load watch counts the
    processes marked with the run's token, and, once one is reaped, its time in the parent that
    reaped it, so the sum never drops when a marked process exits."""
    import subprocess
    import sys
    import time

    from msgbench import loadwatch

    reader = loadwatch.ProcReader()
    reader.marker = b"MSGBENCH_TEST_MARK=7f3a"
    assert reader.marked_ticks(set()) == 0  # nothing marked yet
    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    child = subprocess.Popen(
        [sys.executable, "-c", spin + "time.sleep(30)"],
        env={"MSGBENCH_TEST_MARK": "7f3a", "PATH": "/usr/bin:/bin"},
    )
    try:
        deadline = time.monotonic() + 20
        while (alive := reader.marked_ticks(set())) < 20 and time.monotonic() < deadline:
            time.sleep(0.1)  # 0.3 s of CPU: at least 20 ticks at 100 Hz
        assert alive >= 20
    finally:
        child.kill()
        child.wait()
    assert reader.marked_ticks(set()) >= alive, "its time moved into this process's cutime"
