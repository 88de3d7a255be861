"""msgbench.stats on known data: intervals, the noise rule, comparisons, ranks, ratios."""

from __future__ import annotations

import numpy as np
import pytest

from msgbench import stats


def tight(center: float, n: int = 20, rel: float = 0.002, seed: int = 1) -> list[float]:
    rng = np.random.default_rng(seed)
    return list(center * (1 + rng.normal(0, rel, n)))


# --------------------------------------------------------------------------- summarize


def test_tight_distribution_gives_narrow_ci_containing_the_median():
    s = stats.summarize(tight(100.0), "lower")
    lo, hi = s["ci95"]
    assert s["n"] == 20
    assert lo <= s["median"] <= hi
    assert hi - lo < 0.01 * s["median"]
    assert abs(s["median"] - 100.0) < 0.5
    assert s["cv"] < 0.01
    assert s["noisy"] is False
    assert s["better"] == "lower"


def test_median_and_ci_of_a_small_known_set():
    s = stats.summarize([48.1, 47.9, 48.5, 49.0, 47.2], "lower")
    assert s["median"] == pytest.approx(48.1)
    lo, hi = s["ci95"]
    assert 47.2 <= lo <= 48.1 <= hi <= 49.0
    assert s["cv"] == pytest.approx(np.std([48.1, 47.9, 48.5, 49.0, 47.2], ddof=1) / 48.14)


def test_summaries_are_reproducible_for_a_seed():
    data = [10.0, 12.0, 11.0, 15.0, 9.0, 10.5, 11.5]
    assert stats.summarize(data, "lower") == stats.summarize(data, "lower")
    assert stats.summarize(data, "lower", seed=7) == stats.summarize(data, "lower", seed=7)


def test_wide_set_is_noisy():
    s = stats.summarize([50.0, 80.0, 120.0, 60.0, 150.0], "lower")
    assert s["noisy"] is True
    assert s["ci95"][1] - s["ci95"][0] > stats.NOISY_CI_WIDTH * s["median"]


def test_noisy_rule_cv_half_fires_even_with_a_narrow_interval():
    # 18 identical trials and two outliers: the bootstrap interval of the median is [100, 100]
    # but the spread (CV) is far above the rule's 10%.
    s = stats.summarize([100.0] * 18 + [10.0, 300.0], "lower")
    assert s["ci95"] == [100.0, 100.0]
    assert s["cv"] > stats.NOISY_CV
    assert s["noisy"] is True


def test_noisy_rule_ci_half():
    assert stats.is_noisy(100.0, [90.0, 101.0], 0.01, 5) is True  # width 11% > 10%
    assert stats.is_noisy(100.0, [95.5, 104.5], 0.01, 5) is False  # width 9%
    assert stats.is_noisy(100.0, [99.0, 101.0], 0.11, 5) is True  # CV 11% > 10%
    assert stats.is_noisy(100.0, [100.0, 100.0], None, 1) is True  # one trial


def test_single_sample():
    s = stats.summarize([42.0], "higher")
    assert s["n"] == 1
    assert s["median"] == 42.0
    assert s["ci95"] == [42.0, 42.0]
    assert s["noisy"] is True
    assert s["cv"] is None


def test_no_samples_raise():
    with pytest.raises(ValueError):
        stats.summarize([], "lower")


def test_bad_input_raises():
    with pytest.raises(ValueError):
        stats.summarize([1.0, 2.0], "faster")
    with pytest.raises(ValueError):
        stats.summarize([1.0, float("nan")], "lower")


def test_large_sample_sets_are_handled():
    s = stats.summarize(tight(5.0, n=5000), "lower")
    assert s["n"] == 5000
    assert s["ci95"][0] <= s["median"] <= s["ci95"][1]


# --------------------------------------------------------------------------- compare / rank


def test_separated_sets_compare_as_better_and_worse():
    fast = stats.summarize([10.0, 10.1, 9.9, 10.05, 9.95], "lower")
    slow = stats.summarize([20.0, 20.2, 19.8, 20.1, 19.9], "lower")
    assert stats.compare(fast, slow, "lower") == "better"
    assert stats.compare(slow, fast, "lower") == "worse"
    # for a higher-is-better metric the same numbers rank the other way round
    assert stats.compare(fast, slow, "higher") == "worse"
    assert stats.compare(slow, fast, "higher") == "better"


def test_overlapping_sets_are_indistinguishable():
    a = stats.summarize([10.0, 11.0, 12.0, 13.0, 14.0], "lower")
    b = stats.summarize([11.5, 12.5, 13.5, 12.0, 13.0], "lower")
    assert stats.overlap(a["ci95"], b["ci95"])
    assert stats.compare(a, b, "lower") == "indistinguishable"
    assert stats.compare(b, a, "lower") == "indistinguishable"
    assert stats.compare(a, b, "higher") == "indistinguishable"


def test_tiers_put_tied_results_in_one_tier():
    s = {
        "a": [10.0, 10.2, 9.8, 10.1, 9.9],
        "b": [10.1, 10.3, 9.9, 10.2, 10.0],
        "c": [20.0, 20.2, 19.8, 20.1, 19.9],
        "d": [40.0, 40.4, 39.6, 40.2, 39.8],
    }
    assert stats.tiers(s, "lower") == [["a", "b"], ["c"], ["d"]]
    assert stats.tiers(s, "higher") == [["d"], ["c"], ["b", "a"]]
    assert stats.tier_of(stats.tiers(s, "lower")) == {"a": 1, "b": 1, "c": 2, "d": 3}


def test_a_tier_is_anchored_on_the_tier_best():
    # b ties with a, c ties with b but not with a: c starts tier 2 (no chaining through b).
    pairs = {
        ("a", "b"): {"verdict": "tie"},
        ("b", "c"): {"verdict": "tie"},
        ("c", "a"): {"verdict": "worse"},  # either orientation of a pair is read
    }
    medians = {"a": 10.0, "b": 10.8, "c": 11.5}
    assert stats.tiers_from(pairs, medians, "lower") == [["a", "b"], ["c"]]
    assert stats.tiers({}, "lower") == []


# --------------------------------------------------------------------------- ratio


def test_ratio_of_x_to_2x_is_one_half():
    x = tight(50.0, n=15, rel=0.01, seed=3)
    two_x = [2 * v for v in tight(50.0, n=15, rel=0.01, seed=4)]
    r = stats.ratio(x, two_x)
    assert r["ratio"] == pytest.approx(0.5, rel=0.01)
    lo, hi = r["ci95"]
    assert lo <= 0.5 <= hi
    assert lo <= r["ratio"] <= hi
    assert hi - lo < 0.05


def test_ratio_of_exactly_doubled_samples():
    x = [10.0, 11.0, 9.0, 10.5, 9.5]
    r = stats.ratio(x, [2 * v for v in x])
    assert r["ratio"] == pytest.approx(0.5)
    assert r["ci95"][0] <= 0.5 <= r["ci95"][1]
    assert stats.ratio(x, [2 * v for v in x]) == r  # seeded


def test_ratio_edge_cases():
    assert stats.ratio([3.0], [6.0]) == {"ratio": 0.5, "ci95": [0.5, 0.5]}
    with pytest.raises(ValueError):
        stats.ratio([1.0, 2.0], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError):
        stats.ratio([], [1.0])
