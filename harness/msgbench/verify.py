"""Running a workload's conformance suite against implementations and reading the matrix.

The suite is plain pytest (workloads/<w>/conformance) with the lab's plugin
(conformance_plugin.py); this module runs it once for all the selected implementations with
--junitxml and turns the properties the plugin records on each test (implementation, client,
applicability) into one row per implementation. Test ids and skip messages are never parsed.
"""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import conformance_junit, machine, paths
from .registry import Impl, Workload

VERIFY_TIMEOUT_S = 1800


@dataclass
class Verdict:
    workload: str
    impl: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    deviations: int = 0  # known deviations of a reference system (impl.toml), failed as declared
    tests: dict[str, str] = field(default_factory=dict)  # test -> pass|FAIL|n/a|skip|deviation
    failures: list[dict] = field(default_factory=list)
    deviation_reasons: dict[str, str] = field(default_factory=dict)  # test -> why (impl.toml)
    # Interop tests: test -> the implementation whose client program it ran (the test names
    # also read `client=<id>`, which the report's interoperability matrix uses).
    clients: dict[str, str] = field(default_factory=dict)
    error: str = ""  # the suite itself could not run
    # Not applicable: the implementation is absent (impl.toml `absent`), with the reason. Not a
    # failure and not "not built"; the runner then skips it in every scenario with the reason.
    absent: str = ""

    @property
    def ok(self) -> bool:
        """Nothing in conformance stands in the way of measuring it: the suite passed, or
        the implementation is absent (then the runner skips it, saying why)."""
        if self.absent:
            return True
        return self.failed == 0 and not self.error and self.passed > 0

    def as_json(self) -> dict:
        return {
            "workload": self.workload,
            "impl": self.impl,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "deviations": self.deviations,
            "deviation_reasons": self.deviation_reasons,
            "tests": self.tests,
            "failures": self.failures,
            "clients": self.clients,
            "error": self.error,
            "absent": self.absent,
        }


def parse_junit(xml_path: Path, workload: str, impl_ids: list[str]) -> dict[str, Verdict]:
    """One verdict per implementation from the JUnit properties the plugin recorded; a test
    without an implementation (the suite's self-test) belongs to none."""
    verdicts = {i: Verdict(workload, i) for i in impl_ids}
    for r in conformance_junit.read(xml_path):
        v = verdicts.get(r.impl or "")
        if v is None:
            continue
        if r.client:
            v.clients[r.case] = r.client
        if r.outcome == "failed":
            v.failed += 1
            v.tests[r.case] = "FAIL"
            first = r.message.splitlines()[0][:300] if r.message else ""
            v.failures.append({"test": r.case, "message": first})
        elif r.outcome == "deviation":
            v.deviations += 1
            v.tests[r.case] = "deviation"
            v.deviation_reasons[r.case] = r.message
        elif r.outcome == "skipped":
            v.skipped += 1
            v.tests[r.case] = "skip" if r.applicable else "n/a"
        else:
            v.passed += 1
            v.tests[r.case] = "pass"
    return verdicts


def jobs_default() -> int:
    """Suites spend most of their time waiting on sockets and child processes (a redis session
    uses ~40% of one CPU): one session more than there are CPUs keeps them busy."""
    return max(1, len(machine.usable_cpus())) + 1


def run(
    workload: Workload,
    impls: list[Impl],
    log_dir: Path,
    extra_args: list[str] = (),
    jobs: int | None = None,
) -> dict[str, Verdict]:
    """Run the suite for each of `impls`, one pytest session per implementation, `jobs` at a
    time; a not-built implementation is a verdict with an error. Every test of a session is
    about its one implementation (interop tests: its server against every client), so the
    sessions are independent and their verdicts the same as one session's would be."""
    log_dir.mkdir(parents=True, exist_ok=True)
    verdicts: dict[str, Verdict] = {}
    for i in impls:
        if i.absent:
            verdicts[i.id] = Verdict(workload.name, i.id, absent=i.absent)
        elif not i.built:
            verdicts[i.id] = Verdict(
                workload.name,
                i.id,
                error=f"not built (run `./msgbench build {workload.name} --impl {i.id}`)",
            )
    built = [i for i in impls if i.built and not i.absent]
    with ThreadPoolExecutor(max_workers=jobs or jobs_default()) as pool:
        futures = {i.id: pool.submit(_run_one, workload, i, log_dir, extra_args) for i in built}
        for impl_id, future in futures.items():
            verdicts[impl_id] = future.result()
    return {i.id: verdicts[i.id] for i in impls}


def _run_one(workload: Workload, impl: Impl, log_dir: Path, extra_args) -> Verdict:
    xml_path = log_dir / f"verify-{workload.name}-{impl.id}.xml"
    log_path = log_dir / f"verify-{workload.name}-{impl.id}.log"
    argv = [
        str(paths.VENV_PYTHON),
        "-m",
        "pytest",
        str(workload.conformance_dir),
        "-q",
        "-p",
        "no:cacheprovider",
        f"--junitxml={xml_path}",
        "--impl",
        impl.id,
        *extra_args,
    ]
    xml_path.unlink(missing_ok=True)
    with open(log_path, "w") as log:
        try:
            subprocess.run(
                argv,
                cwd=paths.ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=VERIFY_TIMEOUT_S,
                # The suite must see the registry this process sees (a workloads folder elsewhere).
                env={**os.environ, "MSGBENCH_WORKLOADS": str(paths.WORKLOADS)},
            )
        except subprocess.TimeoutExpired:
            pass
    if not xml_path.exists():
        return Verdict(
            workload.name,
            impl.id,
            error=f"conformance suite did not run; see {paths.rel(log_path)}",
        )
    v = parse_junit(xml_path, workload.name, [impl.id])[impl.id]
    if v.passed == 0 and v.failed == 0:
        v.error = f"no conformance test ran; see {paths.rel(log_path)}"
    return v
