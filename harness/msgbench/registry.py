"""The manifests: every workload (workload.toml) and every implementation (impl.toml).

Adding an implementation is adding a folder with an impl.toml; nothing here names one.
"""

from __future__ import annotations

import glob
import shutil
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from . import hosts, paths, profiles
from .hosts import LOOPBACK, HostsSpec
from .instructions import METRIC as INSTRUCTIONS_METRIC
from .instructions import METRIC_DEF as INSTRUCTIONS_METRIC_DEF
from .instructions import Counting

LANGUAGES = ("c", "cpp", "rust", "go", "python")
BUILD_SYSTEMS = ("cmake", "cargo", "go", "none")
# What a metric is for (workload.toml [metrics] `role`): the report picks columns and charts by
# role, never by name. latency metrics also carry `percentile` (100 = max).
METRIC_ROLES = {
    "throughput": "work done per second (higher is better)",
    "latency": "time per operation at a percentile",
    "cpu": "the implementation's CPU time per unit of work",
    "memory": "the implementation's memory (peak RSS, bytes per key)",
    "load_cpu": "the load generator's CPU time per unit of work",
    "peer_cpu": "a peer's CPU time per unit of work (e.g. Chromium's processes)",
    "instructions": "instructions the implementation executes per operation (valgrind)",
    "other": "anything else the driver reports",
}


class ManifestError(Exception):
    """A manifest is missing a field or has a wrong value; the message names the file."""


def template_vars(
    workload: Workload | None = None, impl_dir: Path | None = None, seedbuild: bool = False
) -> dict:
    """Values for {placeholders} in argv templates (see docs/decisions.md, Manifests);
    seedbuild: the binaries of the seed's build (build/seedbuild/) instead of the selected
    profile's."""
    trees = paths.profile_trees(paths.SEEDBUILD) if seedbuild else {}
    values: dict[str, Any] = {
        "root": str(paths.ROOT),
        "cmake_bin": str(trees.get("CMAKE_BIN", paths.CMAKE_BIN)),
        "cargo_bin": str(paths.SEEDBUILD_CARGO_BIN if seedbuild else paths.CARGO_BIN),
        "go_bin": str(trees.get("GO_BIN", paths.GO_BIN)),
        # The venv interpreter without profiles.toml's -S, for implementations that import
        # declared third-party packages (e.g. uvloop); they add their own flags.
        "venv_python": str(paths.VENV_PYTHON),
        # Server workloads: the port is chosen per launch, the address it listens on is its
        # host's (127.0.0.1 unless the trial's hosts put it elsewhere: docs/hosts.md); both
        # are left as they are until then.
        "port": "{port}",
        "host": "{host}",
    }
    if impl_dir is not None:
        values["impl_dir"] = str(impl_dir)
    if workload is not None:
        values.update(workload.template_values)
    return values


def fill(argv: list[str], port: int | None, host: str = LOOPBACK) -> list[str]:
    """A server's argv with its `{host}` (and, when given, `{port}`) filled in."""
    out = [a.replace("{host}", host) for a in argv]
    return out if port is None else [a.replace("{port}", str(port)) for a in out]


def expand(argv: list[str], values: dict) -> list[str]:
    """Expand a template argv. `{python}` alone in an item becomes several items."""
    out: list[str] = []
    for item in argv:
        if item == "{python}":
            out.extend(profiles.python_argv())
            continue
        try:
            out.append(item.format(**values))
        except KeyError as e:
            raise ManifestError(f"unknown placeholder {e} in {item!r}") from None
    return out


