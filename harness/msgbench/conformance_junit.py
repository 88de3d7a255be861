"""What the conformance plugin records on every test, and reading it back from JUnit XML.

The plugin (conformance_plugin.py) writes these as JUnit properties of each test case; verify.py
and the suites' self-tests read them here. Nothing is recovered from test ids or skip messages:
an id's shape is pytest's business, a skip message is for people.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

IMPL = "impl"  # the implementation under test (for a test of a client alone: the client's)
CLIENT = "client"  # the implementation whose client program the test runs (interop tests)
CASE = "case"  # the test's name without the implementation: test_x[params]
APPLICABLE = "applicable"  # "yes", or "n/a" when a skip marker of the implementation applies
NA_REASON = "na_reason"  # why it is n/a (which skip marker of which impl.toml)
DEVIATION = "deviation"  # a known deviation of a reference system ([conformance.deviations])
YES, NA = "yes", "n/a"


@dataclass(frozen=True)
class CaseResult:
    case: str
    impl: str | None
    client: str | None
    applicable: bool
    na_reason: str
    outcome: str  # passed | failed | skipped | deviation (failed, as its impl.toml declares)
    message: str  # the failure's message, the skip's reason, or the deviation's reason


def read(xml_path: Path) -> list[CaseResult]:
    """Every test case of a pytest --junitxml file, with the plugin's properties."""
    out = []
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value", "") for p in case.iter("property")}
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, message = "failed", child.get("message") or child.text or ""
                break
            if child.tag == "skipped":
                outcome, message = "skipped", child.get("message", "")
                if child.get("type") == "pytest.xfail" and props.get(DEVIATION):
                    outcome, message = "deviation", props[DEVIATION]
        out.append(
            CaseResult(
                case=props.get(CASE) or case.get("name", ""),
                impl=props.get(IMPL),
                client=props.get(CLIENT),
                applicable=props.get(APPLICABLE, YES) != NA,
                na_reason=props.get(NA_REASON, ""),
                outcome=outcome,
                message=message.strip(),
            )
        )
    return out
