"""The report as a document model: headings, paragraphs, tables and charts built from one
run's results.json, in the order both renderings print them.

Every cell is computed from the input: medians, intervals and flags as the run recorded them;
ratios to the baseline floor (and the reference) bootstrapped from the recorded samples; rank
tiers from the verdicts between pairs against this run's A/A noise (sections/noise.py). Columns
and charts are chosen by metric role (roles.py).
"""

from __future__ import annotations

from .. import stats
from . import inputs
from .inputs import slug
from .model import Bullets, Charts, Doc, Messages, Para
from .sections import (
    code,
    conformance,
    environment,
    families,
    instructions,
    matrices,
    nodes,
    noise,
    ratio_charts,
    robustness,
    scenario_charts,
    seeds,
    side_by_side,
    summary,
    sweeps,
    targets,
)

_CI, _CV = stats.NOISY_CI_WIDTH, stats.NOISY_CV
HOW_TO_READ = (
    "Every number is the **median of n measured trials** (a discarded warm-up trial precedes "
    "them), shown with its **95% confidence interval** (percentile bootstrap of the median, "
    "10,000 resamples, seeded: the same samples always give the same report). "
    "**× baseline** is an implementation's median divided by the baseline floor's median "
    "(the least work the protocol allows, in C), with its own bootstrap interval: for a "
    "lower-is-better metric (latency, CPU, memory) a ratio below 1 is better, for a "
    "higher-is-better one (throughput) above 1 is better. "
    "**Rank**: two implementations are ranked apart only when the bootstrap CI of the ratio "
    "of their medians, corrected for the scenario's number of pairs, lies wholly outside this "
    "run's **A/A noise band** (one implementation measured twice, see “Noise of this run”); "
    "otherwise they tie. A tier holds the best remaining implementation and every one that ties "
    "with it: `=2` means “shares tier 2”, and results in one tier are not ranked against each "
    "other. A declared **target** is met, MISSED, or undecided when the ratio's CI, widened "
    "by the band, straddles its bound. "
    f"**noisy** flags a result whose interval is wider than {_CI:.0%} of its median or whose "
    f"coefficient of variation exceeds {_CV:.0%}: re-run it before reading much into it. "
    "Implementations are measured only after passing the conformance suite; **FAIL** means a "
    "failed suite or trial (the reason is shown), skipped means not measured."
)


def build(results: dict, with_charts: bool = True) -> Doc:
    """The report as a document model (what render_html and render_md both print).
    with_charts=False leaves the charts out (Markdown shows none; they cost most of the time)."""
    run = results.get("run") or {}
    commit = (run.get("commit") or "")[:12]
    machine = run.get("machine") or {}
    bits = [
        f"profile {run['profile']}" if run.get("profile") else "",
        f"commit {commit}" + (" (dirty)" if run.get("dirty") else "") if commit else "",
        f"{machine.get('cpu_model', '')}, {machine.get('cores', '?')} cores" if machine else "",
        run.get("started", ""),
    ]
    doc = Doc(f"msgbench report — {run.get('id', 'run')}", " · ".join(b for b in bits if b))
    busy = environment.busy_banner(run)
    if busy:
        doc.blocks.append(Para(busy, "warn"))
    if run.get("interrupted"):
        doc.blocks.append(
            Para("**This run was interrupted**: it holds only what was measured before.", "warn")
        )
    if run.get("command"):
        doc.blocks.append(Para(f"`{run['command']}`", "command"))
    doc.heading(2, "How to read this report", "how-to-read")
    doc.blocks.append(Para(HOW_TO_READ))
    seeds.seeds(doc, results, with_charts)  # first: the question the lab's users ask first

    for wl in results.get("workloads", []):
        _workload(doc, results, wl, with_charts)

    orphans = [
        n
        for n in results.get("notes", [])
        if n.get("workload") not in {w["name"] for w in results.get("workloads", [])}
    ]
    if orphans:
        doc.heading(2, "Notes", "notes")
        doc.blocks.append(Bullets([n.get("text", "") for n in orphans]))
    environment.environment(doc, run)
    return doc


