"""The machine fingerprint and repository state recorded with every run.

Every reader takes `root`, the prefix under which it finds /proc, /sys and /etc: the real root
by default, a fixture tree in tests. A reader returns an empty value ("", {}, None) for what the
machine does not show (a container hides DMI, most VMs hide cpufreq); it never raises.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from . import paths

ROOT = Path("/")

#: A cgroup v1 memory limit at or above this is "no limit" (the kernel writes ~2**63 rounded
#: down to a page there).
_NO_MEMORY_LIMIT = 2**60


def _read(root: Path, path: str) -> str:
    try:
        return (root / path.lstrip("/")).read_text()
    except (OSError, ValueError):  # missing, unreadable, or not text
        return ""


def _cpuinfo(root: Path, field: str) -> str:
    """The first value of `field` in /proc/cpuinfo (cpu0's), '' when there is none."""
    for line in _read(root, "/proc/cpuinfo").splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() == field:
            return value.strip()
    return ""


def cpu_model(root: Path = ROOT) -> str:
    return (
        _cpuinfo(root, "model name") or (platform.processor() if root == ROOT else "") or "unknown"
    )


def cores(root: Path = ROOT) -> int:
    """The online CPUs (os.cpu_count() reads the same; counted here so a fixture tree works)."""
    n = sum(1 for line in _read(root, "/proc/cpuinfo").splitlines() if line.startswith("processor"))
    if n or root != ROOT:
        return n
    return os.cpu_count() or 0


def caches(root: Path = ROOT) -> dict[str, str]:
    """cpu0's caches as the kernel sizes them: {"L1d": "32K", "L1i": "32K", "L2": "1024K", ...}."""
    base = root / "sys/devices/system/cpu/cpu0/cache"
    try:
        dirs = [d for d in base.iterdir() if d.name.startswith("index")]
    except OSError:
        return {}
    out = {}
    for d in sorted(dirs, key=lambda d: int(d.name[5:]) if d.name[5:].isdigit() else 99):
        level = _read(d, "level").strip()
        size = _read(d, "size").strip()
        kind = _read(d, "type").strip()
        if level and size:
            out[f"L{level}" + {"Data": "d", "Instruction": "i"}.get(kind, "")] = size
    return out


def frequency_mhz(root: Path = ROOT) -> dict[str, float]:
    """cpu0's clock: `cpuinfo` (what /proc/cpuinfo says now; a VM often shows the host's nominal
    clock), `current` and `max` (cpufreq, when the kernel exposes it)."""
    out = {}
    try:
        out["cpuinfo"] = round(float(_cpuinfo(root, "cpu MHz")), 1)
    except ValueError:
        pass
    for name, key in (("current", "scaling_cur_freq"), ("max", "cpuinfo_max_freq")):
        khz = _read(root, f"/sys/devices/system/cpu/cpu0/cpufreq/{key}").strip()
        if khz.isdigit():
            out[name] = round(int(khz) / 1000, 1)
    return out


def governor(root: Path = ROOT) -> str:
    return _read(root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").strip() or "n/a"


def kernel(root: Path = ROOT) -> str:
    return _read(root, "/proc/sys/kernel/osrelease").strip() or (
        platform.release() if root == ROOT else ""
    )


def hostname(root: Path = ROOT) -> str:
    return _read(root, "/proc/sys/kernel/hostname").strip() or (
        platform.node() if root == ROOT else ""
    )


def os_name(root: Path = ROOT) -> str:
    for line in _read(root, "/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return platform.system()


def memory_gib(root: Path = ROOT) -> float:
    for line in _read(root, "/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 2**20, 1)
    return 0.0


def usable_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def _systemd_detect_virt(option: str) -> str | None:
    """`systemd-detect-virt --vm` or `--container`: the kind, "none", or None without the tool."""
    if not shutil.which("systemd-detect-virt"):
        return None
    try:
        r = subprocess.run(
            ["systemd-detect-virt", option], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() or None


def virtualization(root: Path = ROOT, detect: Callable[[str], str | None] | None = None) -> dict:
    """What the lab runs inside: `vm` and `container` (the kind systemd-detect-virt names, "none",
    or None when nothing can tell), `hypervisor_flag` (the CPU says it runs under one) and `dmi`
    (the firmware's vendor and product: "QEMU Standard PC", "Amazon EC2 m5.large")."""
    if detect is None:
        # The tool describes the real machine, never a fixture tree.
        detect = _systemd_detect_virt if root == ROOT else (lambda _: None)
    flag = "hypervisor" in _cpuinfo(root, "flags").split()
    container = detect("--container")
    if container is None:
        for marker, kind in ((".dockerenv", "docker"), ("run/.containerenv", "podman")):
            if (root / marker).exists():
                container = kind
    dmi = " ".join(
        _read(root, f"/sys/class/dmi/id/{f}").strip() for f in ("sys_vendor", "product_name")
    ).strip()
    return {"vm": detect("--vm"), "container": container, "hypervisor_flag": flag, "dmi": dmi}


def _mounts(root: Path) -> tuple[tuple[str, str] | None, dict[str, tuple[str, str]]]:
    """The cgroup mounts from /proc/self/mountinfo: the v2 one as (root in the hierarchy,
    mount point), and {v1 controller: (root in the hierarchy, mount point)}."""
    v2, v1 = None, {}
    for line in _read(root, "/proc/self/mountinfo").splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 3:
            continue
        where = (fields[3], fields[4])
        if tail[0] == "cgroup2":
            v2 = v2 or where
        elif tail[0] == "cgroup":
            for opt in tail[2].split(","):
                v1.setdefault(opt, where)
    return v2, v1


def _cgroup_dir(root: Path, path: str, mount: tuple[str, str]) -> tuple[Path, Path]:
    """(the cgroup's directory, its mount point) for a /proc/self/cgroup path. A path outside
    the mount's root (a container that sees only its own cgroup) is the mount point itself."""
    hier_root, point = mount
    top = root / point.lstrip("/")
    rel = os.path.relpath(path, hier_root) if hier_root != "/" else path.lstrip("/")
    if rel.startswith(".."):
        return top, top
    return (top / rel if rel not in ("", ".") else top), top


def _up(leaf: Path, top: Path) -> list[Path]:
    """leaf and each of its parents up to top: a limit set higher up binds this cgroup too."""
    out = [leaf]
    while out[-1] != top and top in out[-1].parents:
        out.append(out[-1].parent)
    return out


def _tightest(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return min(known) if known else None


def _v2_quota(text: str) -> float | None:
    quota, _, period = text.strip().partition(" ")
    if quota.isdigit() and period.isdigit() and int(period):
        return int(quota) / int(period)
    return None


def _v1_quota(quota: str, period: str) -> float | None:
    q, p = quota.strip(), period.strip()
    if q.isdigit() and p.isdigit() and int(p):  # "-1" (no quota) is not digits
        return int(q) / int(p)
    return None


def _bytes_limit(text: str) -> float | None:
    text = text.strip()
    if text.isdigit() and int(text) < _NO_MEMORY_LIMIT:
        return int(text)
    return None


def cgroup_limits(root: Path = ROOT) -> dict:
    """The cgroup limits this process runs under: `version` ("v2", "v1" when the controllers are
    v1 ones, as on a hybrid host, or "none"), `cpu_quota` (CPUs' worth of time per period; None
    = no quota), `cpuset` (the CPUs allowed, kernel list syntax), `memory_limit_gib` (None = no
    limit). Quotas and memory limits are the tightest of the cgroup and its parents."""
    procs: dict[str, str] = {}
    for line in _read(root, "/proc/self/cgroup").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for ctrl in parts[1].split(",") if parts[1] else [""]:
                procs[ctrl] = parts[2]
    if not procs:
        return {"version": "none", "cpu_quota": None, "cpuset": None, "memory_limit_gib": None}
    v2_mount, v1_mounts = _mounts(root)
    v1_mounts = {
        c: v1_mounts.get(c, ("/", f"/sys/fs/cgroup/{c}")) for c in ("cpu", "cpuset", "memory")
    }
    v1 = any(c in procs for c in ("cpu", "cpuset", "memory"))
    if v1:
        cpu_dir, cpu_top = _cgroup_dir(root, procs.get("cpu", "/"), v1_mounts["cpu"])
        quota = _tightest(
            [_v1_quota(_read(d, "cpu.cfs_quota_us"), _read(d, "cpu.cfs_period_us"))
             for d in _up(cpu_dir, cpu_top)]
        )  # fmt: skip
        set_dir, set_top = _cgroup_dir(root, procs.get("cpuset", "/"), v1_mounts["cpuset"])
        cpusets = [_read(d, f).strip() for d in _up(set_dir, set_top)
                   for f in ("cpuset.effective_cpus", "cpuset.cpus")]  # fmt: skip
        mem_dir, mem_top = _cgroup_dir(root, procs.get("memory", "/"), v1_mounts["memory"])
        memory = _tightest([_bytes_limit(_read(d, "memory.limit_in_bytes"))
                            for d in _up(mem_dir, mem_top)])  # fmt: skip
    else:
        leaf, top = _cgroup_dir(root, procs.get("", "/"), v2_mount or ("/", "/sys/fs/cgroup"))
        chain = _up(leaf, top)
        quota = _tightest([_v2_quota(_read(d, "cpu.max")) for d in chain])
        cpusets = [_read(d, "cpuset.cpus.effective").strip() for d in chain]
        memory = _tightest([_bytes_limit(_read(d, "memory.max")) for d in chain])
    return {
        "version": "v1" if v1 else "v2",
        "cpu_quota": round(quota, 2) if quota is not None else None,
        "cpuset": next((c for c in cpusets if c), None),
        "memory_limit_gib": round(memory / 2**30, 2) if memory is not None else None,
    }


def fingerprint_id(machine: dict) -> str:
    """A short, stable name for the hardware a run was measured on, computed from its
    fingerprint: CPU model, cores, caches, installed memory and what it runs inside. Not the
    hostname, kernel, frequency, cgroup limits or load: those change between runs on one machine
    (docs/decisions.md, issue 13), and history must see such runs as one series."""
    virt = machine.get("virtualization") or {}
    vm = virt.get("vm") or ("unknown-vm" if virt.get("hypervisor_flag") else "none")
    identity = {
        "cpu_model": machine.get("cpu_model", ""),
        "cores": machine.get("cores", 0),
        "caches": machine.get("caches") or {},
        # MemTotal is the installed memory less the kernel's reservations, which move a little
        # with the kernel: rounded up to whole GiB it is the installed size and stays put.
        "memory_gib": math.ceil(machine.get("memory_gib") or 0),
        "virtualization": f"{vm}/{virt.get('container') or 'none'}",
    }
    blob = json.dumps(identity, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def fingerprint(root: Path = ROOT, detect: Callable[[str], str | None] | None = None) -> dict:
    virt = virtualization(root, detect)
    fp = {
        "cpu_model": cpu_model(root),
        "cores": cores(root),
        "usable_cpus": usable_cpus(),
        "caches": caches(root),
        "frequency_mhz": frequency_mhz(root),
        "governor": governor(root),
        "kernel": kernel(root),
        "os": os_name(root),
        "memory_gib": memory_gib(root),
        "hostname": hostname(root),
        "virtualized": virt["hypervisor_flag"] or virt["vm"] not in (None, "none"),
        "virtualization": virt,
        "cgroup": cgroup_limits(root),
        # Read when the run header is made, after the trials; run.load has the load before
        # and during them.
        "loadavg": _read(root, "/proc/loadavg").split()[:3],
    }
    return {"fingerprint_id": fingerprint_id(fp), **fp}


def git_state() -> tuple[str, bool]:
    """(commit, dirty). 'unknown' outside a git checkout."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=paths.ROOT, capture_output=True, text=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=paths.ROOT,
            capture_output=True,
            text=True,
        ).stdout
    except OSError:
        return "unknown", False
    return commit or "unknown", bool(status.strip())
