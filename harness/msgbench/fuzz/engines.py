"""The fuzz engines: how each language's fuzzer is built, started, replayed and read.

Four engines, one per ecosystem's own coverage-guided fuzzer (docs/decisions.md, "Fuzzing"):

- `libfuzzer`: C and C++ targets built by clang 14 in their own CMake tree (build/fuzz) with
  libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer on every source.
- `libfuzzer-rust`: Rust targets on `libfuzzer-sys`, instrumented by rustc's own sancov pass
  from RUSTFLAGS on the stable toolchain (no cargo-fuzz, which needs nightly for its flags).
- `atheris`: Python targets; libFuzzer inside, Python's own line coverage as its feedback.
- `go`: `go test -fuzz`, Go's native fuzzer.

The three libFuzzer-based engines share one command line and one output format. Coverage is
each fuzzer's own measure: libFuzzer's `cov` (edges, or Python lines for atheris) and `ft`
(features); Go has none, so its row reports corpus growth ("new interesting" inputs).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..registry import Impl

FUZZ_CMAKE = paths.BUILD / "fuzz"
FUZZ_CARGO = paths.BUILD / "cargo-fuzz"  # instrumented Rust targets, for campaigns
# An explicit target triple keeps RUSTFLAGS off build scripts (instrumented, they fail to link:
# no sanitizer runtime), and puts the binaries under FUZZ_CARGO/<triple>/release.
RUST_TRIPLE = "x86_64-unknown-linux-gnu"
REPLAY_CARGO = paths.BUILD / "cargo"  # the workspace's own target dir: replays need no sancov
# rustc's sanitizer-coverage pass with libFuzzer's counters, on stable (what cargo-fuzz passes
# with --sanitizer none), plus the checks a fuzz build wants on: debug assertions, overflow.
RUST_FUZZ_FLAGS = [
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=4",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
    "-Cllvm-args=-sanitizer-coverage-trace-compares",
    "-Cllvm-args=-sanitizer-coverage-stack-depth",  # recursion depth as a signal (JSON, capnp)
    "--cfg",
    "fuzzing",
    "-Cdebug-assertions",
    "-Coverflow-checks",
]
# libFuzzer's limits for every campaign and replay: an input that takes longer than TIMEOUT_S
# is a hang; RSS or one allocation beyond the cap is a finding (each SPEC's caps are far below).
TIMEOUT_S = 10
RSS_LIMIT_MB = 2048


class EngineError(Exception):
    """A target cannot be built or run (missing toolchain, build failure): said plainly."""


@dataclass
class Target:
    """One implementation's fuzz target."""

    impl: Impl
    target: str  # the workload's target name
    engine: str
    entry: str
    corpus: Path  # the shared seed corpus
    max_len: int

    @property
    def name(self) -> str:
        return f"{self.impl.workload}/{self.impl.id}/{self.target}"

    @property
    def regressions(self) -> Path:
        return self.impl.dir / "fuzz" / "regressions" / self.target

    def seed_files(self) -> list[Path]:
        """The shared corpus and this implementation's crash regressions (what replay runs)."""
        files = []
        for folder in (self.corpus, self.regressions):
            if folder.is_dir():
                files += sorted(p for p in folder.iterdir() if p.is_file())
        return files


@dataclass
class Outcome:
    """What a campaign or a replay of one target did, read from the fuzzer's own output."""

    execs: int = 0
    execs_per_s: float = 0.0
    coverage: dict = field(default_factory=dict)  # measure name -> value
    corpus_size: int = 0
    crashes: list[str] = field(default_factory=list)  # inputs the fuzzer saved, as paths
    failure: str = ""  # the first line of the report of a crash, leak, timeout or OOM
    ok: bool = True


def _need(tool: str) -> str:
    found = shutil.which(tool)
    if not found:
        raise EngineError(f"{tool} not found: scripts/setup.sh installs it (make setup)")
    return found


