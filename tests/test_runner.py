"""Measurement mechanics with a fake driver: warm-up, interleaving, failures, placement."""

from __future__ import annotations

import json

import pytest

from msgbench import build, hosts, machine, paths, registry, results, runner, trials, verify


def test_warmup_round_is_discarded_and_every_impl_measured(fake_lab, tmp_path, monkeypatch):
    counter = tmp_path / "count"
    monkeypatch.setenv("FAKE_DRIVER_COUNTER", str(counter))
    impls = [fake_lab.impls["floor"], fake_lab.impls["fast"]]
    m = runner.measure(
        [(fake_lab, [fake_lab.scenarios["ping"]], impls)],
        "smoke",
        runner.Placement("none", (), ()),
        tmp_path / "logs",
        seed=1,
    )
    reps = fake_lab.repetitions("smoke")
    # the floor's A/A twin is a third participant of every round
    assert len(counter.read_text().splitlines()) == 3 * (reps + 1)  # warm-up ran too
    for impl_id in ("floor", "fast", "floor-aa"):
        docs = m.docs[("toy", "ping", impl_id)]
        assert len(docs) == reps  # ... but was not kept
        assert sorted(d["_round"] for d in docs) == list(range(1, reps + 1))
    assert m.docs[("toy", "ping", "fast")][0]["latency_us"]["p50"] == 12.0


def test_trials_interleave_in_a_shuffled_order(fake_lab, tmp_path, monkeypatch):
    counter = tmp_path / "count"
    monkeypatch.setenv("FAKE_DRIVER_COUNTER", str(counter))
    impls = [fake_lab.impls["floor"], fake_lab.impls["fast"]]
    runner.measure(
        [(fake_lab, [fake_lab.scenarios["ping"]], impls)],
        "smoke",
        runner.Placement("none", (), ()),
        tmp_path / "logs",
        seed=3,
    )
    order = [line.split()[-1] for line in counter.read_text().splitlines()]
    rounds = [order[i : i + 3] for i in range(0, len(order), 3)]
    # every round runs every impl once, and the floor ("10") a second time as its A/A twin
    assert all(sorted(r) == ["10", "10", "12"] for r in rounds), "each round runs every impl"
    assert len({tuple(r) for r in rounds}) > 1, "the order changes between rounds"


def test_failing_impl_is_recorded_and_the_others_go_on(fake_lab, tmp_path):
    impls = list(fake_lab.impls.values())
    m = runner.measure(
        [(fake_lab, [fake_lab.scenarios["ping"]], impls)],
        "smoke",
        runner.Placement("none", (), ()),
        tmp_path / "logs",
    )
    assert "wrong reply" in m.failures[("toy", "ping", "broken")]
    assert len(m.docs[("toy", "ping", "floor")]) == fake_lab.repetitions("smoke")
    rows = results.result_rows(
        fake_lab, fake_lab.scenarios["ping"], fake_lab.impls["broken"], m, None
    )
    assert [(r["status"], r["n"]) for r in rows] == [("fail", 0)]
    ok = results.result_rows(fake_lab, fake_lab.scenarios["ping"], fake_lab.impls["fast"], m, None)
    p50 = next(r for r in ok if r["metric"] == "p50")
    assert p50["median"] == 12.0 and p50["n"] == fake_lab.repetitions("smoke")
    assert p50["ci95"][0] <= 12.0 <= p50["ci95"][1]


def test_placement_is_passed_to_the_driver(fake_lab, tmp_path):
    where = runner.Placement("split", (0,), (1,))
    s, impl = fake_lab.scenarios["ping"], fake_lab.impls["fast"]
    ctx = trials.TrialContext(fake_lab, s, impl, "smoke", where, tmp_path, 5)
    argv = runner.trial_kind(fake_lab, s).call(ctx).argv()
    assert argv[argv.index("--driver-cpus") + 1] == "0"
    assert argv[argv.index("--impl-cpus") + 1] == "1"
    assert argv[argv.index("--impl-stderr") + 1] == str(tmp_path / "toy-fast.stderr.log")
    assert argv[argv.index("--timeout-s") + 1] == "5"
    assert argv[argv.index("--iterations") + 1] == "7"
    assert argv[argv.index("--") + 1 :] == fake_lab.impls["fast"].argv()


