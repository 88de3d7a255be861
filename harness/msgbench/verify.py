"""Running a workload's conformance suite against implementations and reading the matrix.

The suite is plain pytest (workloads/<w>/conformance); this module runs it once for all the
selected implementations with --junitxml and turns the XML into one row per implementation.
"""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from . import paths
from .registry import Impl, Workload

VERIFY_TIMEOUT_S = 1800
_PARAM = re.compile(r"^(?P<test>[^\[]+)\[(?P<params>.+)\]$")


@dataclass
class Verdict:
    workload: str
    impl: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    tests: dict[str, str] = field(default_factory=dict)  # test -> pass | FAIL | n/a | skip
    failures: list[dict] = field(default_factory=list)
    error: str = ""  # the suite itself could not run

    @property
    def ok(self) -> bool:
        return self.failed == 0 and not self.error and self.passed > 0

    def as_json(self) -> dict:
        return {
            "workload": self.workload,
            "impl": self.impl,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "tests": self.tests,
            "failures": self.failures,
            "error": self.error,
        }


def _split_param(params: str, impl_ids) -> tuple[str, str] | None:
    """Find the implementation id in a pytest parameter id such as `c`, `c-nested`, `nested-c`."""
    for impl in sorted(impl_ids, key=len, reverse=True):
        if params == impl:
            return impl, ""
        if params.startswith(impl + "-"):
            return impl, params[len(impl) + 1 :]
        if params.endswith("-" + impl):
            return impl, params[: -len(impl) - 1]
    return None


def parse_junit(xml_path: Path, workload: str, impl_ids: list[str]) -> dict[str, Verdict]:
    verdicts = {i: Verdict(workload, i) for i in impl_ids}
    root = ET.parse(xml_path).getroot()
    for case in root.iter("testcase"):
        m = _PARAM.match(case.get("name", ""))
        if not m:
            continue
        found = _split_param(m["params"], verdicts)
        if found is None:
            continue
        impl, extra = found
        name = f"{m['test']}[{extra}]" if extra else m["test"]
        v = verdicts[impl]
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        skipped = case.find("skipped")
        if failure is not None:
            v.failed += 1
            v.tests[name] = "FAIL"
            message = (failure.get("message") or failure.text or "").strip()
            v.failures.append(
                {"test": name, "message": message.splitlines()[0][:300] if message else ""}
            )
        elif skipped is not None:
            v.skipped += 1
            reason = skipped.get("message", "")
            v.tests[name] = "n/a" if "n/a for" in reason else "skip"
        else:
            v.passed += 1
            v.tests[name] = "pass"
    return verdicts


def run(
    workload: Workload, impls: list[Impl], log_dir: Path, extra_args: list[str] = ()
) -> dict[str, Verdict]:
    """Run the suite once for `impls`; a not-built implementation is a verdict with an error."""
    log_dir.mkdir(parents=True, exist_ok=True)
    xml_path = log_dir / f"verify-{workload.name}.xml"
    log_path = log_dir / f"verify-{workload.name}.log"
    built = [i for i in impls if i.built]
    verdicts: dict[str, Verdict] = {}
    for i in impls:
        if not i.built:
            verdicts[i.id] = Verdict(workload.name, i.id, error="not built (run `msgbench build`)")
    if not built:
        return verdicts
    argv = [
        str(paths.VENV_PYTHON),
        "-m",
        "pytest",
        str(workload.conformance_dir),
        "-q",
        "-p",
        "no:cacheprovider",
        f"--junitxml={xml_path}",
        *[a for i in built for a in ("--impl", i.id)],
        *extra_args,
    ]
    xml_path.unlink(missing_ok=True)
    with open(log_path, "w") as log:
        try:
            subprocess.run(
                argv, cwd=paths.ROOT, stdout=log, stderr=subprocess.STDOUT, timeout=VERIFY_TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            pass
    if not xml_path.exists():
        for i in built:
            verdicts[i.id] = Verdict(
                workload.name,
                i.id,
                error=f"conformance suite did not run; see {paths.rel(log_path)}",
            )
        return verdicts
    parsed = parse_junit(xml_path, workload.name, [i.id for i in built])
    for i in built:
        v = parsed[i.id]
        if v.passed == 0 and v.failed == 0:
            v.error = f"no conformance test ran; see {paths.rel(log_path)}"
        verdicts[i.id] = v
    return {i.id: verdicts[i.id] for i in impls}
