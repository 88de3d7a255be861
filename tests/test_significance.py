"""msgbench.stats significance on known samples: difference(), aa_band(), the tiers built from
pairwise verdicts, the smallest resolvable difference and the target verdicts; then the error
rates docs/decisions.md states (issue 13), checked by simulating many questions at the lab's n
and realistic CVs."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from msgbench import stats

# --------------------------------------------------------------------------- known samples


def noisy(center: float, n: int, cv: float, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    return list(center * (1 + rng.normal(0, cv, n)))


def test_a_real_5_percent_difference_is_found():
    a = noisy(100.0, 10, 0.005, seed=1)
    b = noisy(105.0, 10, 0.005, seed=2)
    band = stats.aa_band(stats.ratio(a, noisy(100.0, 10, 0.005, seed=3))["ci95"])
    d = stats.difference(a, b, "lower", comparisons=6, band=band)
    assert d["verdict"] == "better"  # lower is better and a is 5% lower
    assert d["ratio"] == pytest.approx(100 / 105, rel=0.01)
    assert d["ci"][0] < d["ratio"] < d["ci"][1] < band[0]  # the whole CI below the band
    assert d["level"] == pytest.approx(1 - 0.05 / 6) and d["band"] == band and d["n"] == [10, 10]
    assert stats.difference(a, b, "higher", comparisons=6, band=band)["verdict"] == "worse"
    assert stats.difference(b, a, "lower", comparisons=6, band=band)["verdict"] == "worse"


@pytest.mark.parametrize("n", [3, 5, 15])
def test_equal_distributions_are_ties(n):
    for seed in range(20):
        a, b, twin = (noisy(100.0, n, 0.02, seed=seed * 3 + k) for k in range(3))
        band = stats.aa_band(stats.ratio(a, twin)["ci95"])
        assert stats.difference(a, b, "lower", band=band)["verdict"] == "tie", seed


def test_a_difference_inside_the_noise_band_is_a_tie():
    a, b = noisy(100.0, 10, 0.002, seed=4), noisy(105.0, 10, 0.002, seed=5)
    assert stats.difference(a, b, "lower")["verdict"] == "better"  # no band: outside 1 suffices
    assert stats.difference(a, b, "lower", band=[1 / 1.08, 1.08])["verdict"] == "tie"


def test_fewer_than_three_trials_never_make_a_difference():
    assert stats.MIN_N_FOR_VERDICT == 3
    two = stats.difference([100.0, 101.0], [200.0, 201.0], "lower")
    assert two["verdict"] == "tie" and two["ratio"] == pytest.approx(100.5 / 200.5)
    three = stats.difference([100.0, 101.0, 100.5], [200.0, 201.0, 200.5], "lower")
    assert three["verdict"] == "better"


def test_more_comparisons_widen_the_interval():
    a, b = noisy(100.0, 7, 0.03, seed=6), noisy(104.0, 7, 0.03, seed=7)
    one = stats.difference(a, b, "lower")
    ten = stats.difference(a, b, "lower", comparisons=10)
    assert (one["level"], ten["level"]) == (pytest.approx(0.95), pytest.approx(0.995))
    assert ten["ci"][0] <= one["ci"][0] and one["ci"][1] <= ten["ci"][1]
    assert stats.difference(a, b, "lower", seed=3) == stats.difference(a, b, "lower", seed=3)
    with pytest.raises(ValueError):
        stats.difference(a, b, "lower", comparisons=0)
    with pytest.raises(ValueError):
        stats.difference(a, [0.0, 0.0, 1.0], "lower")  # median of b is zero
    with pytest.raises(ValueError):
        stats.difference(a, b, "faster")


def test_the_noise_band_is_symmetric_on_a_log_scale_and_holds_one():
    assert stats.aa_band([0.98, 1.03]) == pytest.approx([1 / 1.03, 1.03])
    assert stats.aa_band([0.95, 1.01]) == pytest.approx([0.95, 1 / 0.95])
    # a CI beside 1 (a drift between the two labels) still gives a band around 1
    assert stats.aa_band([1.01, 1.02]) == pytest.approx([1 / 1.02, 1.02])
    assert stats.aa_band([1.0, 1.0]) == [1.0, 1.0]
    for bad in ([0.0, 1.0], [-1.0, 1.0], [math.nan, 1.0], [1.0, math.inf]):
        with pytest.raises(ValueError):
            stats.aa_band(bad)


def test_pairwise_corrects_within_the_question_and_reads_either_way():
    s = {
        "c": noisy(200.0, 5, 0.01, seed=8),
        "a": noisy(100.0, 5, 0.01, seed=9),
        "b": noisy(101.0, 5, 0.01, seed=10),
    }
    pairs = stats.pairwise(s, "lower")
    assert set(pairs) == {("a", "b"), ("a", "c"), ("b", "c")}
    assert all(p["level"] == pytest.approx(1 - 0.05 / 3) for p in pairs.values())
    assert stats.verdict_of(pairs, "a", "c") == "better"
    assert stats.verdict_of(pairs, "c", "a") == "worse"
    assert stats.verdict_of(pairs, "b", "a") == "tie"
    assert stats.tiers(s, "lower") == [["a", "b"], ["c"]]
    assert stats.tiers(s, "higher") == [["c"], ["b", "a"]]
    # a zero median is never divided by: the pair is taken the other way, or tied if both are 0
    zeros = stats.pairwise({"y": [1.0, 2.0, 3.0], "z": [0.0, 0.0, 0.0], "w": [0.0] * 3}, "lower")
    assert ("z", "y") in zeros and stats.verdict_of(zeros, "y", "z") == "worse"
    assert zeros[("w", "z")] == {**zeros[("w", "z")], "ratio": None, "verdict": "tie"}


def test_the_smallest_resolvable_difference_adds_the_band_to_the_typical_interval():
    h = 1.02**2  # a CI whose half-width is 2% on a log scale
    pairs = {
        ("a", "b"): {"ci": [1.0, h], "n": [5, 5]},
        ("a", "c"): {"ci": [2.0, 2.0 * h], "n": [5, 5]},
        ("b", "c"): {"ci": [0.5, 0.5 * 1.10**2], "n": [5, 5]},  # wider: the median ignores it
        ("a", "d"): {"ci": [1.0, 4.0], "n": [2, 5]},  # too few trials to count
        ("b", "d"): {"ci": None, "n": [5, 5]},
    }
    assert stats.resolvable(pairs, [1 / 1.03, 1.03]) == pytest.approx(1.03 * 1.02 - 1)
    assert stats.resolvable(pairs, None) == pytest.approx(0.02)
    assert stats.resolvable({("a", "d"): pairs[("a", "d")]}, None) is None
    assert stats.resolvable({}, None) is None


@pytest.mark.parametrize(
    "ci, lo, hi, band, n, verdict",
    [
        ([1.10, 1.20], None, 1.3, None, 5, "met"),
        ([1.10, 1.20], None, 1.3, [1 / 1.1, 1.1], 5, "undecided"),  # 1.2 x 1.1 > 1.3
        ([1.40, 1.50], None, 1.3, None, 5, "missed"),
        ([1.25, 1.35], None, 1.3, None, 5, "undecided"),  # the CI straddles the bound
        ([1.40, 1.50], None, 1.3, [1 / 1.1, 1.1], 5, "undecided"),  # 1.4 / 1.1 < 1.3
        ([150.0, 170.0], 100, None, None, 5, "met"),
        ([40.0, 60.0], 100, None, None, 5, "missed"),
        ([0.80, 0.90], 0.5, 1.0, None, 5, "met"),
        ([1.10, 1.20], None, 1.3, None, 2, "undecided"),  # too few trials
        (None, None, 1.3, None, 5, "undecided"),  # no interval
    ],
)
def test_a_target_is_met_missed_or_undecided(ci, lo, hi, band, n, verdict):
    assert stats.bound_verdict(ci, lo, hi, band, n) == verdict


# --------------------------------------------------------------------------- error rates
#
# Each simulated question is one scenario: k implementations and the A/A twin of the first,
# n trials each, lognormal noise of the given CV, the A/A band from the twin, every pair
# compared at the Bonferroni level of the k(k-1)/2 pairs (stats.pair_verdicts: the code
# difference() runs, vectorised over the questions). 1,000 resamples instead of the reports'
# 10,000 keep each simulation to about a second: at these n a bootstrap median takes only a
# few distinct values, and every simulated rate below sits well clear of the figure asserted.

SIM_RESAMPLES = 1_000


def simulate(n, cv, k, questions, effect=1.0, seed=0, band=True, trials_said=None):
    """{(i, j): verdicts of i against j over the questions}; implementation 1 is `effect` times
    slower than the others. trials_said: the n the verdict rule is told (to show the rule
    without its minimum-n guard)."""
    rng = np.random.default_rng(seed)
    sigma = math.sqrt(math.log1p(cv**2))
    sets = np.exp(rng.normal(0.0, sigma, (k + 1, questions, n)))
    sets[1] *= effect
    boots = [stats.bootstrap_medians(s, rng, SIM_RESAMPLES) for s in sets]
    told = trials_said or n
    aa_ci, _ = stats.pair_verdicts(boots[0], boots[k], told, told, "lower", stats.CONFIDENCE)
    bands = stats.aa_bands(aa_ci) if band else None
    level = stats.confidence_level(k * (k - 1) // 2)
    return {
        (i, j): stats.pair_verdicts(boots[i], boots[j], told, told, "lower", level, bands)[1]
        for i, j in itertools.combinations(range(k), 2)
    }


def false_difference_rate(verdicts: dict) -> float:
    """The share of questions in which any pair was called different (the family-wise rate)."""
    return float(np.mean(np.any([v != "tie" for v in verdicts.values()], axis=0)))


def test_the_simulated_comparison_is_the_one_difference_makes():
    a, b = noisy(100.0, 6, 0.02, seed=11), noisy(103.0, 6, 0.02, seed=12)
    rng = np.random.default_rng(7)
    boot_a = stats.bootstrap_medians(np.array([a]), rng, 500)
    boot_b = stats.bootstrap_medians(np.array([b]), rng, 500)
    band = np.array([[0.98, 1.02]])
    ci, verdicts = stats.pair_verdicts(boot_a, boot_b, 6, 6, "lower", 0.99, band)
    d = stats.difference(a, b, "lower", comparisons=5, band=[0.98, 1.02], seed=7, resamples=500)
    assert d["ci"] == list(ci[0]) and d["verdict"] == verdicts[0]


@pytest.mark.parametrize("n, k, questions", [(3, 5, 1000), (3, 10, 600), (4, 5, 1000)])
def test_false_difference_rate_per_question_is_at_most_five_percent(n, k, questions):
    """All k implementations equal: docs/decisions.md states at most 5% of questions call any
    pair different, from n = 3 on (simulated: 0.9% at n=3, k=5; 2.2% at n=3, k=10; 0.1% at n=4)."""
    rate = false_difference_rate(simulate(n, 0.02, k, questions, seed=n * 100 + k))
    assert rate <= stats.ALPHA, rate


def test_two_trials_would_break_the_stated_rate_hence_the_minimum():
    """At n = 2 the bootstrap interval is the range of the trials whatever the level, so the
    correction cannot hold the rate: told n = 3, the rule calls false differences in ~13% of
    questions of 5 implementations. MIN_N_FOR_VERDICT makes every such comparison a tie."""
    raw = simulate(2, 0.02, 5, 1000, seed=21, trials_said=stats.MIN_N_FOR_VERDICT)
    assert false_difference_rate(raw) > stats.ALPHA
    assert false_difference_rate(simulate(2, 0.02, 5, 1000, seed=21)) == 0.0


def test_old_runs_without_a_band_call_false_differences_more_often():
    """The fallback for runs stored before the A/A control (the CI must exclude 1): its rate is
    above 5% at the n those runs had, which the report says beside them (docs: ~12% at n = 5
    with 6 implementations)."""
    rate = false_difference_rate(simulate(5, 0.02, 6, 1000, seed=31, band=False))
    assert stats.ALPHA < rate < 0.2, rate


@pytest.mark.parametrize("n, cv, power", [(4, 0.01, 0.80), (15, 0.02, 0.60)])
def test_power_for_a_real_5_percent_difference(n, cv, power):
    """docs/decisions.md: a 5% difference between two implementations is found in at least 80%
    of runs at n = 4 and CV 1% (simulated 87%), and 60% at n = 15 and CV 2% (simulated 68%)."""
    verdicts = simulate(n, cv, 2, 1000, effect=1.05, seed=n * 10)
    found = float(np.mean(verdicts[(0, 1)] == "better"))  # 0 is 5% faster than 1
    assert found >= power, found
    # ... and never the wrong way round
    assert not np.any(verdicts[(0, 1)] == "worse")


def test_a_difference_of_the_resolvable_size_is_called_about_half_of_the_time():
    """What the report's "smallest resolvable difference" promises (stats.resolvable): at n = 7
    and CV 2%, single questions with no difference say about 6.5%; a true difference of that
    size is then called in about half of the questions (simulated 52%)."""
    null = simulate(7, 0.02, 2, 600, seed=41)
    assert set(np.unique(null[(0, 1)])) == {"tie"}
    rng = np.random.default_rng(42)
    sigma = math.sqrt(math.log1p(0.02**2))
    said = []
    for _ in range(40):  # the figure single questions report, the way the report computes it
        s = {k: list(np.exp(rng.normal(0, sigma, 7))) for k in ("a", "b", "twin")}
        band = stats.aa_band(stats.ratio(s["a"], s.pop("twin"))["ci95"])
        said.append(stats.resolvable(stats.pairwise(s, "lower", band=band, resamples=2000), band))
    size = float(np.median(said))
    assert 0.03 < size < 0.10, size
    found = float(np.mean(simulate(7, 0.02, 2, 600, effect=1 + size, seed=43)[(0, 1)] == "better"))
    assert 0.35 < found < 0.65, (size, found)
