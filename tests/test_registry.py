"""The manifests: loading, validation, argv templates."""

from __future__ import annotations

import os

import pytest

from msgbench import paths, profiles, registry, runner


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


ABSENT_TOML = """
id = "c"
language = "c"
summary = "none: no official library"
absent = "no official C library"
[build]
system = "none"
[run]
argv = []
"""


def _impl_manifest(fake_lab, impl_id: str, text: str) -> None:
    d = fake_lab.dir / "impls" / impl_id
    d.mkdir(exist_ok=True)
    (d / "impl.toml").write_text(text)
    registry.load.cache_clear()


def test_an_absent_implementation_is_kept_with_its_reason_and_no_program(fake_lab):
    _impl_manifest(fake_lab, "c", ABSENT_TOML)
    impl = registry.workload("toy").impls["c"]
    assert impl.absent == "no official C library"
    assert impl.argv() == [] and impl.client_argv() == [] and impl.sources() == []
    assert not impl.built  # never "built", and asking does not look for a program
    listed = impl.as_json()
    assert listed["absent"] == "no official C library" and listed["run"] == []
    assert registry.workload("toy").impls["fast"].absent == ""


@pytest.mark.parametrize(
    "text, message",
    [
        (ABSENT_TOML.replace("argv = []", 'argv = ["x"]'), "has no program"),
        (ABSENT_TOML.replace('"none"', '"cmake"'), "has no program"),
        (ABSENT_TOML.replace('"no official C library"', '""'), "non-empty reason"),
        (ABSENT_TOML.replace('absent = "no official C library"\n', ""), "argv is empty"),
    ],
)
def test_an_absent_implementation_must_have_no_program_and_a_reason(fake_lab, text, message):
    _impl_manifest(fake_lab, "c", text)
    with pytest.raises(registry.ManifestError, match=message):
        registry.load()


def test_the_floor_cannot_be_absent(fake_lab):
    _impl_manifest(fake_lab, "floor", ABSENT_TOML.replace('id = "c"', 'id = "floor"'))
    with pytest.raises(registry.ManifestError, match="baseline is 'floor', which is absent"):
        registry.load()


PEER_SCENARIOS = """
[[scenarios]]
name = "pair-floor"
args = []
primary = "p50"
metrics = ["p50"]
peer = "floor"
params.smoke = {}
[[scenarios]]
name = "pair-fast"
args = []
primary = "p50"
metrics = ["p50", "p99"]
peer = "fast"
params.smoke = {}
"""


def _with_tables(fake_lab, tables: str) -> None:
    manifest = fake_lab.dir / "workload.toml"
    manifest.write_text(manifest.read_text() + PEER_SCENARIOS + tables)
    registry.load.cache_clear()


RATIO = """
[[ratio_charts]]
title = "fast against floor"
metric = "{metric}"
numerator = "fast"
denominator = "{den}"
scenarios = {scenarios}
"""
MATRIX = """
[[matrices]]
title = "pairs"
metric = "{metric}"
scenarios = {scenarios}
"""


def test_ratio_charts_and_matrices_load(fake_lab):
    _with_tables(
        fake_lab,
        RATIO.format(metric="p50", den="floor", scenarios='["ping", "pair-fast"]')
        + MATRIX.format(metric="p50", scenarios='["pair-floor", "pair-fast"]'),
    )
    w = registry.workload("toy")
    assert w.ratio_charts[0]["scenarios"] == ["ping", "pair-fast"]
    assert w.matrices[0]["scenarios"] == ["pair-floor", "pair-fast"]
    assert w.scenarios["pair-fast"].peer == "fast"


@pytest.mark.parametrize(
    "tables, message",
    [
        (RATIO.format(metric="p50", den="floor", scenarios='["nope"]'), "unknown scenario 'nope'"),
        (
            RATIO.format(metric="p99", den="floor", scenarios='["pair-fast", "pair-floor"]'),
            "scenario 'pair-floor' does not measure metric 'p99'",
        ),
        (RATIO.format(metric="p50", den="fast", scenarios='["ping"]'), "both 'fast'"),
        (RATIO.format(metric="p50", den="floor", scenarios="[]"), "no scenarios"),
        (MATRIX.format(metric="p50", scenarios='["nope"]'), "unknown scenario 'nope'"),
        (MATRIX.format(metric="p99", scenarios='["pair-floor"]'), "does not measure metric 'p99'"),
        (MATRIX.format(metric="p50", scenarios='["ping", "pair-fast"]'), "'ping' has no peer"),
        (MATRIX.format(metric="p50", scenarios='["pair-fast", "pair-fast"]'), "listed twice"),
    ],
)
def test_ratio_charts_and_matrices_are_validated(fake_lab, tables, message):
    _with_tables(fake_lab, tables)
    with pytest.raises(registry.ManifestError, match=message):
        registry.load()


def test_a_ratio_charts_term_cannot_be_absent(fake_lab):
    _impl_manifest(fake_lab, "c", ABSENT_TOML)
    _with_tables(fake_lab, RATIO.format(metric="p50", den="c", scenarios='["ping"]'))
    with pytest.raises(registry.ManifestError, match="denominator is 'c', which is absent"):
        registry.load()


