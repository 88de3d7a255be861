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
    """The matrix and the failing tests' messages as (title, message)."""
    verify = _verify(wl, results)
    cols = [i for i in impls if i.id in verify]
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
    totals = [Cell("passed / failed / n/a", "muted")]
    for imp in cols:
        v = verify[imp.id]
        failed = v.get("failed", 0)
        cls = "num fail" if failed else "num pass"
        totals.append(Cell(f"{v.get('passed', 0)} / {failed} / {v.get('skipped', 0)}", cls))
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
            else:
                cells.append(Cell(state or "—", "muted"))
        rows.append(cells)
    failures = [
        (f"{imp.id}: {f.get('test', '?')}", f.get("message", ""))
        for imp in cols
        for f in verify[imp.id].get("failures") or []
    ]
    table = Table(headers, rows, [False] * len(headers), cls="matrix")
    not_verified = [i.id for i in impls if i.id not in verify]
    if not_verified:
        table.caption = "not verified in this run: " + ", ".join(not_verified)
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
    rows = []
    for client in clients:
        cells = [Cell(f"{client.id} client", "impl", color=client.color)]
        for server in servers:
            states = pairs.get((client.id, server.id), [])
            if not states:
                cells.append(Cell("—", "muted"))
            elif any(s == "FAIL" for s in states):
                cells.append(Cell("FAIL", "fail"))
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
