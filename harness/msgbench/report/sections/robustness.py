"""A workload's Robustness section: fuzzing (the committed record, totalled), the hostile-client
suite and the soak (the newest stored run of each), per implementation.

The run document carries them under `robustness.<workload>` (msgbench.robustness.evidence puts
them there when a report is written), so a report always says which runs its figures came from.
"""

from __future__ import annotations

from ...budget import fmt_duration
from ..model import Block, Cell, Para, Table


def robustness(wl: dict, results: dict) -> list[Block]:
    ev = (results.get("robustness") or {}).get(wl["name"])
    if not ev:
        return []
    blocks: list[Block] = []
    blocks += _fuzz(ev.get("fuzz") or [])
    blocks += _hostile(ev.get("hostile"))
    blocks += _soak(ev.get("soak"))
    return blocks


def _cov(row: dict) -> str:
    c = row.get("coverage") or {}
    if "cov" in c:
        of = f" of {c['counters']:,}" if c.get("counters") else ""
        return f"cov {c['cov']:,}{of} · ft {c.get('ft', 0):,}"
    if "families" in c:
        return f"{c['commands']} commands of {c['families']} families (differential)"
    if "corpus" in c:
        return f"corpus {c['corpus']:,} inputs (Go: growth, no edge count)"
    return "—"


def _fuzz(rows: list[dict]) -> list[Block]:
    if not rows:
        return [Para("No fuzzing campaign in the record yet (`msgbench fuzz`).", "muted")]
    table_rows = []
    for r in rows:
        crashes = r["crashes"]
        table_rows.append([
            Cell(r["impl"], "impl"), Cell(r["target"]), Cell(r["engine"]),
            Cell(fmt_duration(r["seconds"]), "num", sub=f"{r['campaigns']} campaigns"),
            Cell(f"{r['execs']:,}", "num"),
            Cell(_cov(r)),
            Cell(str(crashes), "fail" if r["last_status"] != "ok" else "num",
                 sub="last campaign: " + r["last_status"]),
        ])  # fmt: skip
    total = sum(r["seconds"] for r in rows)
    caption = (
        f"Coverage-guided fuzzing of each implementation's parsers, {fmt_duration(total)} in "
        "all, accumulated over every campaign in records/fuzz-campaigns.jsonl (all machines). "
        "Coverage is each fuzzer's own measure and is not comparable across engines: libFuzzer "
        "(C, C++, Rust, atheris for Python) counts edges reached (`cov`) of those instrumented "
        "and features (`ft`); Go reports only corpus growth; the `differential` rows are "
        "command sequences sent in lock-step with the reference system. Crashes: campaigns that "
        "ended on a finding (each fixed, with a regression test and input in the implementation)."
    )
    return [Para("**Fuzzing**"), Table(
        ["impl", "target", "engine", "fuzzed", "executions", "coverage", "crashes"],
        table_rows, [False, False, False, True, True, False, True], caption=caption,
    )]  # fmt: skip


def _hostile(doc: dict | None) -> list[Block]:
    if not doc:
        return [Para("No hostile-client run stored (`msgbench hostile WORKLOAD`).", "muted")]
    impls = doc.get("impls") or {}
    probes = []
    for v in impls.values():
        for p in v["probes"]:
            if p["probe"] not in probes:
                probes.append(p["probe"])
    rows = []
    for impl_id, v in impls.items():
        q = v.get("quiet") or {}
        cells = [Cell(impl_id, "impl"), Cell(_ms(q.get("p99_ms")), "num", sub="quiet p99")]
        by = {p["probe"]: p for p in v["probes"]}
        for name in probes:
            p = by.get(name)
            if not p:
                cells.append(Cell("—", "na"))
                continue
            c = p["client"]
            lat = _ms(c.get("p99_ms"))
            growth = p["rss_growth_kb"] / 1024
            sub = f"p99 {lat} · RSS +{growth:.1f} MiB"
            if c.get("failures"):
                sub += f" · {c['failures']} failed"
            if c.get("retries"):
                sub += f" · {c['retries']} asked again"
            cells.append(Cell("held" if p["held"] else "NOT HELD",
                              "pass" if p["held"] else "fail", sub=sub))  # fmt: skip
        rows.append(cells)
    run = doc.get("run") or {}
    caps = doc.get("caps") or {}
    caption = (
        f"Each probe attacks a fresh server for {doc.get('seconds_per_probe')} s from a process "
        "of its own while a well-behaved client makes one request at a time (its p99 latency "
        "under the attack is shown beside its quiet p99). **held**: the server stayed up, the "
        "client was served throughout, a new client was served after, and RSS grew at most "
        f"{caps.get('rss_growth_mib')} MiB (the SPEC's cap). Server on CPU "
        f"{(doc.get('placement') or {}).get('impl_cpu')}, attack and client on the others. "
        f"Run {run.get('id', '?')} (`{run.get('command', '')}`, commit "
        f"{(run.get('commit') or '')[:12]})."
    )
    return [Para("**Hostile clients**"), Table(
        ["impl", "quiet", *probes], rows, [False, True, *(False for _ in probes)], caption=caption
    )]  # fmt: skip


def _soak(doc: dict | None) -> list[Block]:
    if not doc:
        return []
    rows = []
    for impl_id, v in (doc.get("impls") or {}).items():
        rows.append([
            Cell(impl_id, "impl"),
            Cell("passed" if v.get("ok") else "FAILED", "pass" if v.get("ok") else "fail",
                 sub=v.get("verdict", "")),
            Cell(f"{v.get('operations', 0):,}", "num"),
            Cell(f"{v.get('rss_growth_kb', 0) / 1024:+.1f} MiB", "num"),
            Cell(f"{v.get('fd_growth', 0):+d}", "num"),
        ])  # fmt: skip
    run = doc.get("run") or {}
    bounds = doc.get("bounds") or {}
    warm = round(100 * (doc.get("warmup_share") or 0.2))
    caption = (
        f"Each server under mixed load for {doc.get('minutes')} min with faults "
        f"({', '.join(doc.get('faults') or [])}); every reply checked, and the final state "
        "compared with what was acknowledged. Growth: RSS from the end of the warm-up (the "
        f"first {warm}% of the time) to the end, open descriptors with no client connected "
        "before and after the load; **passed** needs the server up, every check held and "
        f"growth within {bounds.get('rss_growth_mib', '?')} MiB and "
        f"{bounds.get('fd_growth', '?')} descriptors. Run {run.get('id', '?')} "
        f"(`{run.get('command', '')}`)."
    )
    return [Para("**Soak with faults**"), Table(
        ["impl", "result", "operations", "RSS growth", "descriptors"], rows,
        [False, False, True, True, True], caption=caption,
    )]  # fmt: skip


def _ms(v) -> str:
    return "—" if v is None else f"{v:.2f} ms"
