"""Planning a run: estimates from the durations a workload keeps, and the ETA while it runs."""

from __future__ import annotations

import json

import pytest

from msgbench import budget, pipeline, runner


def test_estimate_uses_recorded_durations_then_siblings_then_a_default(fake_lab):
    s = fake_lab.scenarios["ping"]
    (fake_lab.dir / budget.DURATIONS_FILE).write_text(
        json.dumps({"trials": {"smoke": {"ping": {"floor": 2.0, "fast": 4.0}}}, "verify": {}})
    )
    known = budget.load(fake_lab)
    assert budget.trial_estimate(fake_lab, s, fake_lab.impls["fast"], "smoke", known) == 4.0
    # an implementation nobody timed costs what its siblings cost (their median)
    assert budget.trial_estimate(fake_lab, s, fake_lab.impls["broken"], "smoke", known) == 3.0
    # a profile nobody timed is scaled from one that was, by its parameters' work (7 -> 70)
    s.params["full"] = {"iterations": 70}
    assert budget.trial_estimate(fake_lab, s, fake_lab.impls["fast"], "full", known) == 40.0
    # ... and a profile without parameters to compare falls back to the default
    del s.params["full"]
    assert (
        budget.trial_estimate(fake_lab, s, fake_lab.impls["fast"], "full", known)
        == budget.DEFAULT_TRIAL_S
    )


def test_plan_total_counts_warmups_and_conformance(fake_lab):
    (fake_lab.dir / budget.DURATIONS_FILE).write_text(
        json.dumps(
            {
                "trials": {"smoke": {"ping": {"floor": 1.0, "fast": 3.0}}},
                "verify": {"floor": 10.0, "fast": 20.0},
            }
        )
    )
    impls = [fake_lab.impls["floor"], fake_lab.impls["fast"]]
    plan = [(fake_lab, [fake_lab.scenarios["ping"]], impls)]
    trials = runner.planned_trials(plan, "smoke")
    rounds = fake_lab.repetitions("smoke") + 1  # warm-up round included
    # floor, fast, and the floor's A/A twin, which is never verified on its own ...
    assert sorted({i.id for _, _, i in trials}) == ["fast", "floor", "floor-aa"]
    assert len(trials) == 3 * rounds
    est = budget.estimate(plan, "smoke", trials)
    assert est.verify_s == 30.0
    # ... and costs what its subject costs (1 s), not the scenario's median (3 s)
    assert est.measure_s == rounds * (1.0 + 3.0 + 1.0)
    assert est.per_workload["toy"] == est.total_s


def test_eta_rescales_the_rest_by_observed_speed_and_drops_cancelled_rounds():
    eta = budget.Eta([2.0] * 10)
    assert eta.remaining_s == 20.0
    eta.trial_done(2.0, 4.0)  # this machine is twice as slow as the recorded one
    assert eta.speed == pytest.approx(2.0)
    assert eta.remaining_s == pytest.approx(9 * 2.0 * 2.0)
    eta.trial_done(2.0, 4.0, dropped=3)  # a failure cancels three later rounds
    assert eta.remaining_s == pytest.approx(5 * 2.0 * 2.0)


def test_durations_round_trip_through_a_run_document(fake_lab):
    doc = {
        "run": {"id": "r1", "profile": "smoke"},
        "workloads": [{"name": "toy"}],
        "durations": {
            "trials": {"toy": {"ping": {"fast": [1.0, 3.0, 2.0]}}},
            "verify": {"toy": {"fast": 7.5}},
        },
    }
    (path,) = pipeline.record_durations(doc)
    kept = json.loads(path.read_text())
    assert kept["trials"]["smoke"]["ping"]["fast"] == 2.0  # the median
    assert kept["verify"]["fast"] == 7.5
    with pytest.raises(pipeline.PlanError, match="no recorded durations"):
        pipeline.record_durations({"run": {"id": "old"}, "workloads": []})


def test_quick_profile_of_every_workload_fits_the_budget():
    """The repository's own durations say `make bench` fits in 15 minutes here with every
    workload (issue 9: 10 minutes for the first three, 15 once echonet and capnp exist;
    measured by `msgbench durations` after a quick run), leaving a margin for the build check
    and the report; a change to the quick profile that breaks the budget fails here, before
    anybody waits for it."""
    bp = pipeline.make_plan(pipeline.BenchRequest(profile="quick", placement="none"))
    est = budget.estimate(bp.plan, "quick", runner.planned_trials(bp.plan, "quick"))
    assert est.total_s < 13 * 60, budget.fmt_duration(est.total_s)
    for w, _, planned in bp.plan:  # every scenario and implementation it runs has been timed
        known = budget.load(w).get("trials", {}).get("quick", {})
        for s in w.scenarios_for("quick"):
            # (an absent implementation is never run, so it has no duration to keep; nor is a
            # seed's-build variant, which only `msgbench seeds` plans)
            chosen, _ = runner.runnable(w, s, planned)
            assert {i.id for i in chosen} <= set(known.get(s.name, {})), (w.name, s.name)
