"""Print the README's results table from a stored run: one row per implementation, one column
per scenario, the primary metric's median and its ratio to the workload's reference system
(redis-server) or, without one, to the baseline — both from the same run.

    .venv/bin/python scripts/readme_table.py [RUN-ID] [--floor]

RUN-ID defaults to the latest stored run; --floor takes the ratios to the baseline even where
the workload has a reference (echonet's reference, uecho, is a framework measured beside the
lab's implementations, not the system they imitate).
"""

from __future__ import annotations

import sys

from msgbench import stats, store
from msgbench.charts import fmt_num, fmt_value


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--floor"]
    floor = "--floor" in sys.argv[1:]
    doc = store.load(args[0] if args else None)
    for wl in doc["workloads"]:
        rows = {
            (r["scenario"], r["impl"]): r
            for r in doc["results"]
            if r["workload"] == wl["name"]
            and r["metric"]
            == next(s["primary"] for s in wl["scenarios"] if s["name"] == r["scenario"])
        }
        impls = list(dict.fromkeys(i for _, i in rows))
        base = wl["baseline"] if floor else (wl.get("reference") or wl["baseline"])
        impls.sort(key=lambda i: (i != base, i != wl["baseline"], i))
        heads = [f"{s['name']} ({s['metrics'][s['primary']]['label']})" for s in wl["scenarios"]]
        print("| implementation | " + " | ".join(heads) + " |")
        print("|---|" + "---:|" * len(heads))
        for impl in impls:
            cells = []
            for s in wl["scenarios"]:
                r, b = rows.get((s["name"], impl)), rows.get((s["name"], base))
                if r is None or r["status"] != "ok":
                    cells.append(r["status"].upper() if r else "—")
                    continue
                text = fmt_value(r["median"], r["unit"])
                if impl != base and b and b["status"] == "ok":
                    text += f" ({fmt_num(stats.ratio(r['samples'], b['samples'])['ratio'])}×)"
                cells.append(text)
            print(f"| {impl} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