def _run(argv: list[str], log: Path, env: dict | None = None, cwd: Path = paths.ROOT) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as f:
        done = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    if done.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise EngineError(f"{' '.join(argv[:4])} … failed; {paths.rel(log)}:\n" + "\n".join(tail))


# ---- libFuzzer-based engines ----------------------------------------------------------------

_FINAL_COV = re.compile(r"#(\d+)\s+DONE\s+cov: (\d+) ft: (\d+) corp: (\d+)/")
_ANY_COV = re.compile(r"#(\d+)\s+\S+\s+cov: (\d+) ft: (\d+) corp: (\d+)/")
_COUNTERS = re.compile(r"Loaded \d+ modules\s+\((\d+) inline 8-bit counters\)")
_STAT = re.compile(r"^stat::(\w+):\s+(\d+)", re.M)
# What libFuzzer saves for a finding; a `slow-unit-` (an input slower than -report_slow_units)
# is written the same way but is no finding.
_ARTIFACT = re.compile(r"(?:Test unit|artifact) written to (\S*(?:crash|timeout|oom|leak)-\w+)")
_ERROR = re.compile(r"^(?:==\d+==\s*)?(ERROR: .*|SUMMARY: .*|.*runtime error: .*)$", re.M)


class LibFuzzer:
    """C and C++: clang 14, libFuzzer + ASan + UBSan (build/fuzz, a CMake tree of its own)."""

    name = "libfuzzer"
    # 3: the target's own stdout and stderr are closed (an implementation that logs every bad
    # request would spend the campaign writing); libFuzzer keeps a copy of stderr for itself.
    close_fd_mask = 3
    # cov: edges (atheris: Python lines and branches) reached; ft: features (edges with hit
    # counts); counters: the edges instrumented, so cov/counters is the share reached.
    coverage_measures = ("cov", "ft", "counters")

    def build(self, targets: list[Target], log: Path, replay: bool) -> None:
        _need("clang")
        cmake = _need("cmake")
        cache = FUZZ_CMAKE / "CMakeCache.txt"
        if not cache.exists() or "MSGBENCH_FUZZ:BOOL=ON" not in cache.read_text():
            _run([cmake, "-S", str(paths.ROOT), "-B", str(FUZZ_CMAKE), "-G", "Ninja",
                  "-DCMAKE_C_COMPILER=clang", "-DCMAKE_CXX_COMPILER=clang++",
                  "-DMSGBENCH_FUZZ=ON", "-DCMAKE_BUILD_TYPE=Debug"], log)  # fmt: skip
        _run([cmake, "--build", str(FUZZ_CMAKE), "--target", *[t.entry for t in targets]], log)

    def binary(self, t: Target, replay: bool) -> list[str]:
        return [str(FUZZ_CMAKE / "bin" / t.entry)]

    def env(self) -> dict:
        # Leaks are findings; a UBSan report aborts (the build says -fno-sanitize-recover too).
        return os.environ | {
            "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:allocator_may_return_null=0",
            "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
        }

    timeout_s = TIMEOUT_S

    def _limits(self, t: Target) -> list[str]:
        return [f"-timeout={self.timeout_s}", f"-rss_limit_mb={RSS_LIMIT_MB}",
                f"-malloc_limit_mb={RSS_LIMIT_MB}", f"-max_len={t.max_len}"]  # fmt: skip

    def campaign_argv(self, t: Target, seconds: int, work: Path, crashes: Path) -> list[str]:
        """Fuzz for `seconds`: new inputs go to `work` (the machine's growing corpus of this
        target); the shared corpus and the regressions are read only."""
        dirs = [str(work)] + [str(d) for d in (t.corpus, t.regressions) if d.is_dir()]
        return [*self.binary(t, replay=False), f"-max_total_time={seconds}",
                *self._limits(t), "-print_final_stats=1", f"-close_fd_mask={self.close_fd_mask}",
                f"-artifact_prefix={crashes}/", *dirs]  # fmt: skip

    def replay_argv(self, t: Target, files: list[Path]) -> list[str]:
        return [*self.binary(t, replay=True), *self._limits(t), *map(str, files)]

    def parse(self, text: str, seconds: float) -> Outcome:
        o = Outcome()
        stats = {k: int(v) for k, v in _STAT.findall(text)}
        final = _FINAL_COV.findall(text) or _ANY_COV.findall(text)
        if final:
            n, cov, ft, corp = map(int, final[-1])
            o.execs, o.coverage, o.corpus_size = n, {"cov": cov, "ft": ft}, corp
        counters = [int(c) for c in _COUNTERS.findall(text)]
        if counters and o.coverage:  # the edges instrumented: what `cov` is out of
            o.coverage["counters"] = sum(counters)
        o.execs = stats.get("number_of_executed_units", o.execs)
        o.execs_per_s = float(stats.get("average_exec_per_sec", 0)) or (
            o.execs / seconds if seconds > 0 else 0.0
        )
        o.crashes = _ARTIFACT.findall(text)
        errors = _ERROR.findall(text)
        if o.crashes or errors or "==ERROR" in text or "Uncaught Python exception" in text:
            o.ok = False
            o.failure = (errors or ["crash (see the log)"])[0].strip()
        return o


