"""The iteration loops (SPEC §4, §5): object, bytes, client, server and pipe, with reuse or
not, timing and checks.

An iteration is a small function (`step`) whose builders and readers are its locals: they are
gone when it returns, before the next iteration's first message is built. That is what lets
`reuse` hand the same scratch segment to the next message (nothing still points into it), and
what lets a reader's receive buffer be refilled.
"""

from __future__ import annotations

import functools
import operator
import os
import subprocess
import sys
import time
from dataclasses import dataclass

import stream
from failures import InvalidMessage
from rng import Rng

# reuse: the first segment of each builder, in words. Each is above the case's largest
# message (carsales ~3.9 Ki words at 199 cars, catrank ~40 Ki at 999 results, eval a few
# hundred), so a message is one segment; the whole segment is zeroed before it is handed out
# again, a memset of at most 512 KiB against an iteration of milliseconds.
SCRATCH_WORDS = {"carsales": 8 * 1024, "catrank": 64 * 1024, "eval": 1024}


class Failure(Exception):
    """A run-time failure (exit status 1): `where` says which iteration or request, the cause
    is chained."""

    def __init__(self, where: str, cause: BaseException) -> None:
        super().__init__(where)
        self.where = where
        self.cause = cause


class Scratch:
    """`reuse` in pycapnp: a message builder whose first segment is this scratch space.

    pycapnp's only hook into a builder's memory is `new_message(num_first_segment_words,
    allocate_seg_callable)`, libcapnp's MessageBuilder::allocateSegment calling back into
    Python. The first call for a message gets the scratch bytearray, zeroed first (libcapnp
    requires zeroed segments and, unlike C++'s MallocMessageBuilder over a scratch array,
    pycapnp does not clear it when the builder goes); later calls, if a message outgrows it,
    get fresh buffers at least as large as everything allocated so far (libcapnp's own growth
    heuristic), so a large message still takes few segments.
    """

    def __init__(self, struct_type, words: int) -> None:
        self._new_message = struct_type.new_message
        self._words = words
        self._first = bytearray(8 * words)
        self._zeros = bytes(8 * words)
        self._allocated = 0

    def new_message(self):
        self._allocated = 0
        return self._new_message(num_first_segment_words=self._words, allocate_seg_callable=self)

    def __call__(self, minimum_words: int) -> bytearray:
        if self._allocated == 0 and minimum_words <= self._words:
            # 2 references: ours and getrefcount's argument. More means a builder from an
            # earlier message is still alive and using it: that message gets it, not this one.
            if sys.getrefcount(self._first) == 2:
                self._first[:] = self._zeros
                self._allocated = self._words
                return self._first
        words = max(minimum_words, self._allocated)
        self._allocated += words
        return bytearray(8 * words)


def message_maker(struct_type, reuse: bool, words: int):
    """A function returning a fresh root builder: on scratch space (reuse) or with pycapnp's
    default allocation (a MallocMessageBuilder, first segment 1024 words, then growing)."""
    return Scratch(struct_type, words).new_message if reuse else struct_type.new_message


@dataclass
class Timing:
    warmup_started: float
    warmup_s: float
    elapsed_s: float
    cpu_s: float
    request_bytes: int = 0
    response_bytes: int = 0


def timed(step, warmup: int, iters: int) -> Timing:
    """`warmup` untimed then `iters` timed calls of `step`, which returns the bytes of its
    request and response as written; only the timed ones are counted."""
    i = 0
    perf_counter, process_time = time.perf_counter, time.process_time
    try:
        started = perf_counter()
        for i in range(warmup):  # noqa: B007 (i names the failing iteration below)
            step()
        warmed = perf_counter()
        cpu = process_time()
        request_bytes = response_bytes = 0
        for i in range(warmup, warmup + iters):  # noqa: B007 (as above)
            sent, received = step()
            request_bytes += sent
            response_bytes += received
        cpu = process_time() - cpu
        ended = perf_counter()
    except Exception as e:
        raise Failure(f"iteration {i + 1} of {warmup + iters} (warm-up included)", e) from e
    return Timing(started, warmed - started, ended - warmed, cpu, request_bytes, response_bytes)


class Run:
    """One case with the scenario's reuse and compression: the message makers, serialisation
    and reading for the chosen framing."""

    def __init__(self, case, reuse: bool, packed: bool) -> None:
        self.case = case
        self.packed = packed
        words = SCRATCH_WORDS[case.name]
        self.new_request = message_maker(case.request_type, reuse, words)
        self.new_response = message_maker(case.response_type, reuse, words)
        # The library's own serialisation: flat bytes, segment table first, or the same
        # packed by libcapnp (the table too).
        self.serialise = operator.methodcaller("to_bytes_packed" if packed else "to_bytes")
        self.read_root = stream.read_packed_root if packed else stream.read_root

    def message_reader(self, stream_in):
        """The reader of the messages arriving on `stream_in` (a buffered binary stream)."""
        if self.packed:
            return stream.PackedMessageReader(stream_in)
        return stream.MessageReader(stream_in)