@dataclass
class Impl:
    workload: str
    id: str
    dir: Path
    language: str
    variant: str
    summary: str
    build: dict
    run: dict
    traits: dict
    sources_globs: list[str]
    skip_markers: list[str]
    notes: dict[str, str]  # scenario ("*" = all) -> a note shown in reports
    _workload: Workload = field(repr=False)
    # [params.<scenario>.<profile>]: parameters this implementation runs with instead of the
    # scenario's (a pair too slow for the scenario's size runs fewer iterations; its notes say
    # why, and the scenario's metrics must then be per unit of work to stay comparable).
    params: dict[str, dict[str, dict]] = field(default_factory=dict)
    # [conformance.deviations]: test (function name, or case test_x[params]) -> why this
    # implementation is known not to meet it. Such a test must fail (strict xfail: a pass is a
    # failure, so a fixed deviation cannot linger); the report shows it as a deviation with the
    # reason. For reference systems only: a lab implementation meets its SPEC.
    deviations: dict[str, str] = field(default_factory=dict)
    # `absent = "why"`: the language has no implementation to measure (e.g. no official library
    # for the workload's protocol). The manifest names the row; it has no program, is never built,
    # verified or measured, and the report says why once per workload instead of faking one.
    absent: str = ""
    # [[fuzz]]: this implementation's coverage-guided fuzz targets, one per protocol target of
    # the workload ({"target", "engine", "entry"}; msgbench.fuzz runs them).
    fuzz: list[dict] = field(default_factory=list)
    # `fuzz_exempt = "why"`: a third-party system (a reference) whose parsers are not the lab's
    # code to fuzz; every other implementation that has a program declares [[fuzz]] targets.
    fuzz_exempt: str = ""
    # [conformance] only_markers: a seed's own system that implements a subset of the protocol
    # (mini-redis: SET and GET) is held only to the tests carrying one of these markers; every
    # other test is n/a for it, with `only_why`. For such systems only: a lab implementation
    # meets its SPEC.
    only_markers: list[str] = field(default_factory=list)
    only_why: str = ""
    # [measured_in] scenarios: measured only in these scenarios (the others skip it, saying
    # `why`): a seed's own system in the seed's experiment, which it was built for.
    measured_in: list[str] = field(default_factory=list)
    measured_in_why: str = ""
    # An `<id>-seedbuild` variant (workload.toml [seed_build]): implementation `seedbuild_of`
    # built as the seeds built their programs (profiles.toml [seedbuild], build/seedbuild/),
    # measured only in the seed's scenarios, beside the release build, in the Seeds section.
    seedbuild_of: str = ""

    def _vars(self) -> dict:
        return template_vars(self._workload, self.dir, seedbuild=bool(self.seedbuild_of))

    @property
    def name(self) -> str:
        return f"{self.workload}/{self.id}"

    def argv(self, port: int | None = None, host: str = LOOPBACK) -> list[str]:
        """The command line; for a server, `port` fills the `{port}` placeholder (left as is
        when None) and `host` the `{host}` one (the address it listens on)."""
        return fill(expand(self.run["argv"], self._vars()), port, host)

    def client_argv(self, port: int | None = None, host: str = LOOPBACK) -> list[str]:
        """The implementation's own client program ([run] client_argv), [] if it has none;
        `host` is the server's address it connects to."""
        return fill(expand(self.run.get("client_argv", []), self._vars()), port, host)

    @property
    def listens_on_host(self) -> bool:
        """Whether its argv takes the address it listens on ({host}): only such a server can
        run on a host other than its driver's (docs/hosts.md)."""
        return any("{host}" in a for a in self.run.get("argv", []))

    def cwd(self) -> str:
        if self.absent:
            return str(self.dir)
        if "cwd" in self.run:
            return expand([self.run["cwd"]], self._vars())[0]
        return str(Path(self.argv()[0]).parent)

    @property
    def executable(self) -> Path:
        """The file that must exist for the implementation to run (program or script)."""
        if self.absent:
            return self.dir  # no program: the folder holds only the manifest
        argv = self.argv()
        if self.build.get("system") == "none":
            if self.run["argv"][0] == "{python}":
                return Path(argv[len(profiles.python_argv())])
            scripts = [a for a in argv if a.endswith(".py")]
            if scripts:
                return Path(scripts[0])
            if "/" not in argv[0]:  # a system program such as redis-server: found on PATH
                return Path(shutil.which(argv[0]) or argv[0])
        return Path(argv[0])

    @property
    def built(self) -> bool:
        if self.absent:  # nothing to build: an absent implementation is never "built"
            return False
        exe = self.executable
        if not exe.exists():
            return False
        if self.run["argv"][0] in ("{python}", "{venv_python}"):
            return paths.VENV_PYTHON.exists()
        return True

    def sources(self) -> list[Path]:
        files: set[Path] = set()
        for pattern in self.sources_globs:
            files.update(Path(p) for p in glob.glob(str(self.dir / pattern), recursive=True))
        return sorted(p for p in files if p.is_file())

    def as_json(self) -> dict:
        return {
            "workload": self.workload,
            "impl": self.id,
            "language": self.language,
            "variant": self.variant,
            "built": self.built,
            "run": self.argv(),
            "cwd": self.cwd(),
            "absent": self.absent,
        }


