"""The sanitize build profile at run time: the sanitizers' options and their reports.

Programs of the sanitize profile (C and C++ with AddressSanitizer + UndefinedBehaviorSanitizer,
Go with the race detector; profiles.toml [sanitize], docs/decisions.md "Sanitizer builds") write
every report to a file in a folder of their conformance session and exit with status 86. The
pytest plugin `msgbench.sanitize_plugin` sets the options for a session and fails the test
during which a report appeared; `msgbench verify --profile sanitize` loads that plugin and turns
a report no test claimed into an error of the implementation's verdict.

`python -m msgbench.sanitize` prints the options as shell `export` lines without the report
files (reports on stderr, where ctest and go test show them): scripts/check-deep.sh runs the
unit tests under them.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from . import paths, profiles

# Exit status of a program ended by a sanitizer or race report (profiles.toml: exitcode).
EXIT_STATUS = 86
# Separator of each variable's key=value pairs (the sanitizers' own syntax; GORACE's is spaces).
_SEPARATORS = {"GORACE": " "}
# Lines that say what a report is, in the order they are looked for.
_SUMMARY_MARKS = ("SUMMARY:", "runtime error:", "WARNING: DATA RACE", "ERROR:")


def environment(report_dir: Path | None) -> dict[str, str]:
    """ASAN_OPTIONS, UBSAN_OPTIONS, LSAN_OPTIONS and GORACE from profiles.toml, with reports
    written under `report_dir`; None leaves the reports on stderr (log_path dropped)."""
    out = {}
    for var, options in profiles.sanitize()["env"].items():
        pairs = []
        for key, value in options.items():
            if key == "log_path" and report_dir is None:
                continue
            if isinstance(value, bool):
                value = int(value)
            text = str(value).format(reports=report_dir, root=paths.ROOT)
            pairs.append(f"{key}={text}")
        out[var] = _SEPARATORS.get(var, ":").join(pairs)
    return out


def not_applicable(workload: str, test: str, language: str | None, impl: str | None = None) -> str:
    """Why a conformance test (its function name, or one case: test_x[params]) does not apply
    to a sanitize build of this implementation (id, language), from profiles.toml
    [sanitize.not_applicable]; "" when it applies."""
    entry = profiles.sanitize().get("not_applicable", {}).get(workload, {}).get(test)
    if entry is None:
        return ""
    if isinstance(entry, str):
        return entry
    for key, value in (("languages", language), ("impls", impl)):
        if key in entry and value not in entry[key]:
            return ""
    return entry["why"]


def report_dir(workload: str, impl_ids: list[str]) -> Path:
    """The folder of one conformance session's reports (all of a workload's: `all`)."""
    return paths.SANITIZER_REPORTS / workload / ("+".join(impl_ids) or "all")


def reports(folder: Path) -> list[Path]:
    """The report files in a session's folder, oldest first."""
    if not folder.is_dir():
        return []
    files = [p for p in folder.iterdir() if p.is_file()]
    return sorted(files, key=lambda p: (p.stat().st_mtime, p.name))


def summary(report: Path) -> str:
    """One line that says what a report found (its SUMMARY line when it has one)."""
    try:
        lines = report.read_text(errors="replace").splitlines()
    except OSError:
        return "(report unreadable)"
    root = f"{paths.ROOT}/"
    for mark in _SUMMARY_MARKS:
        for line in lines:
            if mark in line:
                return line.strip().lstrip("=").strip().replace(root, "")[:300]
    return next((x.strip()[:300] for x in lines if x.strip()), "(empty report)")


def describe(files: list[Path]) -> str:
    """Reports as the lines a failure message shows: what each found and where it is."""
    return "\n".join(f"{summary(p)} (report: {paths.rel(p)})" for p in files)


def main() -> None:
    for var, value in environment(None).items():
        print(f"export {var}={shlex.quote(value)}")


if __name__ == "__main__":
    sys.exit(main())