class RustLibFuzzer(LibFuzzer):
    """Rust: libfuzzer-sys, instrumented by rustc's sancov pass on stable (build/cargo-fuzz).
    A replay needs no coverage, so it runs an uninstrumented debug build that shares the
    workspace's target dir (and its already-compiled dependencies) with `cargo test`."""

    name = "libfuzzer-rust"

    @staticmethod
    def split(entry: str) -> tuple[str, str]:
        package, _, binary = entry.partition(":")
        if not package or not binary:
            raise EngineError(f"libfuzzer-rust entry must be PACKAGE:BIN, not {entry!r}")
        return package, binary

    def build(self, targets: list[Target], log: Path, replay: bool) -> None:
        cargo = _need("cargo")
        argv = [cargo, "build", "--quiet"]
        env = dict(os.environ)
        if replay:
            env["CARGO_TARGET_DIR"] = str(REPLAY_CARGO)
        else:
            argv += ["--release", "--target", RUST_TRIPLE]
            env |= {
                "CARGO_TARGET_DIR": str(FUZZ_CARGO),
                "RUSTFLAGS": " ".join(RUST_FUZZ_FLAGS),
                # Fat LTO and one codegen unit buy nothing for fuzzing and cost minutes.
                "CARGO_PROFILE_RELEASE_LTO": "false",
                "CARGO_PROFILE_RELEASE_CODEGEN_UNITS": "16",
                "CARGO_PROFILE_RELEASE_DEBUG": "line-tables-only",
            }
        for t in targets:
            package, binary = self.split(t.entry)
            argv += ["-p", package, "--bin", binary]
        _run(argv, log, env)

    def binary(self, t: Target, replay: bool) -> list[str]:
        binary = self.split(t.entry)[1]
        if replay:
            return [str(REPLAY_CARGO / "debug" / binary)]
        return [str(FUZZ_CARGO / RUST_TRIPLE / "release" / binary)]


class Atheris(LibFuzzer):
    """Python: atheris (libFuzzer inside) under the lab's venv."""

    name = "atheris"
    # 1: only stdout is closed; an uncaught exception's traceback is printed by Python itself
    # on stderr, which must stay open to be read.
    close_fd_mask = 1
    # An input at a SPEC's limits legitimately costs Python seconds (capnp: a 98-byte request
    # of 8 Mi empty list elements takes 3.6 s to serve), three times that on a loaded machine;
    # a hang is still caught, at 60 s instead of 10.
    timeout_s = 60

    def build(self, targets: list[Target], log: Path, replay: bool) -> None:
        python = paths.ROOT / ".venv" / "bin" / "python"
        probe = subprocess.run([str(python), "-c", "import atheris"], capture_output=True)
        if probe.returncode != 0:
            raise EngineError("atheris is not installed in .venv: scripts/setup.sh installs it")

    def binary(self, t: Target, replay: bool) -> list[str]:
        return [str(paths.ROOT / ".venv" / "bin" / "python"), str(t.impl.dir / t.entry)]

    def env(self) -> dict:
        return dict(os.environ)