@dataclass
class Driver:
    """A load generator: a program run once per trial (see docs/decisions.md, Drivers)."""

    name: str
    argv: list[str]
    build: dict  # {"system": "cargo", "target": package} or {"system": "none"}
    requires: list[str]  # programs that must be on PATH, e.g. chromium; else scenarios skip

    def missing(self) -> list[str]:
        return [p for p in self.requires if shutil.which(p) is None]


@dataclass
class Scenario:
    name: str
    driver: str
    description: str
    args: list[str]
    params: dict[str, dict]
    metrics: list[str]
    primary: str
    own_client: bool = False  # runs each impl's own client program (impls without one skip)
    kind: str = ""  # the trial kind of this scenario; "" = the workload's
    hosts: HostsSpec | None = None  # where its trials run (msgbench.hosts); None: kind decides
    # Another implementation of the workload whose client program drives every
    # implementation's server in this scenario (capnp's pipe matrix: one scenario per client).
    peer: str = ""
    # `instructions = { param, ops }`: a single-connection scenario that `bench --measure
    # instructions` counts (msgbench.instructions); None: it is only timed.
    instructions: Counting | None = None

    def argv(self, profile: str, overrides: dict | None = None) -> list[str]:
        """The scenario's arguments for a profile; `overrides` (an implementation's own
        [params.<scenario>.<profile>]) replace some of the parameters."""
        if profile not in self.params:
            raise ManifestError(f"scenario {self.name} has no parameters for profile {profile}")
        values = {**self.params[profile], **(overrides or {})}
        return [a.format(**values) for a in self.args]


@dataclass
class Workload:
    name: str
    title: str
    dir: Path
    kind: str
    baseline: str
    reference: str
    drivers: dict[str, Driver]
    metric_defs: dict[str, dict]
    profiles: dict[str, dict]
    scenarios: dict[str, Scenario]
    template_values: dict[str, str]
    targets: list[dict]  # [[targets]]: bounds on implementation ÷ baseline, shown in reports
    side_by_side: list[dict]  # [[side_by_side]]: two scenarios' metric compared per impl
    sweeps: list[dict] = field(default_factory=list)  # [[sweeps]]: a metric over scenarios
    # [[ratio_charts]]: numerator ÷ denominator of one metric per scenario, with its CI
    ratio_charts: list[dict] = field(default_factory=list)
    # [[matrices]]: one metric over scenarios that each name a `peer` (client × server)
    matrices: list[dict] = field(default_factory=list)
    # [[fuzz_targets]]: the protocol's fuzz targets (name -> {corpus: Path, max_len, summary}),
    # each with one seed corpus shared by every language (docs/robustness.md).
    fuzz_targets: dict[str, dict] = field(default_factory=dict)
    # [robustness]: the SPEC's caps as the hostile-client suite and the soak check them
    # (rss_growth_mib: the most a server's RSS may grow under any probe; connections: the idle
    # connections it must hold).
    robustness: dict = field(default_factory=dict)
    # [fuzz_differential]: command-level differential fuzzing against the reference system
    # ({module, reference, skip}; msgbench fuzz WORKLOAD --differential).
    fuzz_differential: dict = field(default_factory=dict)
    impls: dict[str, Impl] = field(default_factory=dict)

    @property
    def conformance_dir(self) -> Path:
        return self.dir / "conformance"

    def driver(self, name: str | None = None) -> list[str]:
        """The argv of a driver (default: the workload's first driver)."""
        d = self.drivers[name] if name else next(iter(self.drivers.values()))
        return expand(d.argv, template_vars(self))

    def repetitions(self, profile: str) -> int:
        return int(self.profiles[profile]["repetitions"])

    def scenarios_for(self, profile: str) -> list[Scenario]:
        """The scenarios a profile runs by default: `[profiles.X] scenarios = [...]` when the
        profile narrows them (a first look need not replay every sweep), else all."""
        names = self.profiles.get(profile, {}).get("scenarios")
        if names is None:
            return list(self.scenarios.values())
        return [self.scenarios[n] for n in names]

    def metric_def(self, name: str) -> dict:
        """A metric's definition. A family such as "rps.*" (field "tests.*.rps") defines one
        metric per key the driver reports under "tests": "rps.SET" has field "tests.SET.rps"."""
        if name in self.metric_defs:
            return self.metric_defs[name]
        for family, d in self.metric_defs.items():
            prefix = family.partition("*")[0]
            if "*" in family and name.startswith(prefix) and len(name) > len(prefix):
                key = name[len(prefix) :]
                return {
                    **d,
                    "field": d["field"].replace("*", key),
                    "label": d.get("label", family).replace("*", key),
                    "family": family,
                }
        raise ManifestError(f"workload {self.name}: unknown metric {name}")

    def family_members(self, family: str, docs: list[dict]) -> list[str]:
        """The metrics of a family that these driver documents report, in their order."""
        container = self.metric_defs[family]["field"].partition("*")[0].rstrip(".")
        out: list[str] = []
        for doc in docs:
            value = doc
            for part in container.split(".") if container else []:
                value = value.get(part, {}) if isinstance(value, dict) else {}
            for key in value if isinstance(value, dict) else []:
                name = family.replace("*", key)
                if name not in out:
                    out.append(name)
        return out


