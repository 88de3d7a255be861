"""modes: the iteration loops with reuse or not, packed or not; the scratch segment of reuse;
client and server joined by two pipes in one process."""

from __future__ import annotations

import io
import os
import struct
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


def shared_url_request(results: int, url: bytes) -> bytes:
    """A catrank request of `results` results whose urls all point at one text (each result a
    struct of the url pointer alone): a word and the url's words to read per result, while each
    is a whole SearchResult and the url in the response."""
    text = url + bytes(8 - len(url) % 8)
    seg = [struct_ptr(0, 0, 1), list_ptr(0, 7, results), struct_ptr(results, 0, 1)]
    seg += [list_ptr(results - i - 1, 2, len(url) + 1) for i in range(results)]
    body = struct.pack(f"<{len(seg)}Q", *seg) + text
    return struct.pack("<II", 0, len(body) // 8) + body


def pack(data: bytes) -> bytes:
    """Cap'n Proto packing, plainly (a tag per word, its non-zero bytes; a count of further
    zero words after a zero word, of further words copied raw after a word with no zero)."""
    words = [data[i : i + 8] for i in range(0, len(data), 8)]
    out, i = bytearray(), 0
    while i < len(words):
        word = words[i]
        out.append(sum(1 << b for b in range(8) if word[b]))
        out += bytes(b for b in word if b)
        i += 1
        if not any(word) or all(word):
            alike = all if any(word) else (lambda w: not any(w))
            run = 0
            while run < 255 and i + run < len(words) and alike(words[i + run]):
                run += 1
            out.append(run)
            if any(word):
                out += b"".join(words[i : i + run])
            i += run
    return bytes(out)


def struct_ptr(offset: int, data: int, ptrs: int) -> int:
    return ((offset & 0x3FFFFFFF) << 2) | (data << 32) | (ptrs << 48)


def list_ptr(offset: int, size: int, count: int) -> int:
    return ((offset & 0x3FFFFFFF) << 2) | 1 | (size << 32) | (count << 35)


@pytest.mark.parametrize("packed", [False, True], ids=["none", "packed"])
def test_server_writes_no_response_beyond_the_cap(packed, monkeypatch):
    # SPEC §6 with the cap made small: 100 results sharing a 10-word url read 1,100 words but
    # answer with at least 1,303 (3-word results and the url each, and the root's 3 words).
    from capnp_py import stream

    catrank = make_case("catrank")
    run = modes.Run(catrank, False, packed)
    data = shared_url_request(100, b"http://example.com/" + b"u" * 54)
    if packed:
        data = pack(data)
    written: list[bytes] = []
    assert modes.run_server(run, io.BytesIO(data), written.append) == 1
    response = written.pop()
    assert len(run.read_root(catrank.response_type, response).results) == 100
    words = stream.serialised_words(response, packed)
    assert words >= 1303

    # Certainly beyond (the objects alone): refused before it is serialised.
    monkeypatch.setattr(stream, "MAX_WORDS", 1302)
    monkeypatch.setattr(run, "serialise", lambda response: pytest.fail("serialised"))
    with pytest.raises(modes.Failure, match="request 1") as failure:
        modes.run_server(run, io.BytesIO(data), written.append)
    assert "at least 1303 words" in str(failure.value.cause)
    # Beyond only by the landing pads that the segments hold besides: refused once
    # serialised, before anything is written.
    run = modes.Run(catrank, False, packed)
    monkeypatch.setattr(stream, "MAX_WORDS", words - 1)
    with pytest.raises(modes.Failure) as failure:
        modes.run_server(run, io.BytesIO(data), written.append)
    assert f"{words} words, beyond" in str(failure.value.cause)
    assert written == []


def test_server_argv_restarts_this_program_as_the_server(monkeypatch):
    monkeypatch.setattr(modes.sys, "orig_argv", ["py", "-E", "main.py", "eval", "pipe", "reuse",
                                                 "packed", "9"])  # fmt: skip
    argv = modes.server_argv("eval", "reuse", "packed", "9")
    assert argv == ["py", "-E", "main.py", "eval", "server", "reuse", "packed", "9"]
