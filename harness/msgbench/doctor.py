"""`msgbench doctor`: what this machine has, what is missing, and the exact fix for each."""

from __future__ import annotations

import importlib.util
import os
import subprocess

from rich.console import Console
from rich.table import Table

from . import machine, paths, registry, toolchains

PYTHON_MODULES = ("click", "rich", "numpy", "matplotlib", "lizard", "pytest")


def pinning_works(cpu: int) -> bool:
    """Can a child process be pinned to `cpu`? (cgroups or containers may forbid it.)"""
    try:
        r = subprocess.run(["taskset", "-c", str(cpu), "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def run(console: Console) -> list[str]:
    """Print the checks; return the list of problems (empty = healthy)."""
    problems: list[str] = []
    table = Table("check", "found", "fix", title="msgbench doctor")

    for tool in toolchains.TOOLS:
        v = toolchains.version(tool)
        table.add_row(tool.name, v or "[red]missing[/]", "" if v else tool.fix)
        if not v:
            problems.append(f"{tool.name}: {tool.fix}")

    missing = toolchains.missing_apt_packages()
    fix = f"apt-get install -y {' '.join(missing)}   (or: make setup)" if missing else ""
    table.add_row(
        "Debian packages",
        "[red]missing: " + " ".join(missing) + "[/]"
        if missing
        else f"all {len(toolchains.apt_packages())} installed",
        fix,
    )
    if missing:
        problems.append(fix)

    absent = [m for m in PYTHON_MODULES if importlib.util.find_spec(m) is None]
    table.add_row(
        "Python modules",
        "[red]missing: " + " ".join(absent) + "[/]" if absent else "ok",
        "make setup" if absent else "",
    )
    if absent:
        problems.append("Python modules missing: make setup")

    cpus = machine.usable_cpus()
    table.add_row("CPU", f"{machine.cpu_model()} — {os.cpu_count()} cores, usable {cpus}", "")
    if len(cpus) < 2:
        table.add_row("placement split", "[yellow]needs 2 CPUs[/]", "use --placement same")
    pin_ok = all(pinning_works(c) for c in cpus)
    table.add_row(
        "CPU pinning",
        "works" if pin_ok else "[red]refused[/]",
        "" if pin_ok else "run outside a restricted cgroup, or --placement none",
    )
    if not pin_ok:
        problems.append("CPU pinning refused: use --placement none")

    for w in registry.load().values():
        for impl in w.impls.values():
            if not impl.built and not impl.absent:
                table.add_row(f"{impl.name}", "[yellow]not built[/]", f"msgbench build {w.name}")
        for d in w.drivers.values():
            for program in d.missing():
                fix = f"apt-get install -y {program}   (or: make setup)"
                table.add_row(f"{w.name} driver {d.name}", f"[yellow]{program} missing[/]", fix)
            exe = w.driver(d.name)[0]
            if d.build.get("system") == "cargo" and not os.path.exists(exe):
                table.add_row(
                    f"{w.name} driver {d.name}", "[yellow]not built[/]", f"msgbench build {w.name}"
                )
    console.print(table)
    if problems:
        console.print(f"[red]{len(problems)} problem(s)[/]; run the fixes above, or `make setup`.")
    else:
        console.print("[green]ready[/] (binaries not yet built are built by `msgbench bench`).")
    console.print(f"venv: {paths.rel(paths.VENV)}")
    return problems