def _require(data: dict, key: str, where: Path) -> Any:
    if key not in data:
        raise ManifestError(f"{paths.rel(where)}: missing '{key}'")
    return data[key]


def _load_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ManifestError(f"{paths.rel(path)}: {e}") from None


def _load_impl(workload: Workload, manifest: Path) -> Impl:
    data = _load_toml(manifest)
    impl_id = _require(data, "id", manifest)
    if impl_id != manifest.parent.name:
        raise ManifestError(f"{paths.rel(manifest)}: id '{impl_id}' is not the folder name")
    language = _require(data, "language", manifest)
    if language not in LANGUAGES:
        raise ManifestError(f"{paths.rel(manifest)}: language must be one of {LANGUAGES}")
    build = _require(data, "build", manifest)
    if build.get("system") not in BUILD_SYSTEMS:
        raise ManifestError(f"{paths.rel(manifest)}: build.system must be one of {BUILD_SYSTEMS}")
    absent = data.get("absent", "")
    if not isinstance(absent, str) or ("absent" in data and not absent.strip()):
        raise ManifestError(f"{paths.rel(manifest)}: absent must be a non-empty reason")
    run = data.get("run", {"argv": []}) if absent else _require(data, "run", manifest)
    argv = _require(run, "argv", manifest)
    if absent and (argv or build["system"] != "none" or run.get("client_argv")):
        raise ManifestError(
            f"{paths.rel(manifest)}: an absent implementation has no program: "
            '[build] system = "none" and [run] argv = [] (no client_argv)'
        )
    if not absent and not argv:
        raise ManifestError(
            f"{paths.rel(manifest)}: [run] argv is empty; an implementation without a program "
            'says why with absent = "..."'
        )
    return Impl(
        workload=workload.name,
        id=impl_id,
        dir=manifest.parent,
        language=language,
        variant=data.get("variant", ""),
        summary=data.get("summary", ""),
        build=build,
        run=run,
        traits=data.get("traits", {}),
        sources_globs=data.get("metrics", {}).get("sources", []),
        skip_markers=data.get("conformance", {}).get("skip_markers", []),
        notes=data.get("notes", {}),
        _workload=workload,
        params=data.get("params", {}),
        deviations=data.get("conformance", {}).get("deviations", {}),
        absent=absent,
        fuzz=data.get("fuzz", []),
        fuzz_exempt=data.get("fuzz_exempt", ""),
        **_subset(data, workload, manifest),
    )


