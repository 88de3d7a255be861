"""Code metrics per implementation with lizard: only the source files the manifest names."""

from __future__ import annotations

import lizard

from .registry import Impl


def measure(impl: Impl) -> dict:
    files = impl.sources()
    nloc = 0
    ccns: list[int] = []
    for path in files:
        info = lizard.analyze_file(str(path))
        nloc += info.nloc
        ccns.extend(f.cyclomatic_complexity for f in info.function_list)
    return {
        "workload": impl.workload,
        "impl": impl.id,
        "language": impl.language,
        "files": len(files),
        "nloc": nloc,
        "functions": len(ccns),
        "ccn_mean": round(sum(ccns) / len(ccns), 2) if ccns else 0.0,
        "ccn_max": max(ccns, default=0),
    }
