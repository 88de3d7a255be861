"""Trial kinds: how one trial of a scenario runs (which process starts what, with which words).

A kind is a strategy registered by being a module: every module of this package, and every
`trials/*.py` of a workload folder, that defines a module-level `KIND` (a `TrialKind`) is found
automatically. A workload names its default kind in workload.toml (`kind = "stdio"`); a scenario
may name another (`kind = "..."`). Unknown kinds are rejected when the manifests load, with the
valid ones listed, so a typo never waits until a trial runs.

The driver contract (docs/driver-contract.md) is spoken with named options: a kind fills
`DriverCall.options` by name and the call renders them; nothing splices argv by position.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import pkgutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the registry imports this package: type names only, no import cycle
    from ..hosts import TrialHosts
    from ..registry import Impl, Scenario, Workload
    from ..runner import Placement
    from ..sites import Site, Sites

from ..hostagent import TOKEN_ENV

DRIVER_GRACE_S = 30  # beyond the trial timeout: the driver's own bounded clean-up


class TrialFailed(Exception):
    """One trial did not produce a measurement; the message says why (recorded, run goes on)."""


@dataclass(frozen=True)
class TrialContext:
    """Everything a kind may use to set up one trial."""

    workload: Workload
    scenario: Scenario
    impl: Impl
    profile: str
    placement: Placement
    log_dir: Path
    timeout_s: int
    hosts: TrialHosts | None = None  # the scenario's hosts, set up by the runner
    # Parameters that replace the scenario's and the implementation's own for this one trial
    # (an instruction count runs the scenario at N and 2N operations: msgbench.instructions).
    params: dict = field(default_factory=dict)
    # Wraps the implementation's argv (e.g. under valgrind); every kind starts the
    # implementation through impl_argv(), so a wrapper reaches it whatever the kind.
    wrap: Callable[[list[str]], list[str]] | None = None
    # The hosts of a hosts file (docs/hosts.md): where the driver runs, and where the
    # implementation runs when that is another host (its agent starts it there).
    sites: Sites | None = None

    def split(self) -> tuple[Site, Site] | None:
        """(driver's host, implementation's host) when they differ; None otherwise."""
        if self.sites is None or not self.sites.file.split:
            return None
        return self.sites.role("driver"), self.sites.role("impl")

    def cpus(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The driver's and the implementation's CPUs: the placement's, or those a hosts
        file gives their hosts."""
        driver, impl = self.placement.driver_cpus, self.placement.impl_cpus
        if self.sites is not None and self.sites.file.roles:
            driver = self.sites.role("driver").cpus or driver
            impl = self.sites.role("impl").cpus or impl
        return driver, impl

    def scenario_argv(self) -> list[str]:
        """The scenario's arguments for this profile, with the implementation's own parameters
        for it where its impl.toml has them ([params.<scenario>.<profile>]), then this
        trial's `params`."""
        own = self.impl.params.get(self.scenario.name, {}).get(self.profile)
        return self.scenario.argv(self.profile, {**(own or {}), **self.params})

    def impl_argv(self, argv: list[str]) -> list[str]:
        """The implementation's argv as this trial starts it (`wrap` applied)."""
        return self.wrap(argv) if self.wrap else argv

    @property
    def stderr_log(self) -> Path:
        """Where the implementation's stderr goes (kept in the run's logs)."""
        return self.log_dir / f"{self.workload.name}-{self.impl.id}.stderr.log"

    @property
    def driver_log(self) -> Path:
        return self.log_dir / f"{self.workload.name}-driver.log"


@dataclass
class DriverCall:
    """One driver invocation: the driver's argv and scenario arguments, the contract's options
    by name (rendered as `--name value`, None = left out), then `--` and the implementation."""

    base: list[str]
    options: dict[str, str | None] = field(default_factory=dict)
    impl_argv: list[str] = field(default_factory=list)

    def argv(self) -> list[str]:
        out = list(self.base)
        for name, value in self.options.items():
            if value is not None:
                out += [f"--{name}", value]
        return [*out, "--", *self.impl_argv]