def _subset(data: dict, workload: Workload, manifest: Path) -> dict:
    """[conformance] only_markers/only_why and [measured_in] scenarios/why, checked: a subset
    always says why, and names scenarios the workload has."""
    where = paths.rel(manifest)
    conf, measured = data.get("conformance", {}), data.get("measured_in", {})
    if conf.get("only_markers") and not conf.get("only_why"):
        raise ManifestError(f"{where}: [conformance] only_markers needs only_why")
    if measured and (not measured.get("scenarios") or not measured.get("why")):
        raise ManifestError(f"{where}: [measured_in] needs scenarios and why")
    unknown = [s for s in measured.get("scenarios", []) if s not in workload.scenarios]
    if unknown:
        raise ManifestError(f"{where}: [measured_in]: {workload.name} has no scenario {unknown[0]}")
    return {
        "only_markers": conf.get("only_markers", []),
        "only_why": conf.get("only_why", ""),
        "measured_in": measured.get("scenarios", []),
        "measured_in_why": measured.get("why", ""),
    }


def _hosts(s: dict, manifest: Path) -> HostsSpec | None:
    try:
        return hosts.parse(s.get("hosts"), f"{paths.rel(manifest)}: scenario {s['name']}")
    except hosts.HostsError as e:
        raise ManifestError(str(e)) from None


def _counting(s: dict, manifest: Path) -> Counting | None:
    """A scenario's `instructions` table: `param`, the scenario parameter that sets its number
    of operations (a positive integer in every profile), and `ops`, the driver's output field
    that counts the operations it measured."""
    table = s.get("instructions")
    if table is None:
        return None
    where = f"{paths.rel(manifest)}: scenario {s['name']}: instructions"
    if not isinstance(table, dict) or set(table) != {"param", "ops"}:
        raise ManifestError(f'{where} must be {{ param = "<parameter>", ops = "<driver field>" }}')
    if not all(isinstance(v, str) and v for v in table.values()):
        raise ManifestError(f"{where}: param and ops must be non-empty strings")
    for profile, params in s.get("params", {}).items():
        n = params.get(table["param"])
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            raise ManifestError(
                f"{where}: param '{table['param']}' is {n!r} in profile {profile}, not a positive "
                "integer (it is run at N and 2N)"
            )
    return Counting(param=table["param"], ops=table["ops"])