def test_capnp_declares_its_c_row_absent_and_the_seeds_chart():
    registry.load.cache_clear()
    w = registry.workload("capnp")
    assert "no official C library" in w.impls["c"].absent
    (chart,) = w.ratio_charts
    assert (chart["numerator"], chart["denominator"], chart["metric"]) == ("rust", "cpp", "time_it")
    assert chart["scenarios"] == [n for n in w.scenarios if not w.scenarios[n].peer]
    (matrix,) = w.matrices
    assert [w.scenarios[n].peer for n in matrix["scenarios"]] == ["cpp", "rust", "go", "python"]


SUBSET_TOML = """
id = "seedsys"
language = "rust"
summary = "a seed's own system"
[build]
system = "none"
[run]
argv = ["x"]
[conformance]
only_markers = ["setget"]
only_why = "SET and GET only"
[measured_in]
scenarios = ["ping"]
why = "the seed's scenario"
"""


def test_a_seeds_own_system_declares_its_subset_and_where_it_is_measured(fake_lab):
    _impl_manifest(fake_lab, "seedsys", SUBSET_TOML)
    impl = registry.workload("toy").impls["seedsys"]
    assert impl.only_markers == ["setget"] and impl.only_why == "SET and GET only"
    assert impl.measured_in == ["ping"] and impl.measured_in_why == "the seed's scenario"
    w = registry.workload("toy")
    assert runner.runnable(w, w.scenarios["ping"], [impl])[0] == [impl]
    chosen, skipped = runner.runnable(w, w.scenarios["in-browser"], [impl])
    assert not chosen and skipped["seedsys"] == "measured only in ping: the seed's scenario"


@pytest.mark.parametrize(
    "text, message",
    [
        (SUBSET_TOML.replace('only_why = "SET and GET only"\n', ""), "only_markers needs only_why"),
        (SUBSET_TOML.replace('why = "the seed\'s scenario"\n', ""), "needs scenarios and why"),
        (SUBSET_TOML.replace('scenarios = ["ping"]', 'scenarios = ["nope"]'), "no scenario nope"),
    ],
)
def test_a_subset_always_says_why_and_names_real_scenarios(fake_lab, text, message):
    _impl_manifest(fake_lab, "seedsys", text)
    with pytest.raises(registry.ManifestError, match=message):
        registry.load()


def _seed_build(fake_lab, table: str) -> None:
    manifest = fake_lab.dir / "workload.toml"
    manifest.write_text(manifest.read_text() + "\n[seed_build]\n" + table)
    registry.load.cache_clear()


def test_the_seeds_build_is_a_variant_measured_only_in_the_seeds_scenarios(fake_lab):
    _seed_build(fake_lab, 'impls = ["fast"]\nscenarios = ["ping"]\nwhy = "no options"\n')
    w = registry.workload("toy")
    variant = w.impls["fast-seedbuild"]
    assert variant.seedbuild_of == "fast" and variant.measured_in == ["ping"]
    assert variant.language == "c" and variant.dir == w.impls["fast"].dir
    # hidden from "every implementation"; there when named or planned
    assert "fast-seedbuild" not in {i.id for i in registry.select("toy", None)}
    assert [i.id for i in registry.select("toy", ["fast-seedbuild"])] == ["fast-seedbuild"]
    assert "fast-seedbuild" in {i.id for i in registry.select("toy", None, with_seedbuilds=True)}
    values = registry.template_vars(w, seedbuild=True)
    assert values["cmake_bin"] == str(paths.BUILD / "seedbuild" / "cmake" / "bin")
    assert values["cargo_bin"].endswith("seedbuild/cargo/x86_64-unknown-linux-gnu/debug")
    assert values["go_bin"] == str(paths.BUILD / "seedbuild" / "go")


@pytest.mark.parametrize(
    "table, message",
    [
        ('impls = ["fast"]\nscenarios = ["ping"]\n', "needs impls, scenarios and why"),
        ('impls = ["nope"]\nscenarios = ["ping"]\nwhy = "w"\n', "'nope' is not a compiled"),
        ('impls = ["fast"]\nscenarios = ["nope"]\nwhy = "w"\n', "has no scenario nope"),
    ],
)
def test_a_seeds_build_names_compiled_implementations_and_real_scenarios(fake_lab, table, message):
    _seed_build(fake_lab, table)
    with pytest.raises(registry.ManifestError, match=message):
        registry.load()


def test_the_seeds_build_passes_no_optimisation_option():
    from msgbench import build as builder

    assert "--release" not in builder.cargo_build_argv("pkg", seedbuild=True)
    assert "--release" in builder.cargo_build_argv("pkg")
    env = builder.cargo_env(seedbuild=True)
    assert env["CARGO_TARGET_DIR"] == str(paths.SEEDBUILD_CARGO_TARGET)
    assert not any(k.startswith("CARGO_PROFILE_RELEASE_") for k in env if k not in os.environ)
    assert builder.go_build_argv(paths.BUILD / "x", "cmd/x", seedbuild=True) == [
        "go", "build", "-o", str(paths.BUILD / "x"), "./cmd/x",
    ]  # fmt: skip
    argv = builder.cmake_configure_argv(seedbuild=True)
    assert "-DCMAKE_BUILD_TYPE=Seedbuild" in argv and "-DCMAKE_C_FLAGS_SEEDBUILD=" in argv
    assert str(paths.BUILD / "seedbuild" / "cmake") in argv
    assert "-DCMAKE_EXE_LINKER_FLAGS_SEEDBUILD=-static" in argv
