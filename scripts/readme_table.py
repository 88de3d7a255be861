"""Print the README's results table from a stored run: one row per implementation, one column
per scenario, the primary metric's median and its ratio to the workload's reference system
(redis-server) or, without one, to the baseline — both from the same run.

    .venv/bin/python scripts/readme_table.py [RUN-ID] [--floor] [--by-scenario]
    .venv/bin/python scripts/readme_table.py --hostile HOSTILE-RUN-ID
    .venv/bin/python scripts/readme_table.py --soak SOAK-RUN-ID...

RUN-ID defaults to the latest stored run; --floor takes the ratios to the baseline even where
the workload has a reference (echonet's reference, uecho, is a framework measured beside the
lab's implementations, not the system they imitate). --by-scenario prints one row per scenario
and one column per implementation instead (capnp's 24 scenarios). --hostile prints a
`msgbench hostile` run's table instead (results/hostile-*/hostile.json): per implementation the
well-behaved client's quiet p99, then under each probe its p99 and the server's RSS growth.
--soak prints one row per implementation of each `msgbench soak` run named: its verdict, the
operations checked, and RSS and descriptor growth after the warm-up.
"""

from __future__ import annotations

import json
import sys

from msgbench import paths, stats, store
from msgbench.charts import fmt_num, fmt_value


def hostile_table(run_id: str) -> None:
    doc = robustness_doc(run_id, "hostile")
    probes = list(dict.fromkeys(p["probe"] for v in doc["impls"].values() for p in v["probes"]))
    print("| impl | quiet p99 | " + " | ".join(probes) + " |")
    print("|---|---:|" + "---|" * len(probes))
    for impl, v in sorted(doc["impls"].items()):
        cells = []
        for name in probes:
            p = next((p for p in v["probes"] if p["probe"] == name), None)
            if p is None:
                cells.append("—")
                continue
            text = f"{p['client']['p99_ms']:.1f} ms, +{p['rss_growth_kb'] / 1024:.0f} MiB"
            if p["client"].get("retries"):
                text += f", {p['client']['retries']} re-asked"
            cells.append(text if p["held"] else f"NOT HELD: {text}")
        print(f"| {impl} | {v['quiet']['p99_ms']:.1f} ms | " + " | ".join(cells) + " |")


def robustness_doc(run_id: str, kind: str) -> dict:
    """A hostile or soak run's document: the local store's, else the published copy."""
    for root in (paths.RESULTS, paths.PUBLISHED):
        path = root / run_id / f"{kind}.json"
        if path.is_file():
            return json.loads(path.read_text())
    raise SystemExit(f"no {kind} run {run_id} in results/ or published/")


def soak_table(run_ids: list[str]) -> None:
    print("| workload | impl | verdict | operations checked | RSS growth | descriptors |")
    print("|---|---|---|---:|---:|---:|")
    for run_id in run_ids:
        doc = robustness_doc(run_id, "soak")
        for impl, row in doc["impls"].items():
            verdict = "passed" if row["ok"] else "FAILED: " + "; ".join(row["reasons"])
            print(
                f"| {doc['workload']} | {impl} | {verdict} | {row['operations']:,} | "
                f"{row['rss_growth_kb'] / 1024:+.1f} MiB | {row['fd_growth']:+d} |"
            )


def main() -> None:
    if sys.argv[1:2] == ["--hostile"]:
        hostile_table(sys.argv[2])
        return
    if sys.argv[1:2] == ["--soak"]:
        soak_table(sys.argv[2:])
        return
    args = [a for a in sys.argv[1:] if a not in ("--floor", "--by-scenario")]
    floor = "--floor" in sys.argv[1:]
    by_scenario = "--by-scenario" in sys.argv[1:]
    doc = store.load(args[0] if args else None)
    for wl in doc["workloads"]:
        rows = {
            (r["scenario"], r["impl"]): r
            for r in doc["results"]
            if r["workload"] == wl["name"]
            and not r.get("aa_of")  # the A/A twin is the run's noise control, not an impl
            and r["metric"]
            == next(s["primary"] for s in wl["scenarios"] if s["name"] == r["scenario"])
        }
        impls = list(dict.fromkeys(i for _, i in rows))
        base = wl["baseline"] if floor else (wl.get("reference") or wl["baseline"])
        impls.sort(key=lambda i: (i != base, i != wl["baseline"], i))

        def cell(scenario: str, impl: str, rows=rows, base=base) -> str:
            r, b = rows.get((scenario, impl)), rows.get((scenario, base))
            if r is None or r["status"] != "ok":
                return r["status"].upper() if r else "—"
            text = fmt_value(r["median"], r["unit"])
            if impl != base and b and b["status"] == "ok":
                text += f" ({fmt_num(stats.ratio(r['samples'], b['samples'])['ratio'])}×)"
            return text

        if by_scenario:
            primary = wl["scenarios"][0]
            label = primary["metrics"][primary["primary"]]["label"]
            print(f"| scenario ({label}) | " + " | ".join(impls) + " |")
            print("|---|" + "---:|" * len(impls))
            for s in wl["scenarios"]:
                print(f"| {s['name']} | " + " | ".join(cell(s["name"], i) for i in impls) + " |")
            continue
        heads = [f"{s['name']} ({s['metrics'][s['primary']]['label']})" for s in wl["scenarios"]]
        print("| implementation | " + " | ".join(heads) + " |")
        print("|---|" + "---:|" * len(heads))
        for impl in impls:
            cells = [cell(s["name"], impl) for s in wl["scenarios"]]
            print(f"| {impl} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
