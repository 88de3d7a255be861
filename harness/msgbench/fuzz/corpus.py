"""Shared seed corpora: one folder of raw inputs per fuzz target, shared by every language.

Each workload's `fuzz/make_corpus.py` builds its seeds from the conformance suite's own cases
and hands them to `write`, which makes the folder hold exactly those files (stale seeds are
removed, so the checked-in corpus is always what the generator makes; `make_corpus.py --check`
says whether it still is, and the tests ask).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


class CorpusStale(Exception):
    """A checked-in corpus is not what its generator writes (run make_corpus.py again)."""


def _file_name(name: str) -> str:
    """A seed's name as a portable file name (the name says what the seed exercises)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")[:80] or "seed"


def differences(folder: Path, wanted: dict[str, bytes]) -> list[str]:
    """File names that `write` would add, change or remove."""
    have = {p.name for p in folder.iterdir() if p.is_file()} if folder.is_dir() else set()
    changed = [n for n in wanted if n not in have or (folder / n).read_bytes() != wanted[n]]
    return sorted(changed + list(have - set(wanted)))


def write(folder: Path, seeds: dict[str, bytes], max_len: int, check: bool = False) -> int:
    """Make `folder` hold exactly `seeds` (inputs longer than max_len are cut to it, as the
    fuzzer would). Returns the number of files. With `check`, writes nothing and raises
    CorpusStale when the folder is not what the generator makes."""
    wanted: dict[str, bytes] = {}
    for name, data in seeds.items():
        fname = _file_name(name)
        if fname in wanted and wanted[fname] != data[:max_len]:
            raise ValueError(f"two seeds named {fname}")
        wanted[fname] = data[:max_len]
    if check:
        stale = differences(folder, wanted)
        if stale:
            raise CorpusStale(f"{folder}: differs from its generator: {', '.join(stale[:5])}")
        return len(wanted)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        if old.is_file() and old.name not in wanted:
            old.unlink()
    for fname, data in wanted.items():
        path = folder / fname
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
    return len(wanted)


def write_target(workload: str, target: str, seeds: dict[str, bytes]) -> None:
    """Write one target's corpus where its workload.toml says, cut to its max_len."""
    from .. import paths, registry

    t = registry.workload(workload).fuzz_targets[target]
    check = "--check" in sys.argv  # the tests' way: is the checked-in corpus up to date?
    n = write(t["corpus"], seeds, t["max_len"], check=check)
    print(f"{paths.rel(t['corpus'])}: {n} seeds" + (" (up to date)" if check else ""))