# ---- Go -------------------------------------------------------------------------------------

_GO_LINE = re.compile(
    r"fuzz: elapsed: (\d+)s, execs: (\d+) \((\d+)/sec\), new interesting: (\d+) \(total: (\d+)\)"
)
_GO_FAILING = re.compile(r"Failing input written to (\S+)")


class GoFuzz:
    """Go: `go test -fuzz` on the implementation's package. Go keeps the inputs it found in its
    own cache ($GOCACHE/fuzz), so campaigns on one machine build on each other; a failing input
    is written to the package's testdata/fuzz/<FuzzName>/, where `go test` replays it forever."""

    name = "go"
    coverage_measures = ("new interesting", "corpus")

    def build(self, targets: list[Target], log: Path, replay: bool) -> None:
        _need("go")

    @staticmethod
    def split(t: Target) -> tuple[str, str]:
        """(package folder, Fuzz function): entry FUNCTION (the implementation's folder is the
        package) or FOLDER:FUNCTION for a package below it."""
        folder, _, func = t.entry.rpartition(":")
        return "./" + paths.rel(t.impl.dir / folder if folder else t.impl.dir), func

    def package(self, t: Target) -> str:
        return self.split(t)[0]

    def env(self) -> dict:
        return dict(os.environ)

    def campaign_argv(self, t: Target, seconds: int, work: Path, crashes: Path) -> list[str]:
        # -fuzzminimizetime 1000x: Go otherwise spends up to a minute shrinking each new input,
        # during which it executes nothing it counts (a 90 s run did 31,069 executions with the
        # default, 425,333 with this).
        package, func = self.split(t)
        return [_need("go"), "test", package, "-run", "^$", "-fuzz", f"^{func}$",
                "-fuzztime", f"{seconds}s", "-fuzzminimizetime", "1000x",
                "-parallel", "1"]  # fmt: skip

    def replay_argv(self, t: Target, files: list[Path]) -> list[str]:
        # The Fuzz function adds the shared corpus as seeds; go test runs them and every input
        # of testdata/fuzz/<FuzzName>/ without fuzzing.
        package, func = self.split(t)
        return [_need("go"), "test", package, "-run", f"^{func}$", "-count", "1"]

    def parse(self, text: str, seconds: float) -> Outcome:
        o = Outcome()
        lines = _GO_LINE.findall(text)
        if lines:
            elapsed, execs, rate, new, total = map(int, lines[-1])
            o.execs = execs
            o.execs_per_s = execs / elapsed if elapsed else float(rate)
            o.coverage = {"new interesting": new, "corpus": total}
            o.corpus_size = total
        o.crashes = _GO_FAILING.findall(text)
        # Go 1.26 can end a timed campaign with "--- FAIL ... context deadline exceeded" and no
        # input (golang/go#75804): the fuzzer's own race at its deadline, not a finding.
        deadline = "context deadline exceeded" in text
        deadline_only = deadline and not o.crashes and "panic:" not in text
        failed = "--- FAIL" in text or "\nFAIL" in text or "panic:" in text
        if o.crashes or (failed and not deadline_only):
            o.ok = False
            fail = [ln.strip() for ln in text.splitlines() if "--- FAIL" in ln or "panic:" in ln]
            o.failure = (fail or ["go test failed (see the log)"])[0]
        return o


ENGINES = {e.name: e for e in (LibFuzzer(), RustLibFuzzer(), Atheris(), GoFuzz())}
