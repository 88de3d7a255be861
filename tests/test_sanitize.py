"""The sanitize build profile: its own trees and flags from profiles.toml, and a sanitizer report
failing the conformance test during which it appeared (docs/decisions.md, "Sanitizer builds")."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from msgbench import build, cli, paths, profiles, registry, sanitize, verify


@pytest.fixture
def sanitize_profile(monkeypatch, tmp_path):
    """The sanitize profile selected for this process and its children, reports in tmp_path."""
    for name, value in paths.profile_trees("sanitize").items():
        monkeypatch.setattr(paths, name, value)
    monkeypatch.setattr(paths, "BUILD_PROFILE", "sanitize")
    monkeypatch.setenv(paths.BUILD_PROFILE_ENV, "sanitize")
    monkeypatch.setattr(paths, "SANITIZER_REPORTS", tmp_path / "reports")
    monkeypatch.setenv("MSGBENCH_SANITIZER_REPORTS", str(tmp_path / "reports"))
    return tmp_path / "reports"


def test_each_profile_has_its_own_trees_and_release_is_the_default():
    release, san = paths.profile_trees("release"), paths.profile_trees("sanitize")
    assert release["CMAKE_BIN"] == paths.BUILD / "cmake" / "bin"
    assert release["GO_BIN"] == paths.BUILD / "go"
    assert san["CMAKE_BIN"] == paths.BUILD / "sanitize" / "cmake" / "bin"
    assert san["GO_BIN"] == paths.BUILD / "sanitize" / "go"
    assert san["BUILD_LOGS"] == paths.BUILD / "sanitize" / "logs"
    assert not set(release.values()) & set(san.values())
    with pytest.raises(ValueError, match="unknown build profile 'debug'"):
        paths.profile_trees("debug")


def test_selecting_a_profile_moves_the_templates_and_reaches_child_processes(monkeypatch):
    for name in (*paths.profile_trees("release"), "BUILD_PROFILE"):
        monkeypatch.setattr(paths, name, getattr(paths, name))
    monkeypatch.setenv(paths.BUILD_PROFILE_ENV, "release")
    paths.select_build_profile("sanitize")
    assert os.environ[paths.BUILD_PROFILE_ENV] == "sanitize"
    values = registry.template_vars()
    assert values["cmake_bin"] == str(paths.BUILD / "sanitize" / "cmake" / "bin")
    assert values["go_bin"] == str(paths.BUILD / "sanitize" / "go")
    assert values["cargo_bin"] == str(paths.CARGO_BIN)  # Rust has one build
    child = subprocess.run(
        [sys.executable, "-c", "from msgbench import paths; print(paths.GO_BIN)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert child.stdout.strip() == str(paths.BUILD / "sanitize" / "go")


def test_sanitize_flags_come_from_profiles_toml_and_release_ones_are_unchanged(sanitize_profile):
    s = profiles.sanitize()
    argv = build.cmake_configure_argv()
    assert argv[argv.index("-B") + 1] == str(paths.BUILD / "sanitize" / "cmake")
    assert "-DCMAKE_BUILD_TYPE=Sanitize" in argv
    assert f"-DCMAKE_C_FLAGS_SANITIZE={' '.join(s['cflags'])}" in argv
    assert f"-DCMAKE_CXX_FLAGS_SANITIZE={' '.join(s['cflags'])}" in argv  # declared once
    assert f"-DCMAKE_EXE_LINKER_FLAGS_SANITIZE={' '.join(s['ldflags'])}" in argv
    assert "-static" not in " ".join(argv).split()  # dynamically linked
    go = build.go_build_argv(paths.GO_BIN / "x", "workloads/x")
    assert go[:4] == ["go", "build", "-o", str(paths.BUILD / "sanitize" / "go" / "x")]
    assert "-race" in go and not any(a.startswith("-ldflags") for a in go)
    assert build.go_env()["CGO_ENABLED"] == "1"  # -race needs cgo
    # The recorded release flags do not include the sanitize table.
    assert "sanitize" not in build.flags() and build.flags()["c"] == profiles.load()["c"]


def test_release_go_build_is_static_and_stripped(monkeypatch):
    monkeypatch.setattr(paths, "BUILD_PROFILE", "release")
    argv = build.go_build_argv(Path("/tmp/x"), "workloads/x")
    assert "-race" not in argv and "-trimpath" in argv
    assert build.go_env()["CGO_ENABLED"] == "0"


def test_the_profile_covers_cmake_and_go_implementations_only(sanitize_profile):
    systems = {
        i.name: i.build["system"] for i in registry.select(None, None) if build.in_profile(i)
    }
    assert systems and set(systems.values()) <= {"cmake", "go"}
    assert "redis/redis-server" not in systems and "nativemsg/rust" not in systems
    assert {"nativemsg/baseline", "nativemsg/c-yajl", "redis/go"} <= set(systems)
    rust = registry.workload("nativemsg").impls["rust"]
    result = build.build_impl(rust, cmake_configured=True)
    assert result.skipped and "CMake and Go" in result.message
    with pytest.raises(cli.click.UsageError, match="not built by the sanitize profile"):
        cli.in_build_profile([rust], ("rust",))


def test_bench_refuses_a_sanitize_profile():
    env = {**os.environ, paths.BUILD_PROFILE_ENV: "sanitize"}
    p = subprocess.run(
        [str(paths.ROOT / "msgbench"), "bench", "nativemsg", "--plan"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert p.returncode == 2 and "release builds only" in p.stderr


def test_options_write_reports_to_files_and_never_turn_leaks_off(tmp_path):
    env = sanitize.environment(tmp_path)
    asan = dict(kv.split("=", 1) for kv in env["ASAN_OPTIONS"].split(":"))
    assert asan["log_path"] == f"{tmp_path}/asan" and asan["exitcode"] == "86"
    assert asan["detect_leaks"] == "1"
    ubsan = dict(kv.split("=", 1) for kv in env["UBSAN_OPTIONS"].split(":"))
    assert ubsan["log_path"] == f"{tmp_path}/ubsan" and ubsan["halt_on_error"] == "1"
    gorace = dict(kv.split("=", 1) for kv in env["GORACE"].split(" "))
    assert gorace["halt_on_error"] == "1" and gorace["log_path"] == f"{tmp_path}/race"
    supp = Path(env["LSAN_OPTIONS"].split("suppressions=")[1].split(":")[0])
    assert supp == paths.ROOT / "sanitize" / "lsan.supp"
    assert "log_path" not in "".join(sanitize.environment(None).values())
    # Every suppression is one named leak with a comment above it; none matches everything.
    previous = "#"
    for line in supp.read_text().splitlines():
        if line.startswith("leak:"):
            assert previous.startswith("#"), f"{line}: no comment says why"
            assert line.strip("leak:* ") and "*" not in line, f"{line}: a blanket entry"
        previous = line or previous


def test_not_applicable_tests_name_their_reason_and_language():
    for workload, tests in profiles.sanitize().get("not_applicable", {}).items():
        assert workload in registry.load()
        for test, entry in tests.items():
            why = entry if isinstance(entry, str) else entry["why"]
            assert len(why) > 20, f"{workload}/{test}: say why"
    assert sanitize.not_applicable("redis", "test_info_sections", "c")
    assert not sanitize.not_applicable("redis", "test_info_sections", "go")
    assert sanitize.not_applicable("redis", "test_client_that_never_reads_is_bounded", "go")
    assert not sanitize.not_applicable("redis", "test_no_such_test", "c")
    case = "test_hostile_capnp_message_is_refused[amplified-response]"
    assert sanitize.not_applicable("capnp", case, "go")
    assert not sanitize.not_applicable("capnp", case, "cpp")
    deep = "test_deep_nesting_never_crashes[arrays-1e6]"
    assert sanitize.not_applicable("nativemsg", deep, "c", "c-yajl")
    assert not sanitize.not_applicable("nativemsg", deep, "c", "c")


def test_a_report_no_test_claimed_fails_the_verdict(sanitize_profile):
    folder = sanitize.report_dir("toy", ["c"])
    folder.mkdir(parents=True)
    (folder / "asan.toy-c.123").write_text(
        "==1==ERROR: LeakSanitizer: detected memory leaks\n"
        "SUMMARY: AddressSanitizer: 10 byte(s) leaked in 1 allocation(s).\n"
    )
    verdicts = {
        ("toy", "c"): verify.Verdict("toy", "c", passed=3),
        ("toy", "go"): verify.Verdict("toy", "go", passed=3),
        ("toy", "cpp"): verify.Verdict("toy", "cpp", error="not built (run `x`)"),
    }
    cli.claim_sanitizer_reports(verdicts)
    assert not verdicts[("toy", "c")].ok
    assert "10 byte(s) leaked" in verdicts[("toy", "c")].error
    assert verdicts[("toy", "go")].ok
    assert "--profile sanitize" in verdicts[("toy", "cpp")].error


PROGRAM = r"""
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "clean";
    char *volatile p = malloc(8);
    if (!strcmp(mode, "overflow")) p[8] = 1;          /* heap-buffer-overflow */
    if (!strcmp(mode, "ubsan")) { volatile int x = 0x7fffffff; x += argc; } /* signed overflow */
    if (!strcmp(mode, "leak")) { p = malloc(40); p = 0; } /* the 8 bytes and the 40 leak */
    else free(p);
    return 0;
}
"""

SUITE = """
import subprocess
import pytest


