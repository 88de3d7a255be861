"""The machine fingerprint and repository state recorded with every run."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

from . import paths


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def os_name() -> str:
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return platform.system()


def memory_gib() -> float:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 2**20, 1)
    return 0.0


def usable_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def fingerprint() -> dict:
    governor = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").strip()
    return {
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "usable_cpus": usable_cpus(),
        "kernel": platform.release(),
        "os": os_name(),
        "memory_gib": memory_gib(),
        "hostname": platform.node(),
        "governor": governor or "n/a",
        "virtualized": "hypervisor" in _read("/proc/cpuinfo"),
        "loadavg": _read("/proc/loadavg").split()[:3],
    }


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
