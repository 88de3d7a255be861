"""Building implementations and drivers with the flags of profiles.toml.

One build root per toolchain (docs/decisions.md): CMake for C/C++, one Cargo workspace, one Go
module. Each build's output goes to build/logs/<name>.log; a failing build is reported with its
log path and the others go on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import paths, profiles
from .registry import Impl, Workload

BUILD_TIMEOUT_S = 1800


@dataclass
class BuildResult:
    name: str
    ok: bool
    log: Path
    message: str = ""
    skipped: bool = False  # nothing to build (an absent implementation): message says why


def flags() -> dict[str, dict]:
    """The release flags per language, as recorded in every run."""
    return profiles.load()


def cargo_env() -> dict[str, str]:
    rust = profiles.load()["rust"]
    env = dict(os.environ)
    env.update(
        {
            "CARGO_TARGET_DIR": str(paths.CARGO_TARGET),
            "CARGO_PROFILE_RELEASE_OPT_LEVEL": str(rust["opt_level"]),
            "CARGO_PROFILE_RELEASE_LTO": str(rust["lto"]),
            "CARGO_PROFILE_RELEASE_CODEGEN_UNITS": str(rust["codegen_units"]),
            "CARGO_PROFILE_RELEASE_PANIC": str(rust["panic"]),
            "RUSTFLAGS": " ".join(rust["rustflags"]),
        }
    )
    return env


def cargo_build_argv(package: str) -> list[str]:
    target = profiles.load()["rust"]["target"]
    return ["cargo", "build", "--release", "--target", target, "-p", package]


def go_env() -> dict[str, str]:
    go = profiles.load()["go"]
    env = dict(os.environ)
    env["GOAMD64"] = go["goamd64"]
    env["CGO_ENABLED"] = "1" if go.get("cgo") else "0"
    return env


def cmake_configure_argv() -> list[str]:
    p = profiles.load()
    c, cpp = p["c"], p["cpp"]
    argv = [
        "cmake",
        "-S",
        str(paths.ROOT),
        "-B",
        str(paths.CMAKE_BUILD),
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DCMAKE_C_COMPILER={c['compiler']}",
        f"-DCMAKE_CXX_COMPILER={cpp['compiler']}",
        f"-DCMAKE_C_FLAGS_RELEASE={' '.join(c['cflags'])}",
        f"-DCMAKE_CXX_FLAGS_RELEASE={' '.join(cpp['cxxflags'])}",
        f"-DCMAKE_EXE_LINKER_FLAGS_RELEASE={' '.join(sorted(set(c['ldflags'] + cpp['ldflags'])))}",
    ]
    if shutil.which("ninja") and not (paths.CMAKE_BUILD / "Makefile").exists():
        argv += ["-G", "Ninja"]
    return argv


def _run(argv: list[str], log: Path, env: dict | None = None) -> tuple[bool, str]:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a") as f:
        f.write(f"$ {' '.join(argv)}\n")
        f.flush()
        try:
            r = subprocess.run(
                argv,
                cwd=paths.ROOT,
                env=env,
                stdout=f,
                stderr=subprocess.STDOUT,
                timeout=BUILD_TIMEOUT_S,
            )
        except FileNotFoundError:
            return False, f"{argv[0]} not found (run `msgbench doctor`)"
        except subprocess.TimeoutExpired:
            return False, f"timed out after {BUILD_TIMEOUT_S} s"
    if r.returncode != 0:
        return False, f"exit status {r.returncode}"
    return True, ""


def configure_cmake(log: Path) -> tuple[bool, str]:
    return _run(cmake_configure_argv(), log)


def _build_target(impl: Impl, system: str, target: str, exe: Path, log: Path, cmake_ok: bool):
    if system == "cmake":
        if not cmake_ok:
            return False, "cmake configure failed"
        return _run(["cmake", "--build", str(paths.CMAKE_BUILD), "--target", target], log)
    if system == "cargo":
        return _run(cargo_build_argv(target), log, cargo_env())
    if system == "go":
        go = profiles.load()["go"]
        argv = ["go", "build", "-o", str(paths.GO_BIN / exe.name)]
        if go.get("trimpath"):
            argv.append("-trimpath")
        if go.get("ldflags"):
            argv.append(f"-ldflags={' '.join(go['ldflags'])}")
        if go.get("gcflags"):
            argv.append(f"-gcflags={go['gcflags']}")
        return _run([*argv, f"./{target}"], log, go_env())
    return True, ""  # "none": interpreted, nothing to compile


def build_impl(impl: Impl, cmake_configured: bool) -> BuildResult:
    """Build the implementation (and its own client program, `[build] client_target`, when
    it has one: a server workload's implementation may bring its client, as comm's do)."""
    log = paths.BUILD_LOGS / f"{impl.workload}-{impl.id}.log"
    if impl.absent:  # no program to build; not a failure
        return BuildResult(impl.name, True, log, f"absent: {impl.absent}", skipped=True)
    log.unlink(missing_ok=True)
    system, target = impl.build["system"], impl.build.get("target", "")
    ok, msg = _build_target(impl, system, target, Path(impl.executable), log, cmake_configured)
    client_target = impl.build.get("client_target")
    if ok and client_target and impl.client_argv():
        client_exe = Path(impl.client_argv()[0])
        ok, msg = _build_target(impl, system, client_target, client_exe, log, cmake_configured)
    if ok and not impl.built:
        ok, msg = False, f"build succeeded but {paths.rel(impl.executable)} does not exist"
    return BuildResult(impl.name, ok, log, msg)


def build_drivers(workload: Workload) -> list[BuildResult]:
    """Build every compiled driver of a workload (interpreted ones need nothing)."""
    out = []
    for d in workload.drivers.values():
        if d.build.get("system") != "cargo":
            continue
        log = paths.BUILD_LOGS / f"driver-{workload.name}-{d.name}.log"
        log.unlink(missing_ok=True)
        ok, msg = _run(cargo_build_argv(d.build["target"]), log, cargo_env())
        out.append(BuildResult(f"driver {d.build['target']}", ok, log, msg))
    return out
