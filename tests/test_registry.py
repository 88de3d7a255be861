"""The manifests: loading, validation, argv templates."""

from __future__ import annotations

import pytest

from msgbench import paths, profiles, registry


def test_every_real_manifest_loads_and_expands():
    registry.load.cache_clear()
    w = registry.workload("nativemsg")
    assert {"pingpong", "pingpong-spawn", "echo-1k", "echo-64k", "echo-512k"} <= set(w.scenarios)
    assert w.baseline in w.impls, "the floor must be an implementation of the workload"
    for impl in w.impls.values():
        argv = impl.argv()
        assert all("{" not in a for a in argv), f"{impl.name}: unexpanded template in {argv}"
        assert w.template_values["origin"] in argv, f"{impl.name} must get the origin as argv"
        assert impl.sources(), f"{impl.name}: [metrics] sources match no file"
    for s in w.scenarios.values():
        for profile in ("smoke", "quick", "full"):
            assert all("{" not in a for a in s.argv(profile))


def test_python_placeholder_expands_to_interpreter_and_flags(fake_lab):
    argv = registry.expand(["{python}", "main.py"], {})
    assert argv[0] == str(paths.VENV_PYTHON)
    assert argv[1:-1] == profiles.load()["python"]["flags"]
    assert argv[-1] == "main.py"


def test_adding_an_implementation_is_adding_a_folder(fake_lab):
    new = fake_lab.dir / "impls" / "extra"
    new.mkdir()
    (new / "impl.toml").write_text(
        'id = "extra"\nlanguage = "go"\n[build]\nsystem = "none"\n[run]\nargv = ["/bin/true"]\n'
    )
    registry.load.cache_clear()
    assert "extra" in registry.workload("toy").impls


def test_unknown_workload_names_the_valid_ones(fake_lab):
    with pytest.raises(registry.ManifestError, match="valid: toy"):
        registry.workload("nope")


def test_unknown_impl_names_the_valid_ones(fake_lab):
    with pytest.raises(registry.ManifestError, match="valid: broken, fast, floor"):
        registry.select("toy", ["nope"])


def test_manifest_with_wrong_id_is_refused(fake_lab):
    (fake_lab.dir / "impls" / "fast" / "impl.toml").write_text(
        'id = "other"\nlanguage = "c"\n[build]\nsystem = "none"\n[run]\nargv = ["x"]\n'
    )
    registry.load.cache_clear()
    with pytest.raises(registry.ManifestError, match="not the folder name"):
        registry.load()


def test_manifest_with_unknown_language_is_refused(fake_lab):
    (fake_lab.dir / "impls" / "fast" / "impl.toml").write_text(
        'id = "fast"\nlanguage = "cobol"\n[build]\nsystem = "none"\n[run]\nargv = ["x"]\n'
    )
    registry.load.cache_clear()
    with pytest.raises(registry.ManifestError, match="language must be one of"):
        registry.load()