def _load_workload(manifest: Path) -> Workload:
    data = _load_toml(manifest)
    drivers = {}
    for name, d in data.get("drivers", {}).items():
        drivers[name] = Driver(
            name=name,
            argv=_require(d, "argv", manifest),
            build=d.get("build", {"system": "none"}),
            requires=d.get("requires", []),
        )
    scenarios = {}
    for s in data.get("scenarios", []):
        driver = s.get("driver", next(iter(drivers), ""))
        if driver and driver not in drivers:
            raise ManifestError(
                f"{paths.rel(manifest)}: scenario {s['name']}: unknown driver '{driver}' "
                f"(valid: {', '.join(drivers)})"
            )
        scenarios[s["name"]] = Scenario(
            name=s["name"],
            driver=driver,
            description=s.get("description", ""),
            args=s.get("args", []),
            params=s.get("params", {}),
            metrics=s.get("metrics", []),
            primary=s["primary"],
            own_client=bool(s.get("own_client", False)),
            kind=s.get("kind", ""),
            hosts=_hosts(s, manifest),
            peer=s.get("peer", ""),
            instructions=_counting(s, manifest),
        )
    metric_defs = data.get("metrics", {})
    for name, d in metric_defs.items():
        _check_metric(name, d, manifest)
    if any(s.instructions for s in scenarios.values()):  # the harness defines this metric
        metric_defs[INSTRUCTIONS_METRIC] = dict(INSTRUCTIONS_METRIC_DEF)
    for s in scenarios.values():
        for m in [*s.metrics, s.primary]:
            if m not in metric_defs and not family_member(m, metric_defs):
                raise ManifestError(f"{paths.rel(manifest)}: scenario {s.name}: unknown metric {m}")
    w = Workload(
        name=_require(data, "name", manifest),
        title=data.get("title", ""),
        dir=manifest.parent,
        kind=data.get("kind", "stdio"),
        baseline=data.get("baseline", ""),
        reference=data.get("reference", ""),
        drivers=drivers,
        metric_defs=metric_defs,
        profiles=data.get("profiles", {}),
        scenarios=scenarios,
        template_values=data.get("templates", {}),
        targets=data.get("targets", []),
        side_by_side=data.get("side_by_side", []),
        sweeps=data.get("sweeps", []),
        ratio_charts=data.get("ratio_charts", []),
        matrices=data.get("matrices", []),
        fuzz_targets=_fuzz_targets(data, manifest),
        robustness=data.get("robustness", {}),
        fuzz_differential=data.get("fuzz_differential", {}),
    )
    _check_ratio_charts_and_matrices(w, manifest)
    for table_name, used in [
        ("sweeps", [(p[0], t.get("metric")) for t in w.sweeps for p in t.get("points", [])]),
        ("ratio_charts", [(n, t.get("metric")) for t in w.ratio_charts
                          for n in t.get("scenarios", [])]),
        ("matrices", [(n, t.get("metric")) for t in w.matrices for n in t.get("scenarios", [])]),
    ]:  # fmt: skip
        for scen, metric in used:
            if scen not in scenarios or metric not in scenarios[scen].metrics:
                raise ManifestError(
                    f"{paths.rel(manifest)}: [[{table_name}]]: scenario {scen!r} does not "
                    f"measure metric {metric!r}"
                )
    for profile, table in w.profiles.items():
        unknown = [n for n in table.get("scenarios", []) if n not in scenarios]
        if unknown:
            raise ManifestError(
                f"{paths.rel(manifest)}: profiles.{profile}: unknown scenario '{unknown[0]}'"
            )
    kinds = trial_kinds(w)
    for where, kind in [("kind", w.kind)] + [
        (f"scenario {s.name}: kind", s.kind) for s in scenarios.values() if s.kind
    ]:
        if kind not in kinds:
            raise ManifestError(
                f"{paths.rel(manifest)}: {where} '{kind}' is not a trial kind "
                f"(valid: {', '.join(sorted(kinds))})"
            )
    for s in scenarios.values():
        if kinds[s.kind or w.kind].needs_driver and not s.driver:
            raise ManifestError(
                f"{paths.rel(manifest)}: scenario {s.name}: trial kind '{s.kind or w.kind}' "
                "needs a driver: add a [drivers.<name>] table"
            )
    for impl_manifest in sorted((w.dir / "impls").glob("*/impl.toml")):
        impl = _load_impl(w, impl_manifest)
        w.impls[impl.id] = impl
    _add_seed_builds(w, data.get("seed_build"), manifest)
    _check_absent_roles(w, manifest)
    _check_fuzz(w)
    return w


SEEDBUILD_SUFFIX = "-seedbuild"
SEEDBUILD_LANGUAGES = ("c", "cpp", "rust", "go")  # Python has no build to leave unoptimised


def _add_seed_builds(w: Workload, table: dict | None, manifest: Path) -> None:
    """workload.toml [seed_build] {impls, scenarios, why}: each named implementation again as
    `<id>-seedbuild`, built as the seed built its programs and measured only in `scenarios`."""
    if not table:
        return
    where = f"{paths.rel(manifest)}: [seed_build]"
    if not table.get("impls") or not table.get("scenarios") or not table.get("why"):
        raise ManifestError(f"{where} needs impls, scenarios and why")
    unknown = [s for s in table["scenarios"] if s not in w.scenarios]
    if unknown:
        raise ManifestError(f"{where}: {w.name} has no scenario {unknown[0]}")
    for impl_id in table["impls"]:
        base = w.impls.get(impl_id)
        if base is None or base.absent or base.language not in SEEDBUILD_LANGUAGES:
            raise ManifestError(
                f"{where}: {impl_id!r} is not a compiled implementation of {w.name} "
                f"({', '.join(SEEDBUILD_LANGUAGES)})"
            )
        variant = replace(
            base,
            id=impl_id + SEEDBUILD_SUFFIX,
            variant="the seed's build: no optimisation options",
            summary=f"{impl_id}, built as the seeds built their programs ({table['why']})",
            measured_in=list(table["scenarios"]),
            measured_in_why="the seed's build, measured beside the release build only where "
            "a seed used it",
            seedbuild_of=impl_id,
            fuzz=[],
            fuzz_exempt=f"the same sources as {impl_id}, fuzzed there",
            notes={
                "*": f"{impl_id}'s sources built with profiles.toml [seedbuild]: {table['why']}"
            },
        )
        w.impls[variant.id] = variant