def test_split_placement_uses_two_cpus_and_refuses_one(monkeypatch):
    monkeypatch.setattr(machine, "usable_cpus", lambda: [0, 1])
    p = runner.placement("split")
    assert p.driver_cpus != p.impl_cpus
    monkeypatch.setattr(machine, "usable_cpus", lambda: [0])
    with pytest.raises(runner.HarnessError, match="--placement same"):
        runner.placement("split")
    assert runner.placement("same").driver_cpus == runner.placement("same").impl_cpus


def test_interrupt_keeps_what_was_measured(fake_lab, tmp_path, monkeypatch):
    real = runner.run_trial
    calls = {"n": 0}

    def interrupting(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 7:  # three warm-ups (floor, fast, the floor's A/A twin), three kept
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "run_trial", interrupting)
    impls = [fake_lab.impls["floor"], fake_lab.impls["fast"]]
    m = runner.measure(
        [(fake_lab, [fake_lab.scenarios["ping"]], impls)],
        "smoke",
        runner.Placement("none", (), ()),
        tmp_path / "logs",
    )
    assert m.interrupted
    assert sum(len(d) for d in m.docs.values()) == 3  # round 1 done for all, warm-up not kept


def test_scenario_whose_driver_needs_a_missing_program_is_skipped_with_reason(fake_lab, tmp_path):
    impls = [fake_lab.impls["floor"], fake_lab.impls["fast"]]
    scenarios = [fake_lab.scenarios["in-browser"], fake_lab.scenarios["ping"]]
    m = runner.measure(
        [(fake_lab, scenarios, impls)], "smoke", runner.Placement("none", (), ()), tmp_path / "logs"
    )
    assert m.skipped[("toy", "in-browser", "fast")] == (
        "no-such-browser-xyz not installed (run `make setup`)"
    )
    assert ("toy", "in-browser", "fast") not in m.docs
    assert len(m.docs[("toy", "ping", "fast")]) == fake_lab.repetitions("smoke")
    rows = results.result_rows(
        fake_lab, fake_lab.scenarios["in-browser"], fake_lab.impls["fast"], m, None
    )
    assert [(r["status"], r["reason"]) for r in rows] == [
        ("skipped", "no-such-browser-xyz not installed (run `make setup`)")
    ]


def _with_scenario(fake_lab, extra_toml: str, impl_params: str = ""):
    """The toy workload with one more scenario (and the `fast` impl with extra impl.toml)."""
    manifest = fake_lab.dir / "workload.toml"
    manifest.write_text(manifest.read_text() + extra_toml)
    if impl_params:
        toml = fake_lab.dir / "impls" / "fast" / "impl.toml"
        toml.write_text(toml.read_text() + impl_params)
    registry.load.cache_clear()
    return registry.workload("toy")


HOSTS_SCENARIO = """
[[scenarios]]
name = "on-hosts"
hosts = {{ topology = "{topology}" }}
args = ["--iterations", "{{iterations}}"]
primary = "p50"
metrics = ["p50"]
params.smoke = {{ iterations = 5 }}
"""


def test_a_scenario_whose_hosts_cannot_be_made_is_skipped_with_the_reason(
    fake_lab, tmp_path, monkeypatch
):
    w = _with_scenario(fake_lab, HOSTS_SCENARIO.format(topology="netns"))
    monkeypatch.setattr(hosts, "_netns_reason", lambda: "network namespaces need root")
    m = runner.measure(
        [(w, [w.scenarios["on-hosts"]], [w.impls["floor"]])],
        "smoke",
        runner.Placement("none", (), ()),
        tmp_path / "logs",
    )
    assert m.skipped[("toy", "on-hosts", "floor")] == (
        "needs netns hosts: network namespaces need root"
    )
    assert not m.docs and not m.failures


