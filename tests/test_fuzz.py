"""msgbench fuzz: manifests, corpora, the fuzzers' output as read, the committed record."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from msgbench import paths, registry
from msgbench.fuzz import campaign, corpus
from msgbench.fuzz.engines import ENGINES

FIXTURES = Path(__file__).parent / "fixtures" / "fuzz"


def test_every_implementation_with_a_program_has_fuzz_targets():
    """Every implementation the lab wrote (variants added later too) declares [[fuzz]]; only
    absent rows and third-party references are exempt, and say why."""
    missing = [
        impl.name
        for w in registry.load().values()
        if w.fuzz_targets
        for impl in w.impls.values()
        if not impl.fuzz and not impl.absent and not impl.fuzz_exempt
    ]
    assert not missing, f"no [[fuzz]] table in: {', '.join(missing)}"


def test_targets_cover_every_declared_entry():
    chosen = campaign.targets(None, None, None)
    declared = sum(len(i.fuzz) for w in registry.load().values() for i in w.impls.values())
    assert len(chosen) == declared and declared > 0
    for t in chosen:
        assert t.corpus.is_dir(), f"{t.name}: no shared corpus at {paths.rel(t.corpus)}"
        assert t.seed_files(), t.name


def test_manifest_rejects_unknown_target_and_engine():
    w = registry.workload("redis")
    impl = w.impls["c"]
    saved = impl.fuzz
    try:
        impl.fuzz = [{"target": "nope", "engine": "libfuzzer", "entry": "x"}]
        with pytest.raises(registry.ManifestError, match="not one of the workload's"):
            registry._check_fuzz(w)
        impl.fuzz = [{"target": "resp", "engine": "afl", "entry": "x"}]
        with pytest.raises(registry.ManifestError, match="engine 'afl'"):
            registry._check_fuzz(w)
        impl.fuzz = [{"target": "resp", "engine": "go"}]
        with pytest.raises(registry.ManifestError, match="'entry'"):
            registry._check_fuzz(w)
    finally:
        impl.fuzz = saved


@pytest.mark.parametrize("workload", ["nativemsg", "redis", "comm", "echonet", "capnp"])
def test_checked_in_corpus_is_what_its_generator_writes(workload):
    script = paths.WORKLOADS / workload / "fuzz" / "make_corpus.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "up to date" in done.stdout


def test_corpus_write_truncates_removes_stale_and_checks(tmp_path):
    folder = tmp_path / "c"
    assert corpus.write(folder, {"a b": b"12345", "z": b"x"}, max_len=3) == 2
    assert (folder / "a-b").read_bytes() == b"123"
    corpus.write(folder, {"z": b"x"}, max_len=3)
    assert [p.name for p in folder.iterdir()] == ["z"]
    corpus.write(folder, {"z": b"x"}, max_len=3, check=True)
    with pytest.raises(corpus.CorpusStale, match="z"):
        corpus.write(folder, {"z": b"y"}, max_len=3, check=True)


def test_libfuzzer_campaign_output_is_read():
    o = ENGINES["libfuzzer"].parse((FIXTURES / "libfuzzer-campaign.log").read_text(), 16.0)
    assert o.ok and not o.crashes
    assert o.execs == 39121 and o.execs_per_s == 2445
    assert o.coverage == {"cov": 1392, "ft": 4469, "counters": 3624}
    assert o.corpus_size == 348


def test_libfuzzer_crash_is_read():
    o = ENGINES["libfuzzer"].parse((FIXTURES / "libfuzzer-crash.log").read_text(), 1.0)
    assert not o.ok
    assert o.crashes == ["./crash-crash-7037807198c22a7d2b0807371d763779a84fdfcf"]
    assert "runtime error: index 3 out of bounds" in o.failure


def test_summary_adds_campaigns_up():
    def line(seconds, execs, cov, status="ok", host="a"):
        return {"workload": "w", "impl": "c", "target": "t", "engine": "libfuzzer",
                "language": "c", "seconds": seconds, "execs": execs, "coverage": {"cov": cov},
                "crashes": [], "status": status, "machine": {"hostname": host}}  # fmt: skip

    [row] = campaign.summary([line(60, 100, 5), line(30, 50, 9, "crashed", "b")])
    assert row["campaigns"] == 2 and row["seconds"] == 90 and row["execs"] == 150
    assert row["coverage"] == {"cov": 9} and row["crashes"] == 1 and row["machines"] == 2


def test_go_campaign_output_is_read():
    o = ENGINES["go"].parse((FIXTURES / "go-campaign.log").read_text(), 8.3)
    assert o.ok and not o.crashes
    assert o.execs == 132507
    assert o.coverage == {"new interesting": 1, "corpus": 459}
    assert 16000 < o.execs_per_s < 17000  # executions over Go's own elapsed seconds


def test_go_deadline_race_is_not_a_finding_but_a_failing_input_is():
    go = ENGINES["go"]
    race = "fuzz: elapsed: 60s, execs: 5 (1/sec), new interesting: 0 (total: 3)\n"
    race += "--- FAIL: FuzzHost (60.01s)\n    context deadline exceeded\nFAIL\n"
    assert go.parse(race, 60).ok
    found = race.replace("context deadline exceeded", "Failing input written to "
                         "testdata/fuzz/FuzzHost/abc123")  # fmt: skip
    o = go.parse(found, 60)
    assert not o.ok and o.crashes == ["testdata/fuzz/FuzzHost/abc123"]
