"""Servers compute exact answers (SPEC §3): generated requests and hand-made ones (eval's
division and overflow corners, cars with extreme values, snippets with cats and dogs), compared
by content with the suite's own computation."""

from __future__ import annotations

import math

import peers as P
import pytest
import reference as R

I32_MIN, I32_MAX = -(2**31), 2**31 - 1


def car(**kw) -> R.Car:
    base = dict(make="Tesla", model="Model S", color=8, seats=5, doors=4,
                wheels=[R.Wheel(30, 35.0, False)] * 4, length=200, width=70, height=60,
                weight=4200, engine=R.Engine(300, 0, 0, False, True), fuel_capacity=0.0,
                fuel_level=0.0, has_power_windows=True, has_power_steering=True,
                has_cruise_control=True, cup_holders=4, has_nav_system=True)  # fmt: skip
    base.update(kw)
    return R.Car(**base)


HAND_CARSALES = {
    "empty-lot": [],
    "one-car": [car()],
    "extremes": [car(seats=255, doors=255, length=65535, width=65535, height=65535,
                     wheels=[R.Wheel(65535, 1.0, True)] * 7,
                     engine=R.Engine(65535, 255, 2**32 - 1, True, True), cup_holders=255)],
    "electric-only": [car(engine=R.Engine(100, 4, 800, False, True))],
    "gas-and-electric": [car(engine=R.Engine(100, 4, 800, True, True))],
}  # fmt: skip


def result(i: int, snippet: str, score: float | None = None) -> R.SearchResult:
    return R.SearchResult(f"http://example.com/{i}", float(1000 - i) if score is None else score,
                          snippet)  # fmt: skip


HAND_CATRANK = {
    "empty": [],
    "cats-and-dogs": [result(0, " foo bar "), result(1, " cat "), result(2, " dog "),
                      result(3, " foo cat dog bar "), result(4, " catdog cat "),
                      result(5, "cat dog "), result(6, " thud cat ")],
    "cat-needs-spaces": [result(0, " concat "), result(1, " cats "), result(2, " cat"),
                         result(3, "  cat  ")],
}  # fmt: skip


def chain(depth: int, op: int = 0) -> R.Expr:
    e: R.Expr | int = 1
    for _ in range(depth):
        e = R.Expr(op, e, 1)
    return e  # type: ignore[return-value]


HAND_EVAL = {
    "divide-by-zero": R.Expr(3, 7, 0),
    "modulus-by-zero": R.Expr(4, 7, 0),
    "min-divided-by-minus-one": R.Expr(3, I32_MIN, -1),
    "min-modulo-minus-one": R.Expr(4, I32_MIN, -1),
    "truncates-toward-zero": R.Expr(3, -7, 2),
    "modulus-sign-of-dividend": R.Expr(4, -7, 2),
    "modulus-negative-divisor": R.Expr(4, 7, -2),
    "add-wraps": R.Expr(0, I32_MAX, 1),
    "subtract-wraps": R.Expr(1, I32_MIN, 1),
    "multiply-wraps": R.Expr(2, 65536, 65536 + 3),
    "nested": R.Expr(2, R.Expr(1, 5, R.Expr(3, 100, 7)), R.Expr(4, -100, R.Expr(0, 3, 4))),
    "depth-60": chain(60, op=0),
}


def _same(case, got, want) -> bool:
    if case == "catrank":
        return R.cce_results(got) == R.cce_results(want)
    return got == want


def _check(impl, dialect, case, packed, requests):
    responses, ended = P.ask_server(impl, case, packed, requests, dialect)
    assert ended.returncode == 0, ended.describe()
    for i, (req, got) in enumerate(zip(requests, responses, strict=True)):
        want = P.right_answer(case, req)
        shown_got = got if case != "catrank" else [(r.url, r.score) for r in got][:6]
        shown_want = want if case != "catrank" else [(r.url, r.score) for r in want][:6]
        assert _same(case, got, want), f"request {i}: answered {shown_got}, expected {shown_want}"
    assert ended.last_json().get("served") == len(requests), (
        f'the server\'s last stderr line should be {{"served": {len(requests)}}}'
    )


@pytest.mark.parametrize("packed", [False, True], ids=["none", "packed"])
@pytest.mark.parametrize("case", ["carsales", "catrank", "eval"])
def test_generated_requests_get_exact_answers(impl, dialect, case, packed):
    count = {"carsales": 6, "catrank": 3, "eval": 40}[case]
    _check(impl, dialect, case, packed, [q for q, _ in R.requests(case, count)])


@pytest.mark.parametrize("name", HAND_CARSALES)
def test_carsales_hand_made(impl, dialect, name):
    _check(impl, dialect, "carsales", False, [HAND_CARSALES[name]])


@pytest.mark.parametrize("name", HAND_CATRANK)
def test_catrank_hand_made(impl, dialect, name):
    _check(impl, dialect, "catrank", False, [HAND_CATRANK[name]])


@pytest.mark.parametrize("name", HAND_EVAL)
def test_eval_hand_made(impl, dialect, name):
    _check(impl, dialect, "eval", False, [HAND_EVAL[name]])


def test_catrank_nan_and_infinite_scores_do_not_break_the_sort(impl, dialect):
    nan = float("nan")
    request = [result(i, s, score) for i, (s, score) in enumerate(
        [(" cat ", nan), (" foo ", 3.0), (" dog ", nan), (" bar ", float("inf")),
         (" cat ", -float("inf")), (" baz ", 5.0), (" cat ", 2.0)])]  # fmt: skip
    responses, ended = P.ask_server(impl, "catrank", False, [request], dialect)
    assert ended.returncode == 0, ended.describe()
    got = responses[0]
    finite = [r.score for r in got if not math.isnan(r.score)]
    assert finite == sorted(finite, reverse=True), f"not descending: {[r.score for r in got]}"
    assert all(math.isnan(r.score) for r in got[len(finite) :]), "NaN scores do not sort last"
    assert sorted(r.url for r in got) == sorted(r.url for r in request)
