"""catrank: the request's draws and good count, the server's scoring and sort, the client's
check (SPEC §3.3)."""

from __future__ import annotations

import math

import pytest
from capnp_py.failures import InvalidMessage, Mismatch
from capnp_py.rng import Rng
from conftest import GOLDEN, make_case


@pytest.fixture(scope="module")
def catrank():
    return make_case("catrank")


def results_of(case, items):
    """A SearchResultList of (url, score, snippet)."""
    message = case.request_type.new_message()
    for b, (url, score, snippet) in zip(message.init("results", len(items)), items, strict=True):
        b.url, b.score, b.snippet = url, score, snippet
    return message


def serve(case, message):
    response = case.response_type.new_message()
    case.serve(message.as_reader(), response)
    return [(r.url, r.score, r.snippet) for r in response.as_reader().results]


def test_first_requests_have_the_golden_counts_and_good_counts(catrank):
    rng = Rng()
    counts, goods = [], []
    for _ in range(len(GOLDEN["catrank"]["first_counts"])):
        message = catrank.request_type.new_message()
        goods.append(catrank.build_request(message, rng))
        counts.append(len(message.results))
    assert counts == GOLDEN["catrank"]["first_counts"]
    assert goods == GOLDEN["catrank"]["first_good"]


def test_first_results_are_shaped_as_the_spec_says(catrank):
    message = catrank.request_type.new_message()
    catrank.build_request(message, Rng())
    for i, r in enumerate(message.as_reader().results):
        assert r.score == 1000 - i
        assert r.url.startswith("http://example.com/")
        assert set(r.url[len("http://example.com/") :]) <= set("abcdefghijklmnopqrstuvwxyz")
        assert r.snippet.startswith(" ")


def test_server_answers_every_request_with_the_good_ones_first(catrank):
    rng = Rng()
    for _ in range(5):
        message = catrank.request_type.new_message()
        good = catrank.build_request(message, rng)
        response = catrank.response_type.new_message()
        catrank.serve(message.as_reader(), response)
        catrank.check(response.as_reader(), good)
        assert len(response.results) == len(message.results)


def test_cats_go_up_dogs_go_down_and_texts_are_copied(catrank):
    items = [("http://a/", 10.0, " foo cat bar "), ("http://b/", 20.0, " dog "),
             ("http://c/", 30.0, " cat dog "), ("http://d/", 5.0, " cats catalog ")]  # fmt: skip
    assert serve(catrank, results_of(catrank, items)) == [
        ("http://a/", 100000.0, " foo cat bar "),
        ("http://c/", 30.0 * 10000.0 / 10000.0, " cat dog "),
        ("http://d/", 5.0, " cats catalog "),
        ("http://b/", 20.0 / 10000.0, " dog "),
    ]


def test_equal_scores_keep_request_order_and_nan_sorts_last(catrank):
    nan = float("nan")
    items = [("n1", nan, ""), ("a", 1.0, ""), ("b", 2.0, ""), ("a2", 1.0, ""), ("n2", nan, ""),
             ("inf", math.inf, ""), ("minf", -math.inf, "")]  # fmt: skip
    got = serve(catrank, results_of(catrank, items))
    assert [u for u, _, _ in got] == ["inf", "b", "a", "a2", "minf", "n1", "n2"]
    assert math.isnan(got[-1][1])


def test_an_empty_request_gets_an_empty_response(catrank):
    assert serve(catrank, results_of(catrank, [])) == []


def test_a_response_beyond_the_cap_is_refused_before_the_work(catrank, monkeypatch):
    from capnp_py import catrank as module

    monkeypatch.setattr(module, "MAX_WORDS", 30)
    with pytest.raises(InvalidMessage, match="11 results"):
        serve(catrank, results_of(catrank, [("", 1.0, "")] * 11))
    assert len(serve(catrank, results_of(catrank, [("", 1.0, "")] * 10))) == 10


def test_check_counts_the_leading_good_results(catrank):
    response = results_of(catrank, [("", 2e6, ""), ("", 1001.5, ""), ("", 1001.0, ""),
                                     ("", 5e6, "")])  # fmt: skip
    catrank.check(response.as_reader(), 2)
    with pytest.raises(Mismatch, match="2 leading.*expected 3"):
        catrank.check(response.as_reader(), 3)
