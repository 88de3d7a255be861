"""Building implementations and drivers with the flags of profiles.toml.

One build root per toolchain (docs/decisions.md): CMake for C/C++, one Cargo workspace, one Go
module. Each build's output goes to build/logs/<name>.log; a failing build is reported with its
log path and the others go on.

Two build profiles (paths.BUILD_PROFILES): `release`, what is measured, and `sanitize`, C and
C++ with ASan + UBSan and Go with -race in build/sanitize/ (profiles.toml [sanitize]), which
covers only the implementations built by CMake or Go. The selected profile is paths.BUILD_PROFILE.
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


# The build systems the sanitize profile instruments (C and C++ through CMake, Go).
SANITIZED_SYSTEMS = ("cmake", "go")


def flags() -> dict[str, dict]:
    """The release flags per language, as recorded in every run."""
    return profiles.release()


def in_profile(impl: Impl, profile: str | None = None) -> bool:
    """Whether a build profile builds this implementation: release builds every one; sanitize
    those built by CMake or Go (Rust, Python and references such as redis-server keep their
    one build)."""
    if (profile or paths.BUILD_PROFILE) == "release":
        return True
    return impl.build.get("system") in SANITIZED_SYSTEMS


def cargo_env(seedbuild: bool = False) -> dict[str, str]:
    """Cargo's environment: the release flags of profiles.toml, or for the seed's build the
    dev profile (no flag of its own) in build/seedbuild/cargo, linked as statically."""
    rust = profiles.load()["rust"]
    env = dict(os.environ)
    if seedbuild:
        env.update(
            {
                "CARGO_TARGET_DIR": str(paths.SEEDBUILD_CARGO_TARGET),
                "RUSTFLAGS": " ".join(rust["rustflags"]),
            }
        )
        return env
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


def cargo_build_argv(package: str, seedbuild: bool = False) -> list[str]:
    """`cargo build --release` of one package; without --release for the seed's build."""
    target = profiles.load()["rust"]["target"]
    release = [] if seedbuild else ["--release"]
    return ["cargo", "build", *release, "--target", target, "-p", package]


def go_env(seedbuild: bool = False) -> dict[str, str]:
    go = profiles.load()["go"]
    env = dict(os.environ)
    env["GOAMD64"] = "v1" if seedbuild else go["goamd64"]  # v1: Go's own default
    # The race detector's runtime is C: `go build -race` needs cgo.
    cgo = go.get("cgo") or paths.BUILD_PROFILE == "sanitize"
    env["CGO_ENABLED"] = "1" if cgo else "0"
    return env


def go_build_argv(out: Path, package: str, seedbuild: bool = False) -> list[str]:
    """`go build` of one package into `out` with the selected profile's flags (none at all
    for the seed's build: a plain `go build`)."""
    argv = ["go", "build", "-o", str(out)]
    if seedbuild:
        return [*argv, f"./{package}"]
    if paths.BUILD_PROFILE == "sanitize":
        return [*argv, *profiles.sanitize()["go_flags"], f"./{package}"]
    go = profiles.load()["go"]
    if go.get("trimpath"):
        argv.append("-trimpath")
    if go.get("ldflags"):
        argv.append(f"-ldflags={' '.join(go['ldflags'])}")
    if go.get("gcflags"):
        argv.append(f"-gcflags={go['gcflags']}")
    return [*argv, f"./{package}"]


def cmake_configure_argv(seedbuild: bool = False) -> list[str]:
    """Configure the selected profile's CMake tree: build type Release with profiles.toml's
    [c]/[cpp] flags, or build type Sanitize with [sanitize]'s (the same for C and C++); or
    the seed's build's tree (build/seedbuild/cmake) with [seedbuild]'s."""
    p = profiles.load()
    c, cpp = p["c"], p["cpp"]
    tree = paths.profile_trees(paths.SEEDBUILD)["CMAKE_BUILD"] if seedbuild else paths.CMAKE_BUILD
    if seedbuild:
        s = profiles.seedbuild()
        build_type, cflags, cxxflags, ldflags = "Seedbuild", s["cflags"], s["cflags"], s["ldflags"]
    elif paths.BUILD_PROFILE == "sanitize":
        s = profiles.sanitize()
        build_type, cflags, cxxflags, ldflags = "Sanitize", s["cflags"], s["cflags"], s["ldflags"]
    else:
        build_type, cflags, cxxflags = "Release", c["cflags"], cpp["cxxflags"]
        ldflags = sorted(set(c["ldflags"] + cpp["ldflags"]))
    suffix = build_type.upper()
    argv = [
        "cmake",
        "-S",
        str(paths.ROOT),
        "-B",
        str(tree),
        f"-DCMAKE_BUILD_TYPE={build_type}",
        f"-DCMAKE_C_COMPILER={c['compiler']}",
        f"-DCMAKE_CXX_COMPILER={cpp['compiler']}",
        f"-DCMAKE_C_FLAGS_{suffix}={' '.join(cflags)}",
        f"-DCMAKE_CXX_FLAGS_{suffix}={' '.join(cxxflags)}",
        f"-DCMAKE_EXE_LINKER_FLAGS_{suffix}={' '.join(ldflags)}",
    ]
    if shutil.which("ninja") and not (tree / "Makefile").exists():
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


def configure_cmake(log: Path, seedbuild: bool = False) -> tuple[bool, str]:
    return _run(cmake_configure_argv(seedbuild), log)


def _build_target(impl: Impl, system: str, target: str, exe: Path, log: Path, cmake_ok: bool):
    seed = bool(impl.seedbuild_of)
    if system == "cmake":
        if not cmake_ok:
            return False, "cmake configure failed"
        tree = paths.profile_trees(paths.SEEDBUILD)["CMAKE_BUILD"] if seed else paths.CMAKE_BUILD
        return _run(["cmake", "--build", str(tree), "--target", target], log)
    if system == "cargo":
        return _run(cargo_build_argv(target, seed), log, cargo_env(seed))
    if system == "go":
        return _run(go_build_argv(exe, target, seed), log, go_env(seed))
    return True, ""  # "none": interpreted, nothing to compile


def build_impl(impl: Impl, cmake_configured: bool) -> BuildResult:
    """Build the implementation (and its own client program, `[build] client_target`, when
    it has one: a server workload's implementation may bring its client, as comm's do)."""
    log = paths.BUILD_LOGS / f"{impl.workload}-{impl.id}.log"
    if impl.absent:  # no program to build; not a failure
        return BuildResult(impl.name, True, log, f"absent: {impl.absent}", skipped=True)
    if not in_profile(impl):
        why = f"the {paths.BUILD_PROFILE} profile builds only CMake and Go implementations"
        return BuildResult(impl.name, True, log, why, skipped=True)
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
