"""Print the README's seed table from a stored run of `msgbench seeds`: one row per claim — the
seed, its claim in its words, and the verdict this run's data gives it (the report's Seeds
section computes it; nothing here is typed in). Every cell links to the claim's block in the
published report, so each verdict sits one click from its evidence.

    .venv/bin/python scripts/readme_seeds.py [RUN-ID]

RUN-ID defaults to the latest stored run; publish it (`./msgbench publish RUN`) so the links
resolve in a fresh clone.
"""

from __future__ import annotations

import sys

from msgbench import store
from msgbench.report import stored
from msgbench.report.sections import seeds


def main() -> None:
    doc = stored.ready(store.load(sys.argv[1] if len(sys.argv) > 1 else None))
    run_id = doc["run"]["id"]
    rows = seeds.summary_rows(doc)
    if not rows:
        sys.exit(f"run {run_id} measured no seed's experiment (run `./msgbench seeds`)")
    print("| seed | the seed's claim | verdict in this lab |")
    print("|---|---|---|")
    for r in rows:
        link = f"published/{run_id}/report.md#{r['anchor']}"
        cells = [f"seed {r['seed']}", r["says"].replace("|", "\\|"), r["verdict"]]
        print("| " + " | ".join(f"[{c}]({link})" for c in cells) + " |")


if __name__ == "__main__":
    main()
