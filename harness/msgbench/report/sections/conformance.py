"""The conformance matrix (tests × implementations) and the interoperability matrix (each
implementation's own client against each server) from the run's verify entries."""

from __future__ import annotations

import re

from ..inputs import ImplInfo
from ..model import Cell, Table


def _verify(wl: dict, results: dict) -> dict[str, dict]:
    name = wl["name"]
    return {v["impl"]: v for v in results.get("verify", []) if v.get("workload") == name}


def matrix(wl: dict, impls: list[ImplInfo], results: dict) -> tuple[Table, list]:
    """The matrix and the failing tests' messages as (title, message). A reference system's
    known deviations (impl.toml [conformance.deviations]) show as `deviation`, their reasons
    among the messages: measured all the same, since what the benchmark uses passed."""
    verify = _verify(wl, results)
    absent = [i for i in impls if i.absent or (verify.get(i.id) or {}).get("absent")]
    cols = [i for i in impls if i.id in verify and i not in absent]
    tests: list[str] = []
    for imp in cols:
        for t in (verify[imp.id].get("tests") or {}).keys():
            if t not in tests:
                tests.append(t)
        for f in verify[imp.id].get("failures") or []:
            if f.get("test") and f["test"] not in tests:
                tests.append(f["test"])
    headers = ["test"] + [i.id for i in cols]
    rows: list[list[Cell]] = []
    any_deviation = any(verify[i.id].get("deviations") for i in cols)
    totals = [
        Cell("passed / failed / n/a" + (" / known deviations" if any_deviation else ""), "muted")
    ]
    for imp in cols:
        v = verify[imp.id]
        failed = v.get("failed", 0)
        cls = "num fail" if failed else "num pass"
        text = f"{v.get('passed', 0)} / {failed} / {v.get('skipped', 0)}"
        if any_deviation:
            text += f" / {v.get('deviations', 0)}"
        totals.append(Cell(text, cls))
    rows.append(totals)
    for t in tests:
        cells = [Cell(t, "test")]
        for imp in cols:
            v = verify[imp.id]
            state = (v.get("tests") or {}).get(t)
            if state is None and any(f.get("test") == t for f in v.get("failures") or []):
                state = "fail"
            state = (state or "").lower()
            if state == "pass":
                cells.append(Cell("pass", "pass"))
            elif state in ("fail", "failed", "error"):
                cells.append(Cell("FAIL", "fail"))
            elif state in ("n/a", "na", "skip", "skipped"):
                cells.append(Cell("n/a" if state in ("n/a", "na") else "skip", "na"))
            elif state == "deviation":
                cells.append(Cell("deviation", "na"))
            else:
                cells.append(Cell(state or "—", "muted"))
        rows.append(cells)
    failures = [
        (f"{imp.id}: {f.get('test', '?')}", f.get("message", ""))
        for imp in cols
        for f in verify[imp.id].get("failures") or []
    ] + [
        (f"{imp.id}: {test} (known deviation)", why)
        for imp in cols
        for test, why in (verify[imp.id].get("deviation_reasons") or {}).items()
    ]
    table = Table(headers, rows, [False] * len(headers), cls="matrix")
    not_verified = [i.id for i in impls if i.id not in verify and i not in absent]
    notes = ["not verified in this run: " + ", ".join(not_verified)] if not_verified else []
    if absent:  # not a column of n/a: nothing to test; the reason is under the workload's heading
        notes.append(
            "not applicable: "
            + ", ".join(absent_i.id for absent_i in absent)
            + " (absent: no program to test; why: under the workload's heading)"
        )
    table.caption = "; ".join(notes)
    return table, failures


# Runs stored before verify recorded each interop test's client read it from the test id.
_CLIENT_PARAM = re.compile(r"(?:^|[-\[])client=(?P<client>[^\]-]+)")


def _client_of(v: dict, test: str) -> str:
    """The implementation whose client program the test ran ("" when not an interop test):
    the verify entry's `clients` (from the conformance plugin's properties), or the id."""
    if "clients" in v:
        return (v.get("clients") or {}).get(test, "")
    m = _CLIENT_PARAM.search(test)
    return m["client"] if m else ""


def interop(wl: dict, impls: list[ImplInfo], results: dict) -> Table | None:
    """Interoperability tests (an implementation's own client against the server under test)
    folded into a client × server matrix: pass when every such test of that pair passed, FAIL
    when any failed."""
    verify = _verify(wl, results)
    pairs: dict[tuple[str, str], list[str]] = {}
    for server, v in verify.items():
        states = dict(v.get("tests") or {})
        for f in v.get("failures") or []:
            states[f.get("test", "")] = "FAIL"
        for test, state in states.items():
            client = _client_of(v, test)
            if client:
                pairs.setdefault((client, server), []).append(state)
    if not pairs:
        return None
    servers = [i for i in impls if i.id in verify]
    clients = [i for i in impls if any(c == i.id for c, _ in pairs)]
    # A third-party client (not an implementation of the lab, e.g. pychonet) that a suite ran
    # against the servers: its own row, named as the suite recorded it.
    known = {i.id for i in impls}
    third = sorted({c for c, _ in pairs if c not in known})
    rows = []
    for client_id, label, color in [(c.id, f"{c.id} client", c.color) for c in clients] + [
        (c, f"{c} (third party)", "") for c in third
    ]:
        cells = [Cell(label, "impl", color=color)]
        for server in servers:
            states = pairs.get((client_id, server.id), [])
            if not states:
                cells.append(Cell("—", "muted"))
            elif any(s == "FAIL" for s in states):
                cells.append(Cell("FAIL", "fail"))
            elif "deviation" in states:
                cells.append(Cell("deviation", "na", sub=f"{len(states)} tests"))
            elif all(s == "pass" for s in states):
                cells.append(Cell("pass", "pass", sub=f"{len(states)} tests"))
            else:
                cells.append(Cell("skip", "na"))
        rows.append(cells)
    return Table(
        ["client ↓ / server →"] + [i.id for i in servers],
        rows,
        [False] * (len(servers) + 1),
        caption="interoperability: each implementation's own client program against each "
        "server (every conformance test of that pair)",
        cls="matrix",
    )
