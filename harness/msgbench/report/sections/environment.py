"""The run's environment: run header, machine, toolchains and release flags."""

from __future__ import annotations

from collections.abc import Iterable

from ..cells import duration, plain
from ..inputs import LANGUAGE_NAMES
from ..model import Cell, Doc, Group, Table

_MACHINE_KEYS = {"cpu_model": "CPU", "memory_gib": "memory (GiB)", "os": "OS"}
# Shown by _machine_items in their own words; any other key (an older or newer harness's) is
# listed as it is.
_SHOWN = {
    "fingerprint_id", "cpu_model", "cores", "usable_cpus", "caches", "frequency_mhz", "governor",
    "memory_gib", "kernel", "os", "virtualized", "virtualization", "cgroup", "hostname",
    "loadavg",
}  # fmt: skip


def _kv_table(items: Iterable[tuple[str, str]], cls: str) -> Table:
    rows = [[Cell(k, "key"), Cell(str(v), "code" if k == "command" else "")] for k, v in items]
    return Table(["", ""], rows, [False, False], cls="kv " + cls)


def environment(doc: Doc, run: dict) -> None:
    doc.heading(2, "Environment", "environment")
    dirty = " (dirty: uncommitted changes)" if run.get("dirty") else ""
    started, finished = run.get("started", ""), run.get("finished", "")
    dur = duration(started, finished)
    kv = [
        ("run id", run.get("id", "")),
        ("command", run.get("command") or "—"),
        ("profile", run.get("profile", "")),
        ("commit", (run.get("commit") or "—") + dirty),
        ("started", started or "—"),
        ("finished", (finished or "—") + (f" ({dur})" if dur else "")),
        ("interrupted", "yes: results are partial" if run.get("interrupted") else "no"),
    ]
    placement = run.get("placement") or {}
    if placement:
        kv.append(("placement", ", ".join(f"{k}: {plain(v)}" for k, v in placement.items())))
    group = [("Run", _kv_table(kv, "run"))]
    machine = run.get("machine") or {}
    if machine:
        group.append(("Machine", _kv_table(_machine_items(machine), "machine")))
    load = run.get("load")
    if load:
        group.append(("Load", _kv_table(load_items(load), "load")))
    tools = run.get("toolchains") or {}
    if tools:
        group.append(("Toolchains", _kv_table([(k, plain(v)) for k, v in tools.items()], "tools")))
    doc.blocks.append(Group(group))
    hosts = run.get("hosts")
    if hosts:
        doc.heading(3, "Hosts", "hosts", toc=False)
        doc.blocks.append(hosts_table(hosts))
    flags = run.get("flags") or {}
    if flags:
        doc.heading(3, "Release flags", "flags", toc=False)
        rows = []
        for lang, table in flags.items():
            text = (
                " · ".join(f"{k}={plain(v)}" for k, v in table.items())
                if isinstance(table, dict)
                else plain(table)
            )
            rows.append([Cell(LANGUAGE_NAMES.get(lang, lang)), Cell(text, "code")])
        doc.blocks.append(
            Table(["language", "release flags (profiles.toml)"], rows, [False, False])
        )


def hosts_table(hosts: dict) -> Table:
    """Where the roles ran (`--hosts`, docs/hosts.md): each host, its role, its machine, what
    the cluster's own processes cost there, whether the binaries were the same everywhere."""
    f = hosts.get("file") or {}
    roles = f.get("roles") or {}
    sweep = f.get("sweep") or {}
    costs = hosts.get("cluster_processes") or {}
    binaries = hosts.get("binaries") or {}
    rows = []
    for name, h in (hosts.get("hosts") or {}).items():
        role = ", ".join(r for r, n in roles.items() if n == name) or (
            "sweep node" if name in (sweep.get("nodes") or []) else "—"
        )
        cost = costs.get(name)
        cost_text = (
            f"{cost['count']} processes, {cost['cpu_s_during_run']} s of CPU over the run, "
            f"allowed on CPUs {plain(cost['allowed_cpus'])}"
            if cost
            else "—"
        )
        where = h.get("netns") or h.get("node_id", "")[:12] or "—"
        rows.append(
            [Cell(name), Cell(h.get("kind", "")), Cell(role), Cell(h.get("addr", "")),
             Cell(where, "code"), Cell(h.get("machine") or "—", "code"), Cell(cost_text)]
        )  # fmt: skip
    same = binaries.get("identical")
    caption = f"hosts file {f.get('path', '')} ({f.get('kind', '')})"
    if sweep:
        caption += "; sweep, " + ("concurrent" if sweep.get("concurrent") else "nodes in turn")
    if same is not None:
        n = len(binaries.get("files") or {})
        caption += (
            f"; the {n} programs the run started are identical on every host (sha256)"
            if same
            else f"; the {n} programs the run started DIFFER between hosts (run.hosts.binaries)"
        )
    return Table(
        ["host", "kind", "role", "address", "namespace / node", "machine", "cluster's processes"],
        rows,
        [False] * 7,
        caption=caption,
    )