def seedbuilds_hidden(impls: list[Impl], named: list[str] | None) -> list[Impl]:
    """The seed's-build variants are built, verified and measured only where named or in a
    plan with their scenarios (pipeline.make_plan), never by "all implementations"."""
    return [i for i in impls if not i.seedbuild_of or (named and i.id in named)]


FUZZ_ENGINES = ("libfuzzer", "libfuzzer-rust", "go", "atheris")


def _fuzz_targets(data: dict, manifest: Path) -> dict[str, dict]:
    targets = {}
    for t in data.get("fuzz_targets", []):
        name = _require(t, "name", manifest)
        targets[name] = {
            "corpus": manifest.parent / _require(t, "corpus", manifest),
            "max_len": int(t.get("max_len", 4096)),
            "summary": t.get("summary", ""),
        }
    return targets


def _check_fuzz(w: Workload) -> None:
    """Every [[fuzz]] of an implementation names a target of its workload and a known engine."""
    for impl in w.impls.values():
        where = paths.rel(impl.dir / "impl.toml")
        for f in impl.fuzz:
            for key in ("target", "engine", "entry"):
                if not isinstance(f.get(key), str) or not f[key]:
                    raise ManifestError(f"{where}: [[fuzz]] needs a non-empty '{key}'")
            if f["target"] not in w.fuzz_targets:
                raise ManifestError(
                    f"{where}: [[fuzz]] target '{f['target']}' is not one of the workload's "
                    f"[[fuzz_targets]] ({', '.join(w.fuzz_targets) or 'none'})"
                )
            if f["engine"] not in FUZZ_ENGINES:
                raise ManifestError(
                    f"{where}: [[fuzz]] engine '{f['engine']}' (valid: {', '.join(FUZZ_ENGINES)})"
                )


def _check_ratio_charts_and_matrices(w: Workload, manifest: Path) -> None:
    """The shape of [[ratio_charts]] and [[matrices]] (their scenarios' metrics are checked
    with the sweeps'): the keys the report reads, and a `peer` for every matrix scenario."""
    where = paths.rel(manifest)
    for table_name, tables, keys in [
        ("ratio_charts", w.ratio_charts, ("title", "metric", "numerator", "denominator")),
        ("matrices", w.matrices, ("title", "metric")),
    ]:
        for t in tables:
            for key in keys:
                if not isinstance(t.get(key), str) or not t[key]:
                    raise ManifestError(f"{where}: [[{table_name}]]: missing '{key}'")
            names = t.get("scenarios")
            if not isinstance(names, list) or not names:
                raise ManifestError(f"{where}: [[{table_name}]] {t['title']!r}: no scenarios")
            unknown = [n for n in names if n not in w.scenarios]
            if unknown:
                raise ManifestError(
                    f"{where}: [[{table_name}]] {t['title']!r}: unknown scenario {unknown[0]!r}"
                )
            if len(set(names)) != len(names):
                raise ManifestError(
                    f"{where}: [[{table_name}]] {t['title']!r}: a scenario is listed twice"
                )
    for t in w.ratio_charts:
        if t["numerator"] == t["denominator"]:
            raise ManifestError(
                f"{where}: [[ratio_charts]] {t['title']!r}: numerator and denominator are both "
                f"{t['numerator']!r}"
            )
    for t in w.matrices:
        peers = [w.scenarios[n].peer for n in t["scenarios"]]
        for n, peer in zip(t["scenarios"], peers, strict=True):
            if not peer:
                raise ManifestError(
                    f"{where}: [[matrices]] {t['title']!r}: scenario {n!r} has no peer "
                    "(the implementation whose client drives every server in it)"
                )
        if len(set(peers)) != len(peers):
            raise ManifestError(
                f"{where}: [[matrices]] {t['title']!r}: two scenarios have the same peer"
            )


