"""The run's environment: run header, machine, toolchains and release flags."""

from __future__ import annotations

from collections.abc import Iterable

from ..cells import duration, plain
from ..inputs import LANGUAGE_NAMES
from ..model import Cell, Doc, Group, Table

_MACHINE_KEYS = {"cpu_model": "CPU", "memory_gib": "memory (GiB)", "os": "OS"}


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
        items = [(_MACHINE_KEYS.get(k, k.replace("_", " ")), plain(v)) for k, v in machine.items()]
        group.append(("Machine", _kv_table(items, "machine")))
    tools = run.get("toolchains") or {}
    if tools:
        group.append(("Toolchains", _kv_table([(k, plain(v)) for k, v in tools.items()], "tools")))
    doc.blocks.append(Group(group))
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