def _machine_items(m: dict) -> list[tuple[str, str]]:
    """The fingerprint in reading order. A run made before issue 13 has no caches, frequency,
    virtualization or cgroup keys: their rows are left out."""
    items = []
    if m.get("fingerprint_id"):
        items.append(("fingerprint", m["fingerprint_id"]))
    items.append(("CPU", plain(m.get("cpu_model"))))
    cores = f"{m.get('cores', '?')}"
    if m.get("usable_cpus") is not None:
        cores += f" (this process may use {plain(m['usable_cpus'])})"
    items.append(("cores", cores))
    if m.get("caches"):
        items.append(("caches", " · ".join(f"{k} {v}" for k, v in m["caches"].items())))
    freq = m.get("frequency_mhz")
    if freq is not None:
        items.append(("frequency (MHz)", plain({k: f"{v:g}" for k, v in freq.items()})))
    items += [("governor", plain(m.get("governor"))), ("memory (GiB)", plain(m.get("memory_gib")))]
    items += [("kernel", plain(m.get("kernel"))), ("OS", plain(m.get("os")))]
    if "virtualization" in m:
        items.append(("virtualization", _virtualization(m["virtualization"] or {})))
    elif "virtualized" in m:
        items.append(("virtualized", plain(m["virtualized"])))
    if m.get("cgroup"):
        items.append(("cgroup limits", _cgroup(m["cgroup"])))
    items.append(("hostname", plain(m.get("hostname"))))
    if m.get("loadavg"):
        items.append(("load average after the run", plain(m["loadavg"])))
    items += [(_MACHINE_KEYS.get(k, k.replace("_", " ")), plain(v))
              for k, v in m.items() if k not in _SHOWN]  # fmt: skip
    return items


def _virtualization(v: dict) -> str:
    parts = [
        f"VM: {v.get('vm') or 'unknown'}",
        f"container: {v.get('container') or 'unknown'}",
        "CPU hypervisor flag " + ("set" if v.get("hypervisor_flag") else "clear"),
    ]
    if v.get("dmi"):
        parts.append(v["dmi"])
    return " · ".join(parts)


def _cgroup(c: dict) -> str:
    if c.get("version") == "none":
        return "no cgroup"
    quota, mem = c.get("cpu_quota"), c.get("memory_limit_gib")
    return " · ".join([
        f"cgroup {c.get('version', '?')}",
        f"CPU quota {quota:g} CPUs" if quota is not None else "no CPU quota",
        f"cpuset {c['cpuset']}" if c.get("cpuset") else "no cpuset",
        f"memory limit {mem:g} GiB" if mem is not None else "no memory limit",
    ])  # fmt: skip


def load_items(load: dict) -> list[tuple[str, str]]:
    """The run's load record (run.load) as rows: the verdict first, then the figures."""
    verdict = "yes: " + "; ".join(load.get("reasons") or []) if load.get("busy") else "no"
    items = [("busy", verdict)]
    cpus = load.get("cpus")
    items.append(("CPUs watched", plain(cpus) if cpus else "all"))
    before = load.get("before") or {}
    if before.get("loadavg"):
        items.append(("load average before", plain([f"{x:g}" for x in before["loadavg"]])))
    if "foreign_cpus" in before:
        items.append((
            "other work before",
            f"{before['foreign_cpus']:.2f} CPU, steal {before['steal_fraction']:.1%} "
            f"(over {before['seconds']:g} s with the lab idle)",
        ))  # fmt: skip
    during = load.get("during")
    if during:
        f, o, st = during["foreign_cpus"], during["own_cpus"], during["steal_fraction"]
        items += [
            ("other work during", f"mean {f['mean']:.2f} CPU, max {f['max']:.2f} CPU"),
            ("the lab's own CPU", f"mean {o['mean']:.2f} CPU, max {o['max']:.2f} CPU"),
            ("steal during", f"mean {st['mean']:.1%}, max {st['max']:.1%}"),
            ("samples", f"{during['samples']} over {during['seconds']:g} s"),
        ]
    else:
        items.append(("other work during", "no sample (the trials took no time)"))
    if load.get("sampler_cpu_seconds") is not None:
        items.append(("sampler's own CPU", f"{load['sampler_cpu_seconds']:.3f} s"))
    if load.get("rule"):
        items.append(("rule", load["rule"]))
    for note in load.get("notes") or []:
        items.append(("note", note))
    return items


def busy_banner(run: dict) -> str:
    """The report's first line when the machine was busy during the run ('' when it was not,
    or when the run is older than the load record)."""
    load = run.get("load") or {}
    if not load.get("busy"):
        return ""
    why = "; ".join(load.get("reasons") or []) or "see the Load table"
    return (
        f"**The machine was busy during this run**: {why}. Its figures may be slower and noisier "
        "than on a quiet machine; re-run on a quiet one before trusting a small difference "
        "(Environment, Load)."
    )