def test_every_trial_records_the_hosts_it_ran_on(fake_lab, tmp_path):
    w = _with_scenario(fake_lab, HOSTS_SCENARIO.format(topology="loopback"))
    m = runner.measure(
        [(w, [w.scenarios["on-hosts"]], [w.impls["floor"], w.impls["fast"]])],
        "smoke",
        runner.Placement("none", (), ()),
        tmp_path / "logs",
    )
    docs = m.docs[("toy", "on-hosts", "floor")] + m.docs[("toy", "on-hosts", "fast")]
    described = {json.dumps(d["hosts"], sort_keys=True) for d in docs}
    assert len(described) == 1  # one set of hosts for the whole scenario
    (only,) = [d["hosts"] for d in docs[:1]]
    assert only["kind"] == "loopback" and set(only["hosts"]) == {"driver", "impl"}


def test_an_implementation_may_run_a_scenario_with_its_own_parameters(fake_lab, tmp_path):
    w = _with_scenario(fake_lab, "", "\n[params.ping]\nsmoke = { iterations = 3 }\n")
    m = runner.measure(
        [(w, [w.scenarios["ping"]], [w.impls["floor"], w.impls["fast"]])],
        "smoke",
        runner.Placement("none", (), ()),
        tmp_path / "logs",
    )
    assert m.docs[("toy", "ping", "fast")][0]["args"][:2] == ["--iterations", "3"]
    assert m.docs[("toy", "ping", "floor")][0]["args"][:2] == ["--iterations", "7"]


ABSENT = """
id = "c"
language = "c"
summary = "no official library in C"
absent = "the protocol has no official C library"
[build]
system = "none"
[run]
argv = []
"""


def test_an_absent_implementation_is_skipped_everywhere_with_its_reason(
    fake_lab, tmp_path, monkeypatch
):
    """Build skips it, verify records it as not applicable (not a failure, not "not built"),
    the runner skips it in every scenario with the reason, and the run document says so."""
    (fake_lab.dir / "impls" / "c").mkdir()
    (fake_lab.dir / "impls" / "c" / "impl.toml").write_text(ABSENT)
    registry.load.cache_clear()
    w = registry.workload("toy")
    c, floor = w.impls["c"], w.impls["floor"]
    why = "absent: the protocol has no official C library"

    monkeypatch.setattr(paths, "BUILD_LOGS", tmp_path / "build-logs")
    built = build.build_impl(c, cmake_configured=False)
    assert (built.ok, built.skipped, built.message) == (True, True, why)
    assert not (tmp_path / "build-logs").exists()  # nothing ran

    verdict = verify.run(w, [c], tmp_path / "verify")["c"]
    assert verdict.absent == c.absent and verdict.ok  # may go on to the runner ...
    assert (verdict.error, verdict.passed, verdict.failed) == ("", 0, 0)  # ... but ran nothing
    assert verdict.as_json()["absent"] == c.absent

    plan = [(w, [w.scenarios["ping"], w.scenarios["in-browser"]], [floor, c])]
    assert {i.id for _, _, i in runner.planned_trials(plan, "smoke")} == {"floor", "floor-aa"}
    chosen, skipped = runner.runnable(w, w.scenarios["ping"], [floor, c])
    assert chosen == [floor] and skipped == {"c": why}
    m = runner.measure(plan, "smoke", runner.Placement("none", (), ()), tmp_path / "logs")
    # the absent reason wins over any other reason to skip (here: the driver's missing program)
    assert m.skipped[("toy", "ping", "c")] == m.skipped[("toy", "in-browser", "c")] == why
    rows = results.result_rows(w, w.scenarios["ping"], c, m, verdict)
    assert [(r["status"], r["reason"]) for r in rows] == [("skipped", why)]
    assert results.impl_entry(c)["absent"] == c.absent
    assert "absent" not in results.impl_entry(floor)


def test_a_scenario_records_its_peer(fake_lab):
    w = _with_scenario(
        fake_lab,
        '\n[[scenarios]]\nname = "pair"\nargs = []\nprimary = "p50"\nmetrics = ["p50"]\n'
        'peer = "fast"\nparams.smoke = {}\n',
    )
    entry = results.workload_entry(w, [w.scenarios["pair"], w.scenarios["ping"]])
    assert entry["scenarios"][0]["peer"] == "fast" and "peer" not in entry["scenarios"][1]
