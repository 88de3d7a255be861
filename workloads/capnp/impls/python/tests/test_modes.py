"""modes: the iteration loops with reuse or not, packed or not; the scratch segment of reuse;
client and server joined by two pipes in one process."""

from __future__ import annotations

import io
import os
import threading

import pytest
from capnp_py import modes
from capnp_py.failures import Mismatch
from capnp_py.rng import Rng
from conftest import make_case

ITERS = {"carsales": 6, "catrank": 3, "eval": 40}


@pytest.mark.parametrize("reuse", [True, False], ids=["reuse", "no-reuse"])
@pytest.mark.parametrize("packed", [False, True], ids=["none", "packed"])
def test_bytes_mode_runs_and_counts_the_timed_bytes(case, reuse, packed):
    run = modes.Run(case, reuse, packed)
    timing = modes.run_bytes(run, 2, ITERS[case.name])
    assert timing.request_bytes > 0 and timing.response_bytes > 0
    assert timing.elapsed_s > 0 and timing.cpu_s >= 0 and timing.warmup_s >= 0


@pytest.mark.parametrize("reuse", [True, False], ids=["reuse", "no-reuse"])
def test_object_mode_runs_and_moves_no_bytes(case, reuse):
    timing = modes.run_object(modes.Run(case, reuse, False), 1, ITERS[case.name])
    assert (timing.request_bytes, timing.response_bytes) == (0, 0)


def test_packed_bytes_are_fewer_and_warm_up_is_not_counted():
    case = make_case("carsales")
    plain = modes.run_bytes(modes.Run(case, False, False), 0, 4)
    packed = modes.run_bytes(modes.Run(case, False, True), 0, 4)
    assert packed.request_bytes < plain.request_bytes
    # The same four requests after a warm-up of four: different requests, counted alone.
    later = modes.run_bytes(modes.Run(case, False, False), 4, 4)
    assert later.request_bytes != plain.request_bytes


def test_a_wrong_answer_fails_the_run_at_its_iteration():
    case = make_case("eval")
    serve = case.serve

    def off_by_one(expr, response):
        serve(expr, response)
        response.value = response.value + 1

    case.serve = off_by_one
    with pytest.raises(modes.Failure) as failed:
        modes.run_object(modes.Run(case, False, False), 2, 5)
    assert failed.value.where.startswith("iteration 1 of 7")
    assert isinstance(failed.value.cause, Mismatch)


def test_scratch_hands_out_the_same_zeroed_segment():
    case = make_case("carsales")
    scratch = modes.Scratch(case.response_type, 64)
    first = scratch.new_message()
    first.amount = 0xFFFF
    assert scratch._first[8:16] != bytes(8)  # the root struct's data word
    del first
    second = scratch.new_message()
    assert second.amount == 0  # zeroed before it was handed out again
    assert bytes(scratch._first[16:]) == bytes(len(scratch._first) - 16)


def test_scratch_in_use_is_not_handed_out_twice():
    case = make_case("carsales")
    scratch = modes.Scratch(case.response_type, 64)
    first = scratch.new_message()
    first.amount = 7
    second = scratch.new_message()  # `first` still lives: a fresh segment for `second`
    second.amount = 9
    assert (first.amount, second.amount) == (7, 9)


def test_scratch_outgrown_takes_more_segments():
    case = make_case("catrank")
    scratch = modes.Scratch(case.request_type, 32)
    message = scratch.new_message()
    results = message.init("results", 100)
    for r in results:
        r.url = b"x" * 100
    assert len(message.to_segments()) > 1
    assert message.results[99].url == "x" * 100


@pytest.mark.parametrize("packed", [False, True], ids=["none", "packed"])
def test_client_and_server_over_two_pipes(case, packed):
    requests_r, requests_w = os.pipe()
    responses_r, responses_w = os.pipe()
    served: list[int] = []

    def server() -> None:
        with os.fdopen(requests_r, "rb") as stream_in:
            run = modes.Run(case, True, packed)
            served.append(modes.run_server(run, stream_in, modes.fd_writer(responses_w)))
        os.close(responses_w)

    thread = threading.Thread(target=server)
    thread.start()
    try:
        with os.fdopen(responses_r, "rb") as stream_in:
            timing = modes.run_client(modes.Run(case, False, packed), 1, ITERS[case.name],
                                      requests_w, stream_in)  # fmt: skip
    finally:
        os.close(requests_w)
        thread.join(30)
    assert served == [1 + ITERS[case.name]]
    assert timing.request_bytes > 0


@pytest.mark.parametrize("packed", [False, True], ids=["none", "packed"])
def test_server_answers_an_in_memory_stream_through_write(case, packed):
    # What the fuzz target does (fuzz/fuzz_request.py): any buffered stream in, any write out.
    run = modes.Run(case, False, packed)
    rng = Rng()
    requests, expected = [], []
    for _ in range(2):
        request = case.request_type.new_message()
        expected.append(case.build_request(request, rng))
        requests.append(run.serialise(request))
    written: list[bytes] = []
    assert modes.run_server(run, io.BytesIO(b"".join(requests)), written.append) == 2
    for response, value in zip(written, expected, strict=True):
        case.check(run.read_root(case.response_type, response), value)


def test_server_argv_restarts_this_program_as_the_server(monkeypatch):
    monkeypatch.setattr(modes.sys, "orig_argv", ["py", "-E", "main.py", "eval", "pipe", "reuse",
                                                 "packed", "9"])  # fmt: skip
    argv = modes.server_argv("eval", "reuse", "packed", "9")
    assert argv == ["py", "-E", "main.py", "eval", "server", "reuse", "packed", "9"]
