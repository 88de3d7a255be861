"""Building: a failing build is reported with its log, and the flags come from profiles.toml."""

from __future__ import annotations

from msgbench import build, paths, profiles, registry


def test_failing_build_reports_its_log_and_reason(fake_lab, tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "BUILD_LOGS", tmp_path / "logs")
    impl = fake_lab.impls["fast"]
    impl.build = {"system": "go", "target": "workloads/no/such/package"}
    result = build.build_impl(impl, cmake_configured=True)
    assert not result.ok
    assert result.message.startswith("exit status")
    assert result.log == tmp_path / "logs" / "toy-fast.log"
    assert "no/such/package" in result.log.read_text()


def test_cmake_build_is_refused_when_configure_failed(fake_lab, tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "BUILD_LOGS", tmp_path / "logs")
    impl = fake_lab.impls["fast"]
    impl.build = {"system": "cmake", "target": "x"}
    result = build.build_impl(impl, cmake_configured=False)
    assert (result.ok, result.message) == (False, "cmake configure failed")


def test_release_flags_come_from_profiles_toml():
    p = profiles.load()
    argv = build.cmake_configure_argv()
    assert f"-DCMAKE_C_FLAGS_RELEASE={' '.join(p['c']['cflags'])}" in argv
    assert build.cargo_env()["RUSTFLAGS"] == " ".join(p["rust"]["rustflags"])
    assert build.go_env()["GOAMD64"] == p["go"]["goamd64"]
    assert "--target" in build.cargo_build_argv("x")
    registry.load.cache_clear()