def cpu_list(cpus: tuple[int, ...]) -> str | None:
    return ",".join(str(c) for c in cpus) if cpus else None


def contract_options(ctx: TrialContext) -> dict[str, str | None]:
    """The options every driver accepts (docs/driver-contract.md)."""
    driver_cpus, impl_cpus = ctx.cpus()
    return {
        "driver-cpus": cpu_list(driver_cpus),
        "impl-cpus": cpu_list(impl_cpus),
        "impl-stderr": str(ctx.stderr_log),
        "timeout-s": str(ctx.timeout_s),
        "impl-cwd": ctx.impl.cwd(),
    }


def run_driver(call: DriverCall, ctx: TrialContext) -> dict:
    """Run a driver once; return its JSON document or raise TrialFailed. Its command line and
    output go to the run's driver log, so every figure can be traced to the call that made it."""
    argv = call.argv()
    limit = ctx.timeout_s + DRIVER_GRACE_S
    with open(ctx.driver_log, "a") as dlog:
        where = f" [on host {ctx.sites.role('driver').name}]" if ctx.sites else ""
        dlog.write(f"${where} {' '.join(argv)}\n")
        dlog.flush()
        try:
            if ctx.sites is None:
                proc = subprocess.run(
                    argv, stdout=subprocess.PIPE, stderr=dlog, text=True, timeout=limit
                )
            else:  # on the driver's host, with the token its implementation's agent wants
                proc = ctx.sites.role("driver").run(argv, limit, {TOKEN_ENV: ctx.sites.token})
                dlog.write(proc.stderr)
        except subprocess.TimeoutExpired:
            raise TrialFailed(f"driver did not finish within {limit} s") from None
        except OSError as e:
            raise TrialFailed(f"cannot start the driver: {e}") from None
        dlog.write(proc.stdout + "\n")
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise TrialFailed(
            f"driver exit status {proc.returncode}, output is not JSON "
            f"(see {ctx.log_dir.name}/{ctx.driver_log.name})"
        ) from None
    if not isinstance(doc, dict):
        raise TrialFailed("driver output is not a JSON object")
    if proc.returncode != 0 or "error" in doc:
        raise TrialFailed(str(doc.get("error", f"driver exit status {proc.returncode}")))
    return doc


class TrialKind:
    """A strategy for running one trial. Subclasses set `name` and `description` and override
    `call` (the usual case: a driver process per trial) or `run` (anything else)."""

    name = ""
    description = ""
    needs_driver = True  # a load generator from workload.toml [drivers] runs each trial
    # Whether the implementation can run on another host than the driver (docs/hosts.md): a
    # server reached over the network can; a stdio host or a pipe pair cannot.
    splits = False

    def call(self, ctx: TrialContext) -> DriverCall:
        raise NotImplementedError

    def runnable(self, impl: Impl, scenario: Scenario) -> str | None:
        """None if this kind can run `impl` in `scenario`; else why not (the trial is skipped,
        not failed)."""
        return None

    def run(self, ctx: TrialContext) -> dict:
        return run_driver(self.call(ctx), ctx)


def _module_kind(module, where: str) -> TrialKind | None:
    kind = getattr(module, "KIND", None)
    if kind is None:
        return None
    if not isinstance(kind, TrialKind) or not kind.name:
        raise TypeError(f"{where}: KIND must be a named msgbench.trials.TrialKind")
    return kind


def builtin() -> dict[str, TrialKind]:
    """The kinds that ship with the harness (the modules of this package)."""
    kinds: dict[str, TrialKind] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        kind = _module_kind(module, module.__name__)
        if kind:
            kinds[kind.name] = kind
    return kinds


def from_folder(folder: Path, namespace: str) -> dict[str, TrialKind]:
    """Kinds a workload registers itself: `<workload>/trials/*.py`, each with a KIND."""
    kinds: dict[str, TrialKind] = {}
    for path in sorted((folder / "trials").glob("*.py")):
        name = f"msgbench_workload_trials.{namespace}.{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        kind = _module_kind(module, str(path))
        if kind:
            kinds[kind.name] = kind
    return kinds