def run_object(run: Run, warmup: int, iters: int) -> Timing:
    """object: the builder's reader handed straight to the server; nothing serialised."""
    case, rng = run.case, Rng()
    new_request, new_response = run.new_request, run.new_response
    build, serve, check = case.build_request, case.serve, case.check
    nothing = (0, 0)

    def step():
        request = new_request()
        expected = build(request, rng)
        response = new_response()
        serve(request.as_reader(), response)
        check(response.as_reader(), expected)
        return nothing

    return timed(step, warmup, iters)


def run_bytes(run: Run, warmup: int, iters: int) -> Timing:
    """bytes: each message serialised by the library and read back in place from its bytes."""
    case, rng = run.case, Rng()
    new_request, new_response = run.new_request, run.new_response
    build, serve, check = case.build_request, case.serve, case.check
    serialise, read_root = run.serialise, run.read_root
    request_type, response_type = case.request_type, case.response_type

    def step():
        request = new_request()
        expected = build(request, rng)
        sent = serialise(request)
        response = new_response()
        serve(read_root(request_type, sent), response)
        received = serialise(response)
        check(read_root(response_type, received), expected)
        return len(sent), len(received)

    return timed(step, warmup, iters)


def run_client(run: Run, warmup: int, iters: int, out_fd: int, stream_in) -> Timing:
    """client (and pipe's client side): each request written to `out_fd`, then its response
    read from `stream_in` and checked before the next request is built."""
    case, rng = run.case, Rng()
    new_request = run.new_request
    build, check = case.build_request, case.check
    serialise, read_root = run.serialise, run.read_root
    response_type = case.response_type
    responses = run.message_reader(stream_in)
    write_all = stream.write_all

    def step():
        request = new_request()
        expected = build(request, rng)
        sent = serialise(request)
        write_all(out_fd, sent)
        received = responses.read()
        if received is None:
            raise InvalidMessage("end of input where a response was due")
        check(read_root(response_type, received), expected)
        return len(sent), len(received)

    return timed(step, warmup, iters)


def run_server(run: Run, stream_in, write) -> int:
    """server: answers each request on `stream_in` through `write` (which sends one whole
    message: fd_writer(1), or a list's append in the fuzz target) until the input ends at a
    message boundary; returns the number of requests answered."""
    case, packed = run.case, run.packed
    new_response, serve = run.new_response, case.serve
    serialise, read_root = run.serialise, run.read_root
    request_type = case.request_type
    requests = run.message_reader(stream_in)
    # SPEC §6: no response beyond the cap is written. A response whose size follows the
    # request's content (catrank's copies every text) is measured once built, before it is
    # serialised, so that an oversized one is not copied twice more by to_bytes; every response
    # is measured exactly from the bytes serialised, before any of them is written.
    measure_built = getattr(case, "response_sized_by_request", False)
    check_built, check_serialised = stream.check_built, stream.check_serialised

    def step() -> bool:
        received = requests.read()
        if received is None:
            return False
        response = new_response()
        serve(read_root(request_type, received), response)
        if measure_built:
            check_built(response)
        data = serialise(response)
        check_serialised(data, packed)
        write(data)
        return True

    served = 0
    try:
        while step():
            served += 1
    except Exception as e:
        raise Failure(f"request {served + 1}", e) from e
    return served


def fd_writer(fd: int):
    """write(data) for run_server: the whole message to `fd`, at once (stream.write_all)."""
    return functools.partial(stream.write_all, fd)


def run_pipe(run: Run, warmup: int, iters: int, server_argv: list[str]) -> tuple[Timing, float]:
    """pipe: this program started again as `server_argv`, joined by two pipes; the client side
    runs here. Returns the client's timing and the server's CPU (user + system, from wait4)."""
    server = subprocess.Popen(server_argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        timing = run_client(run, warmup, iters, server.stdin.fileno(), server.stdout)
    except BaseException:
        server.kill()
        server.wait()
        raise
    server.stdin.close()
    _, status, usage = os.wait4(server.pid, 0)
    server.returncode = os.waitstatus_to_exitcode(status)
    server.stdout.close()
    if server.returncode != 0:
        raise Failure(
            "the server",
            InvalidMessage(f"it ended with exit status {server.returncode}"),
        )
    return timing, usage.ru_utime + usage.ru_stime


def server_argv(case: str, reuse: str, compression: str, iters: str) -> list[str]:
    """How to start this program again as the server: the interpreter, its options and the
    script as this process was started (sys.orig_argv), then the server's five words."""
    words = [case, "server", reuse, compression, iters]
    start = sys.orig_argv[:-5] if len(sys.orig_argv) > 5 else [sys.executable, sys.argv[0]]
    return [*start, *words]
