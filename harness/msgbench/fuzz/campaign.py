"""Fuzz campaigns and replays: which targets, run how, recorded where.

A campaign runs each chosen target for N seconds with its engine (engines.py), keeps the inputs
it finds in the machine's own growing corpus (build/fuzz-corpus/<workload>/<impl>/<target>, not
committed: it is this machine's), and stores per target executions, executions per second,
coverage, corpus size and crashes:

- in the run store: results/<run-id>/fuzz.json, the fuzzers' logs and any crashing inputs;
- in the committed record, records/fuzz-campaigns.jsonl: one line per target per campaign, with
  the machine and commit, so that campaigns on several machines and sessions add up (`msgbench
  fuzz --summary` totals it, the report shows it).

A replay (what `make test` runs) builds every target and runs it once over the shared corpus and
the implementation's crash regressions: seconds, no fuzzing, fails on any crash.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from .. import machine, paths, registry, results
from .engines import ENGINES, EngineError, Outcome, Target

RECORD = paths.ROOT / "records" / "fuzz-campaigns.jsonl"
MACHINE_CORPORA = paths.BUILD / "fuzz-corpus"


def targets(
    workload: str | None, impl_ids: list[str] | None, names: list[str] | None
) -> list[Target]:
    """Every fuzz target of the chosen implementations (all that exist, variants included)."""
    chosen = registry.select(workload, impl_ids or None)
    out = []
    for impl in chosen:
        w = registry.workload(impl.workload)
        for f in impl.fuzz:
            if names and f["target"] not in names:
                continue
            t = w.fuzz_targets[f["target"]]
            target = Target(impl, f["target"], f["engine"], f["entry"], t["corpus"], t["max_len"])
            out.append(target)
    return out


def build(chosen: list[Target], log: Path, replay: bool) -> dict[str, str]:
    """Build every target, engine by engine. Returns {target name: why it could not be built}."""
    failed: dict[str, str] = {}
    by_engine: dict[str, list[Target]] = {}
    for t in chosen:
        by_engine.setdefault(t.engine, []).append(t)
    for engine, group in by_engine.items():
        try:
            ENGINES[engine].build(group, log, replay)
        except EngineError as e:
            failed |= {t.name: str(e) for t in group}
    return failed


@dataclass
class TargetResult:
    workload: str
    impl: str
    language: str
    target: str
    engine: str
    seconds: float
    execs: int
    execs_per_s: float
    coverage: dict
    corpus_size: int
    crashes: list[str]
    failure: str
    status: str  # ok | crashed | error
    log: str


def _run_one(t: Target, seconds: int, out: Path) -> TargetResult:
    engine = ENGINES[t.engine]
    work = MACHINE_CORPORA / t.impl.workload / t.impl.id / t.target
    work.mkdir(parents=True, exist_ok=True)
    crashes = out / "crashes" / t.impl.id / t.target
    crashes.mkdir(parents=True, exist_ok=True)
    log = out / "logs" / f"{t.impl.workload}-{t.impl.id}-{t.target}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    argv = engine.campaign_argv(t, seconds, work, crashes)
    started = time.monotonic()
    with open(log, "wb") as f:
        # A fuzzer that ignores its own time limit (a hang it does not catch) is stopped.
        try:
            subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, env=engine.env(),
                           cwd=paths.ROOT, timeout=seconds + 120)  # fmt: skip
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
    elapsed = time.monotonic() - started
    o: Outcome = engine.parse(log.read_text(errors="replace"), elapsed)
    if timed_out:
        o.ok, o.failure = False, f"the fuzzer did not stop within {seconds + 120} s"
    saved = []
    for c in o.crashes:  # Go writes its failing input into the package: copy it to the store
        p = Path(c) if Path(c).is_absolute() else paths.ROOT / paths.rel(t.impl.dir) / c
        if p.exists() and crashes not in p.parents:
            shutil.copy(p, crashes / p.name)
        saved.append(paths.rel(crashes / p.name))
    status = "ok" if o.ok else ("crashed" if o.crashes or o.failure else "error")
    return TargetResult(
        workload=t.impl.workload, impl=t.impl.id, language=t.impl.language, target=t.target,
        engine=t.engine, seconds=round(elapsed, 1), execs=o.execs,
        execs_per_s=round(o.execs_per_s, 1), coverage=o.coverage, corpus_size=o.corpus_size,
        crashes=saved, failure=o.failure, status=status, log=paths.rel(log),
    )  # fmt: skip


def campaign(
    chosen: list[Target],
    seconds: int,
    jobs: int,
    on_done: Callable[[TargetResult], None],
    record: Path = RECORD,
) -> dict:
    """Fuzz every target for `seconds`, `jobs` at a time; store and record each as it ends."""
    commit, dirty = machine.git_state()
    run_id = "fuzz-" + results.new_run_id(commit)
    out = paths.RESULTS / run_id
    out.mkdir(parents=True, exist_ok=True)
    failed = build(chosen, out / "logs" / "build.log", replay=False)
    fp = machine.fingerprint()
    doc = {
        "run": {"id": run_id, "kind": "fuzz", "started": results.now(), "commit": commit,
                "dirty": dirty, "seconds_per_target": seconds, "jobs": jobs, "machine": fp},
        "targets": [],
        "not_built": failed,
    }  # fmt: skip
    lock = threading.Lock()

    def one(t: Target) -> None:
        r = _run_one(t, seconds, out)
        with lock:
            doc["targets"].append(asdict(r))
            _save(out, doc)
            _append_record(record, doc["run"], r)
            on_done(r)

    runnable = [t for t in chosen if t.name not in failed]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(one, runnable))
    doc["run"]["finished"] = results.now()
    _save(out, doc)
    return doc


def _save(out: Path, doc: dict) -> None:
    (out / "fuzz.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False))


def _append_record(record: Path, run: dict, r: TargetResult) -> None:
    fp = run["machine"]
    line = {
        "date": results.now(), "run": run["id"], "commit": run["commit"][:12],
        "dirty": run["dirty"], "jobs": run["jobs"],
        "machine": {k: fp[k] for k in ("cpu_model", "cores", "kernel", "hostname")},
        **{k: v for k, v in asdict(r).items() if k not in ("log",)},
    }  # fmt: skip
    record.parent.mkdir(parents=True, exist_ok=True)
    with open(record, "a") as f:
        f.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")


# ---- replay ---------------------------------------------------------------------------------


@dataclass
class Replay:
    name: str
    engine: str
    inputs: int
    ok: bool
    detail: str


def replay(chosen: list[Target], log_dir: Path, on_done: Callable[[Replay], None]) -> list[Replay]:
    """Run every target once over its shared corpus and its crash regressions."""
    failed = build(chosen, log_dir / "build.log", replay=True)
    done = []
    for t in chosen:
        files = t.seed_files()
        if t.name in failed:
            r = Replay(t.name, t.engine, len(files), False, failed[t.name])
        elif not files:
            r = Replay(t.name, t.engine, 0, False, f"no seeds in {paths.rel(t.corpus)}")
        else:
            r = _replay_one(t, files, log_dir)
        done.append(r)
        on_done(r)
    return done


def _replay_one(t: Target, files: list[Path], log_dir: Path) -> Replay:
    engine = ENGINES[t.engine]
    log = log_dir / f"replay-{t.impl.workload}-{t.impl.id}-{t.target}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    argv = engine.replay_argv(t, files)
    with open(log, "wb") as f:
        try:
            p = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, env=engine.env(),
                               cwd=paths.ROOT, timeout=600)  # fmt: skip
            code = p.returncode
        except subprocess.TimeoutExpired:
            return Replay(t.name, t.engine, len(files), False, "replay did not end in 600 s")
    o = engine.parse(log.read_text(errors="replace"), 0)
    if code != 0 or not o.ok:
        return Replay(t.name, t.engine, len(files), False,
                      f"{o.failure or f'exit status {code}'} ({paths.rel(log)})")  # fmt: skip
    return Replay(t.name, t.engine, len(files), True, "")


# ---- the committed record, totalled ---------------------------------------------------------


def read_record(record: Path = RECORD) -> list[dict]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines() if line.strip()]


def summary(lines: list[dict]) -> list[dict]:
    """Per target (workload, impl, target): campaigns, seconds, executions, the best coverage
    reached (each engine's own measure), crashes, machines."""
    rows: dict[tuple, dict] = {}
    for ln in lines:
        key = (ln["workload"], ln["impl"], ln["target"])
        r = rows.setdefault(key, {
            "workload": key[0], "impl": key[1], "target": key[2], "engine": ln["engine"],
            "language": ln.get("language", ""), "campaigns": 0, "seconds": 0.0, "execs": 0,
            "coverage": {}, "crashes": 0, "machines": set(), "last_status": "",
        })  # fmt: skip
        r["campaigns"] += 1
        r["seconds"] += ln["seconds"]
        r["execs"] += ln["execs"]
        for k, v in ln.get("coverage", {}).items():
            r["coverage"][k] = max(v, r["coverage"].get(k, 0))
        r["crashes"] += len(ln.get("crashes", [])) or int(ln["status"] == "crashed")
        r["machines"].add(ln["machine"]["hostname"])
        r["last_status"] = ln["status"]
    for r in rows.values():
        r["machines"] = len(r["machines"])
    return sorted(rows.values(), key=lambda r: (r["workload"], r["impl"], r["target"]))


# ---- command-level differential fuzzing -----------------------------------------------------


def _differential_module(w: registry.Workload):
    """workload.toml [fuzz_differential] module: a file with campaign(), ServerPool and spec_of
    (workloads/redis/conformance/difffuzz.py is the one there is)."""
    import importlib.util

    spec = w.fuzz_differential
    path = w.dir / spec["module"]
    name = f"msgbench_difffuzz_{w.name}"
    loaded = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(loaded)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    loaded.loader.exec_module(module)
    return module


def differential(
    workload: str,
    impl_ids: list[str] | None,
    seconds: int,
    seed: int,
    on_done: Callable[[dict], None],
    record: Path = RECORD,
) -> dict:
    """Each implementation against the workload's reference system in lock-step, `seconds`
    each; every campaign is stored and recorded like a fuzz target's (engine `differential`,
    executions = commands, coverage = command families and names sent)."""
    w = registry.workload(workload)
    if not w.fuzz_differential:
        raise EngineError(f"{workload} has no [fuzz_differential] in its workload.toml")
    mod = _differential_module(w)
    reference = w.fuzz_differential["reference"]
    skip = {reference, *w.fuzz_differential.get("skip", [])}
    chosen = [i for i in registry.select(workload, impl_ids or None)
              if i.id not in skip and not i.absent]  # fmt: skip
    commit, dirty = machine.git_state()
    run_id = "fuzz-" + results.new_run_id(commit)
    out = paths.RESULTS / run_id
    fp = machine.fingerprint()
    doc = {"run": {"id": run_id, "kind": "differential", "started": results.now(),
                   "commit": commit, "dirty": dirty, "seconds_per_target": seconds, "jobs": 1,
                   "machine": fp}, "campaigns": {}}  # fmt: skip
    for impl in chosen:
        got = mod.campaign(mod.ServerPool(mod.spec_of(impl.id)),
                           mod.ServerPool(mod.spec_of(reference)), seconds=seconds, seed=seed,
                           out_dir=out / impl.id)  # fmt: skip
        doc["campaigns"][impl.id] = got
        findings = got.get("findings", [])
        saved = [paths.rel(out / impl.id / f"finding-{n + 1}.resp") for n in range(len(findings))]
        r = TargetResult(
            workload=workload, impl=impl.id, language=impl.language, target="commands",
            engine="differential", seconds=got["seconds"], execs=got["commands"],
            execs_per_s=got["commands_per_s"],
            coverage={"families": len(got["families"]), "commands": len(got["commands_by_name"])},
            corpus_size=got.get("sequences", 0),
            crashes=saved,
            failure=(findings[0].get("signature", "divergence") if findings else ""),
            status="crashed" if findings else "ok", log=paths.rel(out / impl.id),
        )  # fmt: skip
        out.mkdir(parents=True, exist_ok=True)
        _save(out, doc)
        _append_record(record, doc["run"], r)
        on_done(asdict(r))
    doc["run"]["finished"] = results.now()
    _save(out, doc)
    return doc
