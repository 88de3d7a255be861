"""Running the benchmark programs (SPEC.md §5) and the suite's own peers: a server that
answers an implementation's client (checking its requests), and a client that sends chosen
requests to an implementation's server (checking its answers).

Every wait is bounded; every process is killed and reaped on the way out, so a hung program
fails its test and never the run.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import codec as C
import reference as R

RUN_TIMEOUT_S = 60


@dataclass
class Ended:
    argv: list[str]
    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float
    maxrss_kb: int = 0

    @property
    def err(self) -> str:
        return self.stderr.decode(errors="replace")

    def last_json(self) -> dict:
        """The last non-empty stderr line as JSON (a client's report, a server's count)."""
        lines = [ln for ln in self.err.splitlines() if ln.strip()]
        assert lines, f"{self.describe()}: nothing on stderr"
        try:
            doc = json.loads(lines[-1])
        except json.JSONDecodeError:
            raise AssertionError(
                f"{self.describe()}: last stderr line is not JSON: {lines[-1]!r}"
            ) from None
        assert isinstance(doc, dict), f"last stderr line is not a JSON object: {lines[-1]!r}"
        return doc

    def describe(self) -> str:
        how = (f"killed by signal {-self.returncode}" if self.returncode < 0
               else f"exit status {self.returncode}")  # fmt: skip
        return f"{' '.join(self.argv[-6:])}: {how}; stderr: {self.err.strip()[-600:]!r}"


def popen(argv: list[str], cwd: str, stdin=subprocess.PIPE) -> subprocess.Popen:
    return subprocess.Popen(
        argv, cwd=cwd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip


def end(*procs: subprocess.Popen) -> None:
    """Kill (with its process group) and reap each program still running: every way out of a
    test, a failed assertion included, leaves nothing behind."""
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def reap(p: subprocess.Popen, argv: list[str], started: float, timeout: float) -> Ended:
    """Wait (bounded) for `p`, reading what is left of its output; kill it if it overstays."""
    if p.stdin is not None and p.stdin.closed:
        p.stdin = None  # closed by the caller to end the program's input
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        raise AssertionError(
            f"{' '.join(argv[-6:])} did not finish within {timeout:.0f} s; stderr: "
            f"{err.decode(errors='replace')[-400:]!r}"
        ) from None
    return Ended(argv, p.returncode, out or b"", err or b"", time.monotonic() - started)


def run(impl, words: list[str], stdin_bytes: bytes = b"", timeout: float = RUN_TIMEOUT_S) -> Ended:
    """Run the program with CASE MODE REUSE COMPRESSION ITERS (or any words) to its end, with
    its peak RSS from wait4."""
    argv = [*impl.argv(), *words]
    started = time.monotonic()
    p = subprocess.Popen(
        argv, cwd=impl.cwd(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip

    # A writer thread, so that a program that stops reading cannot block the suite.
    def feed() -> None:
        try:
            p.stdin.write(stdin_bytes)
            p.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    chunks = {"out": b"", "err": b""}

    def drain(name, f) -> None:
        chunks[name] = f.read()

    readers = [threading.Thread(target=drain, args=(n, f), daemon=True)
               for n, f in (("out", p.stdout), ("err", p.stderr))]  # fmt: skip
    for r in readers:
        r.start()
    deadline = started + timeout
    status = rusage = None
    while time.monotonic() < deadline:
        pid, status, rusage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.005)
    else:
        os.killpg(p.pid, signal.SIGKILL)
        os.wait4(p.pid, 0)
        raise AssertionError(f"{' '.join(argv[-6:])} did not finish within {timeout:.0f} s")
    p.returncode = os.waitstatus_to_exitcode(status)
    for r in readers:
        r.join(5)
    try:
        os.killpg(p.pid, signal.SIGKILL)  # anything it left behind
    except ProcessLookupError:
        pass
    return Ended(argv, p.returncode, chunks["out"], chunks["err"], time.monotonic() - started,
                 rusage.ru_maxrss)  # fmt: skip


def report_of(e: Ended) -> dict:
    """The one-line JSON report on stdout of object, bytes and pipe modes."""
    assert e.returncode == 0, e.describe()
    try:
        doc = json.loads(e.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"stdout is not one JSON object: {e.stdout[:300]!r}") from None
    assert isinstance(doc, dict), f"stdout is not a JSON object: {e.stdout[:300]!r}"
    return doc


# ---- the suite's server, for testing a client ------------------------------------------------


@dataclass
class Served:
    """What the suite's server saw of a client: its requests' CCE digest, their count, and
    how the client ended."""

    requests: int
    digest: str
    ended: Ended


def serve_client(
    impl, case: str, packed: bool, iterations: int, dialect: str,
    answer: Callable[[str, object, int], object] | None = None,
    digest_requests: int = 0, reuse: str = "no-reuse", timeout: float = RUN_TIMEOUT_S,
) -> Served:  # fmt: skip
    """Run `impl`'s client against the suite's server. `answer(case, request, i)` gives the
    response to request i (default: the right one); the CCE of the first `digest_requests`
    requests is hashed."""
    words = [case, "client", reuse, "packed" if packed else "none", str(iterations)]
    argv = [*impl.argv(), *words]
    wire = C.codec(dialect, packed)
    started = time.monotonic()
    p = popen(argv, impl.cwd())
    h = hashlib.sha256()
    n = 0
    timer = threading.Timer(timeout, lambda: os.killpg(p.pid, signal.SIGKILL))
    timer.start()
    try:
        while True:
            try:
                data = wire.read(p.stdout)
            except C.Truncated:
                break  # the client died mid-message: its exit status tells
            if data is None:
                break
            request = wire.decode_request(case, data)
            if n < digest_requests:
                h.update(R.cce_request(case, request))
            right = right_answer(case, request)
            reply = answer(case, request, n) if answer else right
            n += 1
            try:
                p.stdin.write(wire.encode_response(case, reply))
                p.stdin.flush()
            except BrokenPipeError:
                break
        try:
            p.stdin.close()
        except BrokenPipeError:
            pass
        ended = reap(p, argv, started, timeout)
    finally:
        timer.cancel()
        end(p)
    return Served(n, h.hexdigest(), ended)


def right_answer(case: str, request):
    if case == "carsales":
        return R.carsales_amount(request)
    if case == "catrank":
        return R.catrank_response(request)
    return R.evaluate(request)


# ---- the suite's client, for testing a server ------------------------------------------------


def ask_server(
    impl, case: str, packed: bool, requests: list, dialect: str, reuse: str = "no-reuse",
    timeout: float = RUN_TIMEOUT_S,
) -> tuple[list, Ended]:  # fmt: skip
    """Send `requests` (reference values) to `impl`'s server one at a time; return its decoded
    responses and how it ended after the suite closed its input."""
    words = [case, "server", reuse, "packed" if packed else "none", "1"]
    argv = [*impl.argv(), *words]
    wire = C.codec(dialect, packed)
    started = time.monotonic()
    p = popen(argv, impl.cwd())
    timer = threading.Timer(timeout, lambda: os.killpg(p.pid, signal.SIGKILL))
    timer.start()
    responses = []
    try:
        for i, request in enumerate(requests):
            try:
                p.stdin.write(wire.encode_request(case, request))
                p.stdin.flush()
            except BrokenPipeError:
                break
            try:
                data = wire.read(p.stdout)
            except C.Truncated:
                data = None
            if data is None:
                ended = reap(p, argv, started, timeout)
                raise AssertionError(f"no response to request {i}: {ended.describe()}")
            responses.append(wire.decode_response(case, data))
        p.stdin.close()
        ended = reap(p, argv, started, timeout)
    finally:
        timer.cancel()
        end(p)
    return responses, ended


def pair(client, server, case: str, packed: bool, iterations: int, reuse: str = "no-reuse",
         timeout: float = RUN_TIMEOUT_S) -> tuple[Ended, Ended]:  # fmt: skip
    """`client`'s client joined to `server`'s server by two pipes, as the driver does."""
    comp = "packed" if packed else "none"
    s_argv = [*server.argv(), case, "server", reuse, comp, str(iterations)]
    c_argv = [*client.client_argv(), case, "client", reuse, comp, str(iterations)]
    started = time.monotonic()
    s = popen(s_argv, server.cwd())
    c = subprocess.Popen(c_argv, cwd=client.cwd(), stdin=s.stdout, stdout=s.stdin,
                         stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    # The client holds the pipes now; the suite's copies would keep the server's input open.
    s.stdin.close()
    s.stdout.close()
    s.stdin = s.stdout = None
    try:
        ce = reap(c, c_argv, started, timeout)
        se = reap(s, s_argv, started, 15)
    finally:
        end(c, s)
    return ce, se