def _workload(doc: Doc, results: dict, wl: dict, with_charts: bool) -> None:
    name = wl["name"]
    listed = inputs.impl_infos(results, wl)
    # Absent implementations (impl.toml `absent`): named with their reason once, here, and as
    # one short row in each summary table; left out of every chart, matrix and comparison.
    impls = [i for i in listed if not i.absent]
    absent = [i for i in listed if i.absent]
    outcomes = inputs.outcomes(results, name)
    doc.heading(2, f"{name}" + (f" — {wl['title']}" if wl.get("title") else ""), slug(name))
    ref = wl.get("reference") or ""
    doc.blocks.append(
        Para(
            f"Floor: `{wl.get('baseline') or '—'}`"
            + (f" · reference: `{ref}`" if ref else " · no reference system")
            + f" · {len(impls)} implementations · "
            + f"{len(wl.get('scenarios', []))} scenarios",
            "muted",
        )
    )
    # The page lives beside the run folders (results/history/), so the link is relative.
    doc.blocks.append(
        Para(
            f"Over runs: [history/{name}.html](../history/{name}.html), "
            f"written by `./msgbench history {name}`",
            "muted",
        )
    )
    for imp in absent:
        doc.blocks.append(Para(f"**{imp.id}** ({imp.lang_label}) — absent: {imp.absent}", "absent"))
    counted = instructions.instructions(wl, impls, outcomes, results.get("run") or {})
    if counted:  # before the scenarios: the caveat stands beside the first figures
        doc.heading(3, "Instructions per operation", slug(name, "instructions"))
        doc.blocks.extend(counted)
    assessed = noise.assess_workload(wl, impls, outcomes, inputs.twin_outcomes(results, name))
    if assessed:
        doc.heading(3, "Noise of this run", slug(name, "noise"))
        doc.blocks.extend(noise.noise_section(list(assessed.values())))
    for scen in wl.get("scenarios", []):
        _scenario(doc, wl, scen, impls, outcomes, with_charts, absent, assessed.get(scen["name"]))

    beside = side_by_side.side_by_side(wl, impls, outcomes, with_charts)
    if beside:
        doc.heading(3, "Side by side", slug(name, "side-by-side"))
        doc.blocks.extend(beside)

    scaling = sweeps.sweeps(wl, impls, outcomes, with_charts)
    if scaling:
        doc.heading(3, "Scaling", slug(name, "scaling"))
        doc.blocks.extend(scaling)

    by_node = nodes.nodes(wl, impls, outcomes)
    if by_node:
        doc.heading(3, "Nodes", slug(name, "nodes"))
        doc.blocks.extend(by_node)

    ratios = ratio_charts.ratio_charts(wl, impls, outcomes, with_charts)
    if ratios:
        doc.heading(3, "Ratios", slug(name, "ratios"))
        doc.blocks.extend(ratios)

    pairs = matrices.matrices(wl, impls, outcomes)
    if pairs:
        doc.heading(3, "Client × server", slug(name, "matrices"))
        doc.blocks.extend(pairs)

    bounds = targets.targets_table(wl, outcomes, impls)
    if bounds:
        doc.heading(3, "Targets", slug(name, "targets"))
        doc.blocks.append(bounds)

    robust = robustness.robustness(wl, results)
    if robust:
        doc.heading(3, "Robustness", slug(name, "robustness"))
        doc.blocks.extend(robust)

    doc.heading(3, "Conformance", slug(name, "conformance"))
    matrix, failures = conformance.matrix(wl, listed, results)
    interop = conformance.interop(wl, impls, results)
    if interop:
        doc.blocks.append(interop)
    if len(matrix.headers) > 1:
        doc.blocks.append(matrix)
        if failures:
            doc.blocks.append(Para("**Failing tests and known deviations**"))
            doc.blocks.append(Messages(failures))
    else:
        doc.blocks.append(Para("No conformance results in this run.", "muted"))

    size = code.code_table(wl, impls, results, outcomes)
    doc.heading(3, "Code size beside speed", slug(name, "code"))
    doc.blocks.append(size or Para("No code metrics in this run.", "muted"))

    traits = code.traits_table(listed)
    if traits:
        doc.heading(3, "Implementations", slug(name, "impls"))
        doc.blocks.append(traits)

    notes = [n for n in results.get("notes", []) if n.get("workload") == name]
    if notes:
        doc.heading(3, "Notes", slug(name, "notes"))
        items = []
        for n in notes:
            where = " · ".join(x for x in (n.get("scenario"), n.get("impl")) if x)
            items.append((f"**{where}**: " if where else "") + n.get("text", ""))
        doc.blocks.append(Bullets(items))


def _scenario(
    doc: Doc,
    wl: dict,
    scen: dict,
    impls: list,
    outcomes: dict,
    with_charts: bool,
    absent: list,
    assessed: noise.Assessment | None = None,
) -> None:
    sname = scen["name"]
    defs = inputs.scenario_metrics(scen, outcomes, impls)
    doc.heading(3, f"{sname}", slug(wl["name"], sname))
    if scen.get("description"):
        doc.blocks.append(Para(scen["description"], "muted"))
    if scen.get("hosts"):
        doc.blocks.append(Para(_hosts_line(scen["hosts"]), "muted"))
    if scen.get("primary") not in defs:
        doc.blocks.append(Para(f"primary metric `{scen.get('primary')}` has no results"))
        return
    doc.blocks.append(summary.summary_table(wl, scen, defs, impls, outcomes, absent, assessed))
    if with_charts:
        items = scenario_charts.scenario_charts(wl, scen, defs, impls, outcomes)
        doc.blocks.append(Charts(items))
    doc.blocks.append(summary.full_table(scen, defs, impls, outcomes))
    doc.blocks.extend(families.tables(wl, scen, defs, impls, outcomes))


def _hosts_line(h: dict) -> str:
    """Where a scenario's trials ran, in one line: the topology, its hosts, its faults."""
    names = h.get("names") or []
    shown = ", ".join(names) if len(names) <= 4 else f"{names[0]}, {names[1]} … {names[-1]}"
    where = (
        "network namespaces on one bridge"
        if h.get("topology") == "netns"
        else "distinct loopback addresses"
    )
    faults = []
    if h.get("loss_percent"):
        faults.append(f"{h['loss_percent']:g}% of datagrams dropped at random each way")
    if h.get("rate"):
        faults.append(f"egress limited to {h['rate']}")
    return f"hosts: {len(names)} ({shown}), {where}" + (f"; {'; '.join(faults)}" if faults else "")
