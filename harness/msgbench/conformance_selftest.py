"""The one mechanism of every suite's self-test (workloads/<w>/conformance/test_selftest.py).

A conformance test that passes everything proves nothing. Each suite keeps, in selftest/, one
program that behaves like a correct implementation, and like one with ONE classic mistake when
started with `--bug NAME` (`--list-bugs` names them). Its test_selftest.py runs chosen tests of
the suite against each bug, through `--impl-argv`, and asserts that they fail (for the named
reason), and that the same tests pass without a bug (so failures come from the bug, not from the
suite). Outcomes are read from the JUnit properties the plugin records (conformance_junit.py).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import uuid
from pathlib import Path

from . import conformance_junit
from .conformance_junit import CaseResult


def list_bugs(program: Path) -> list[str]:
    """The bugs a self-test program knows (`--list-bugs`)."""
    out = subprocess.run(
        [sys.executable, str(program), "--list-bugs"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return out.stdout.split()


def run_suite(
    suite: Path,
    impl_argv: list[str],
    workdir: Path,
    cases: list[str] | None = None,
    extra: list[str] = (),
    timeout: float = 600,
) -> dict[str, CaseResult]:
    """Run the suite (or only `cases`: case names or test functions) against the ad-hoc
    implementation `impl_argv` (an impl.toml [run] argv: {port}, {origin} filled in).
    Returns case name -> result."""
    junit = workdir / f"selftest-{uuid.uuid4().hex}.xml"
    cmd = [
        sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider",
        "-o", "addopts=", "--junitxml", str(junit), "--impl-argv", shlex.join(impl_argv),
        *[a for c in cases or () for a in ("--case", c)], *extra,
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=suite, capture_output=True, text=True, timeout=timeout)
    if not junit.exists():
        raise AssertionError(f"pytest did not run ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return {r.case: r for r in conformance_junit.read(junit) if r.impl is not None}


def uncaught(results: dict[str, CaseResult], must_fail: dict[str, str | None]) -> list[str]:
    """What the suite missed: each listed case must have FAILED, with the fragment (if any) in
    its message (the suite names the bug). A case name may be a test function: then at least
    one of its cases must have failed."""
    problems = []
    for name, fragment in must_fail.items():
        mine = [r for c, r in results.items() if c == name or c.split("[")[0] == name]
        failed = [r for r in mine if r.outcome == "failed"]
        if not failed:
            outcome = mine[0].outcome if mine else "not run"
            problems.append(f"{name} {outcome}: it does not catch the bug")
        elif fragment is not None and not any(fragment in r.message for r in failed):
            problems.append(f"{name} failed without naming the bug ({fragment!r}): "
                            f"{failed[0].message[:500]}")  # fmt: skip
    return problems


def not_passed(results: dict[str, CaseResult]) -> dict[str, str]:
    """Applicable cases that did not pass (the correct program must pass them all)."""
    return {
        c: f"{r.outcome}: {r.message[:300]}"
        for c, r in results.items()
        if r.outcome != "passed" and r.applicable
    }
