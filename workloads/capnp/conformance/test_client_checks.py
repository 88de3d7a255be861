"""Clients reject a wrong answer (SPEC §5): the suite's server answers one request wrongly and
every client must stop with exit status 1 and a message, never accept it or crash."""

from __future__ import annotations

import peers as P
import pytest
import reference as R


def _wrong(kind: str):
    def answer(case, request, i):
        right = P.right_answer(case, request)
        if i != 2:
            return right
        if kind == "amount+1":
            return right + 1
        if kind == "value+1":
            return R.wrap32(right + 1)
        if kind == "unscaled":  # sorted, but cats never multiplied
            return sorted(request, key=lambda r: -r.score)
        if kind == "unsorted":  # scaled, in request order
            return [R.SearchResult(r.url, s.score, r.snippet)
                    for r, s in zip(request, _scaled(request), strict=True)]  # fmt: skip
        raise AssertionError(kind)

    return answer


def _scaled(request):
    by_url = {r.url: r for r in R.catrank_response(request)}
    return [by_url[r.url] for r in request]


@pytest.mark.parametrize(
    ("case", "kind"),
    [
        ("carsales", "amount+1"),
        ("eval", "value+1"),
        ("catrank", "unscaled"),
        ("catrank", "unsorted"),
    ],  # fmt: skip
)
def test_client_rejects_a_wrong_answer(impl, dialect, case, kind):
    served = P.serve_client(impl, case, False, 40, dialect, answer=_wrong(kind))
    e = served.ended
    assert e.returncode == 1, (
        f"a wrong answer to request 2 ({kind}) must fail the client: {e.describe()}"
    )
    assert e.err.strip(), "the client exited 1 without a message"
    assert served.requests == 3, (
        f"the client went on after the wrong answer ({served.requests} requests)"
    )