@pytest.mark.parametrize("mode", ["clean", "overflow", "ubsan", "leak"])
def test_run(impl, mode):
    subprocess.run([*impl.argv(), mode], timeout=60)
"""


def test_a_sanitizer_report_fails_the_test_during_which_it_appeared(
    fake_lab, sanitize_profile, tmp_path
):
    """A program built with profiles.toml's [sanitize] flags, run by a suite under the plugin:
    the clean run passes, and each kind of report (ASan, UBSan, LeakSanitizer) fails its own
    test, naming the report's file, which the test itself never looks at."""
    if not shutil.which(profiles.load()["c"]["compiler"]):
        pytest.skip("no C compiler")
    s = profiles.sanitize()
    d = fake_lab.dir / "impls" / "c"
    d.mkdir()
    (d / "prog.c").write_text(PROGRAM)
    compiler = profiles.load()["c"]["compiler"]
    subprocess.run(
        [compiler, *s["cflags"], *s["ldflags"], "-o", str(d / "prog"), str(d / "prog.c")],
        check=True,
    )
    (d / "impl.toml").write_text(
        textwrap.dedent("""
        id = "c"
        language = "c"
        [build]
        system = "none"
        [run]
        argv = ["{impl_dir}/prog"]
        """)
    )
    suite = fake_lab.conformance_dir
    suite.mkdir()
    (suite / "conftest.py").write_text('pytest_plugins = ["msgbench.conformance_plugin"]\n')
    (suite / "test_toy.py").write_text(SUITE)
    registry.load.cache_clear()
    w = registry.workload(fake_lab.name)
    v = verify.run(w, [w.impls["c"]], tmp_path / "logs", ["-p", "msgbench.sanitize_plugin"])["c"]
    assert v.tests == {
        "test_run[clean]": "pass",
        "test_run[overflow]": "FAIL",
        "test_run[ubsan]": "FAIL",
        "test_run[leak]": "FAIL",
    }, (tmp_path / "logs" / "verify-toy-c.log").read_text()
    messages = {f["test"]: f["message"] for f in v.failures}
    assert "heap-buffer-overflow" in messages["test_run[overflow]"]
    assert "signed integer overflow" in messages["test_run[ubsan]"]
    assert "48 byte(s) leaked" in messages["test_run[leak]"]
    folder = sanitize.report_dir("toy", ["c"])
    files = sanitize.reports(folder)
    assert sorted(f.name.split(".")[0] for f in files) == ["asan", "asan", "ubsan"]
    # The failure names the report's file (verify keeps a message's first 300 characters).
    assert f"(report: {paths.rel(folder)}" in messages["test_run[leak]"], messages