def _check_absent_roles(w: Workload, manifest: Path) -> None:
    """An absent implementation cannot be what others are read against: not the floor, the
    reference, a ratio chart's term or a scenario's peer."""
    roles = [("baseline", w.baseline), ("reference", w.reference)]
    roles += [(f"scenario {s.name}: peer", s.peer) for s in w.scenarios.values()]
    roles += [
        (f"[[ratio_charts]] {t['title']!r}: {k}", t[k])
        for t in w.ratio_charts
        for k in ("numerator", "denominator")
    ]
    for role, impl_id in roles:
        if impl_id in w.impls and w.impls[impl_id].absent:
            raise ManifestError(
                f"{paths.rel(manifest)}: {role} is {impl_id!r}, which is absent "
                f"({w.impls[impl_id].absent})"
            )


def family_member(name: str, metric_defs: Iterable[str]) -> bool:
    """Whether `name` is one member of a family ("p99.SET" of "p99.*"): a scenario may name
    the members it is about (seed 002's SET and GET) instead of the whole family."""
    return any(
        "*" in family and name.startswith(family.partition("*")[0]) and "*" not in name
        for family in metric_defs
    )


def _check_metric(name: str, d: dict, manifest: Path) -> None:
    where = f"{paths.rel(manifest)}: metric {name}"
    for key in ("field", "unit", "better", "role"):
        if key not in d:
            raise ManifestError(f"{where}: missing '{key}'")
    if d["better"] not in ("lower", "higher"):
        raise ManifestError(f"{where}: better must be 'lower' or 'higher'")
    if d["role"] not in METRIC_ROLES:
        raise ManifestError(f"{where}: role '{d['role']}' is not one of {', '.join(METRIC_ROLES)}")
    if d["role"] == "latency" and not isinstance(d.get("percentile"), int | float):
        raise ManifestError(f"{where}: a latency metric needs a numeric 'percentile' (100 = max)")


_kinds_cache: dict[Path, dict] = {}


def trial_kinds(w: Workload) -> dict:
    """The trial kinds this workload may use: the harness's own (msgbench/trials/) and any its
    folder registers (<workload>/trials/*.py)."""
    if w.dir not in _kinds_cache:
        from . import trials

        _kinds_cache[w.dir] = {**trials.builtin(), **trials.from_folder(w.dir, w.name)}
    return _kinds_cache[w.dir]


@cache
def load() -> dict[str, Workload]:
    """Every workload under workloads/, by name."""
    out = {}
    for manifest in sorted(paths.WORKLOADS.glob("*/workload.toml")):
        w = _load_workload(manifest)
        out[w.name] = w
    return out


def workload(name: str) -> Workload:
    workloads = load()
    if name not in workloads:
        raise ManifestError(f"unknown workload '{name}' (valid: {', '.join(workloads)})")
    return workloads[name]


def select(
    workload_name: str | None, impl_ids: list[str] | None, with_seedbuilds: bool = False
) -> list[Impl]:
    """Implementations matching a workload name and impl ids (None = all; the seed's-build
    variants only when named, or with with_seedbuilds: a plan keeps those its scenarios use)."""
    names = [workload_name] if workload_name else list(load())
    chosen: list[Impl] = []
    for name in names:
        w = workload(name)
        if impl_ids:
            unknown = [i for i in impl_ids if i not in w.impls]
            if unknown and workload_name:
                raise ManifestError(
                    f"unknown implementation '{unknown[0]}' for {name} "
                    f"(valid: {', '.join(w.impls)})"
                )
            chosen.extend(w.impls[i] for i in impl_ids if i in w.impls)
        else:
            chosen.extend(w.impls.values())
    return chosen if with_seedbuilds else seedbuilds_hidden(chosen, impl_ids)
