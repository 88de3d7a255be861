"""A small correct capnp benchmark program for the suite's self-test (test_selftest.py), built
on the suite's own model (reference.py) and codec (codec.py, pycapnp), with one classic mistake
injected by `--bug NAME` (`--list-bugs` names them). Not an implementation: it is slow, and it
exists so that every test of the suite is seen to fail when the mistake it targets is made.

    impl.py [--bug NAME] CASE MODE REUSE COMPRESSION ITERS
"""

from __future__ import annotations

import json
import os
import resource
import struct
import subprocess
import sys
import time

START = time.monotonic()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import codec as C  # noqa: E402
import reference as R  # noqa: E402

BUGS = {
    "wrong-seed": "the generator's x word seeded 0x1d2acd48",
    "skips-warmup": "no warm-up iterations (and the report says 0)",
    "amount-off-by-one": "carsales: the server answers the sum + 1",
    "div-zero-zero": "eval: divide by zero gives 0, not INT32_MAX",
    "trusting-client": "the client never checks a response",
    "answers-truncated": "end of input inside a message is taken as a clean end (exit 0)",
    "crash-on-unknown-op": "eval: an unknown operation kills the server with SIGSEGV",
    "cat-without-spaces": "catrank: 'cat' anywhere in the snippet counts, not ' cat '",
    "bad-args-exit-1": "a bad command line exits 1, not 2",
    "no-served-line": 'the server does not print {"served": N} at the end of input',
    "no-response-cap": "the server writes a response of any size (SPEC §6: at most 8 Mi words)",
}
USAGE = (
    "usage: impl.py [--bug NAME] carsales|catrank|eval object|bytes|pipe|client|server "
    "reuse|no-reuse none|packed ITERS"
)


class Refused(Exception):
    pass


def main(argv: list[str]) -> int:
    bug = None
    if argv[:1] == ["--list-bugs"]:
        print(" ".join(BUGS))
        return 0
    if argv[:1] == ["--bug"]:
        bug, argv = argv[1], argv[2:]
        if bug not in BUGS:
            print(f"unknown bug {bug}", file=sys.stderr)
            return 2
    bad = 1 if bug == "bad-args-exit-1" else 2
    if len(argv) != 5:
        print(USAGE, file=sys.stderr)
        return bad
    case, mode, reuse, comp, iters = argv
    ok = (case in ("carsales", "catrank", "eval")
          and mode in ("object", "bytes", "pipe", "client", "server")
          and reuse in ("reuse", "no-reuse") and comp in ("none", "packed")
          and iters.isdigit() and 1 <= int(iters) <= 1_000_000_000
          and not (mode == "object" and comp == "packed"))  # fmt: skip
    if not ok:
        print(f"bad arguments {argv}\n{USAGE}", file=sys.stderr)
        return bad
    program = Program(bug, case, mode, reuse, comp, int(iters))
    try:
        return program.run()
    except (Refused, C.Truncated, ValueError, Exception) as e:  # noqa: BLE001 - one line, exit 1
        if isinstance(e, C.Truncated) and bug == "answers-truncated":
            return 0
        print(f"impl.py {mode}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


class Program:
    def __init__(self, bug, case, mode, reuse, comp, iters) -> None:
        self.bug, self.case, self.mode, self.reuse, self.comp = bug, case, mode, reuse, comp
        self.iters = iters
        self.warmup = 0 if bug == "skips-warmup" else iters // 20
        self.rng = R.Rng()
        if bug == "wrong-seed":
            self.rng.x = 0x1D2ACD48
        self.wire = C.CapnpCodec(comp == "packed")

    # the three cases ---------------------------------------------------------------------------

    def request(self):
        make = {"carsales": R.carsales_request, "catrank": R.catrank_request,
                "eval": R.eval_request}[self.case]  # fmt: skip
        return make(self.rng)

    def serve(self, request):
        if self.case == "carsales":
            return R.carsales_amount(request) + (1 if self.bug == "amount-off-by-one" else 0)
        if self.case == "catrank":
            if self.bug == "cat-without-spaces":
                out = []
                for r in request:
                    s = r.score * (10000 if "cat" in r.snippet else 1)
                    s = s / 10000 if " dog " in r.snippet else s
                    out.append(R.SearchResult(r.url, s, r.snippet))
                return sorted(out, key=lambda r: -r.score)
            return R.catrank_response(request)
        return self.evaluate(request)

    def evaluate(self, e):
        if isinstance(e, int):
            return e
        if not 0 <= e.op <= 4:
            if self.bug == "crash-on-unknown-op":
                os.kill(os.getpid(), 11)
            raise Refused(f"operation {e.op} is not 0-4")
        a, b = self.evaluate(e.left), self.evaluate(e.right)
        if self.bug == "div-zero-zero" and e.op == 3 and b == 0:
            return 0
        return R.apply(e.op, a, b)

    def check(self, expected, got, i) -> None:
        if self.bug == "trusting-client":
            return
        if self.case == "catrank":
            got = R.catrank_good(got)
        if got != expected:
            raise Refused(f"iteration {i}: expected {expected}, got {got}")

    # modes ------------------------------------------------------------------------------------

    def run(self) -> int:
        if self.mode == "server":
            return self.run_server()
        total = self.warmup + self.iters
        moved = [0, 0]
        child = None
        if self.mode == "pipe":
            child = subprocess.Popen([sys.executable, os.path.abspath(__file__),
                                      *(["--bug", self.bug] if self.bug else []), self.case,
                                      "server", self.reuse, self.comp, str(self.iters)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
            out, inp = child.stdin, child.stdout
        elif self.mode == "client":
            out, inp = sys.stdout.buffer, sys.stdin.buffer
        setup = time.monotonic() - START
        t0 = time.monotonic()
        for i in range(total):
            if i == self.warmup:
                t_warm = time.monotonic() - t0
                t0, cpu0, moved = time.monotonic(), cpu(), [0, 0]
            request, expected = self.request()
            if self.mode == "object":
                answer = self.serve(request)
            elif self.mode == "bytes":
                data = self.wire.encode_request(self.case, request)
                back = self.wire.decode_request(self.case, self.wire.read(_Bytes(data)))
                rdata = self.wire.encode_response(self.case, self.serve(back))
                answer = self.wire.decode_response(self.case, self.wire.read(_Bytes(rdata)))
                moved = [moved[0] + len(data), moved[1] + len(rdata)]
            else:
                data = self.wire.encode_request(self.case, request)
                out.write(data)
                out.flush()
                rdata = self.wire.read(inp)
                if rdata is None:
                    raise Refused("the server closed the pipe")
                answer = self.wire.decode_response(self.case, rdata)
                moved = [
                    moved[0] + len(data),
                    moved[1] + len(C.pack(rdata) if self.comp == "packed" else rdata),
                ]
            self.check(expected, answer, i)
        if self.warmup == 0:
            t_warm, cpu0 = 0.0, cpu()
        elapsed = time.monotonic() - t0
        report = {"program": "selftest", "library": "pycapnp (the suite's codec)",
                  "case": self.case, "mode": self.mode, "reuse": self.reuse,
                  "compression": self.comp, "iterations": self.iters, "warmup": self.warmup,
                  "setup_s": setup, "warmup_s": t_warm, "elapsed_s": elapsed,
                  "cpu_s": cpu() - cpu0, "request_bytes": moved[0],
                  "response_bytes": moved[1], "checked": total}  # fmt: skip
        if child is not None:
            child.stdin.close()
            _, status, usage = os.wait4(child.pid, 0)
            if status != 0:
                raise Refused(f"the server exited with status {status}")
            report["server_cpu_s"] = usage.ru_utime + usage.ru_stime
        print(json.dumps(report), file=sys.stderr if self.mode == "client" else sys.stdout)
        return 0

    def run_server(self) -> int:
        inp, out, n = sys.stdin.buffer, sys.stdout.buffer, 0
        reader = StrictReader(inp, self.comp == "packed")
        while True:
            data = reader.read()
            if data is None:
                break
            # SPEC §6: no response beyond the cap is written; catrank's is not even built.
            capped = self.bug != "no-response-cap"
            if capped and self.case == "catrank":
                words = catrank_response_words(data)
                if words > C.CAP_WORDS:
                    raise Refused(f"a response of at least {words} words (at most {C.CAP_WORDS})")
            request = self.wire.decode_request(self.case, data)
            response = self.wire.encode_response(self.case, self.serve(request))
            words = framed_words(response, self.comp == "packed")
            if capped and words > C.CAP_WORDS:
                raise Refused(f"a response of {words} words (at most {C.CAP_WORDS})")
            out.write(response)
            out.flush()
            n += 1
        if self.bug != "no-served-line":
            print(json.dumps({"served": n}), file=sys.stderr)
        return 0


def catrank_response_words(data: bytes) -> int:
    """The least words of the response to the catrank request in `data` (unpacked), counted
    from the request before anything is decoded or built: the root pointer, the root struct,
    the list's tag, and each result's struct (3 words) and two texts (the bytes and the NUL in
    whole words, one for an empty text, as pycapnp writes it); landing pads left out."""
    with C.catrank_capnp.SearchResultList.from_bytes(
        data, traversal_limit_in_words=C.CAP_WORDS, nesting_limit=64
    ) as r:
        return 3 + sum(3 + text_words(x.url) + text_words(x.snippet) for x in r.results)


def text_words(text: str) -> int:
    """A Text's words in a message: its UTF-8 bytes and the NUL, in whole words."""
    return (len(text.encode()) + 8) // 8


def framed_words(data: bytes, packed: bool) -> int:
    """The words of a framed message, summed from its segment table, as every reader sums them."""
    if packed:
        unpacker = C.Unpacker(_Bytes(data))
        first = unpacker.read_words(1)
        count, rest = C.frame_words(first)
        table = first + (unpacker.read_words(rest) if rest else b"")
    else:
        table = data
        count = struct.unpack_from("<I", table)[0] + 1
    return sum(struct.unpack_from(f"<{count}I", table, 4))


class StrictReader:
    """Messages from a stream with SPEC §6's limits checked before anything is read whole; a
    packed run must end on the message's boundary."""

    def __init__(self, stream, packed: bool) -> None:
        self.stream, self.packed = stream, packed

    def words(self, n: int, at_start: bool = False) -> bytes | None:
        if not self.packed:
            data = self.stream.read(8 * n)
            if at_start and not data:
                return None
            if len(data) < 8 * n:
                raise C.Truncated("end of input inside a message")
            return data
        out = bytearray()
        while len(out) < 8 * n:
            tag = self.stream.read(1)
            if not tag:
                if at_start and not out:
                    return None
                raise C.Truncated("end of input inside a packed message")
            word = bytearray(8)
            for b in range(8):
                if tag[0] & (1 << b):
                    word[b] = C.read_exact(self.stream, 1)[0]
            out += word
            if tag[0] in (0, 0xFF):
                run = C.read_exact(self.stream, 1)[0]
                if len(out) + 8 * run > 8 * n:
                    raise Refused("a packed run goes past the end of the message")
                out += bytes(8 * run) if tag[0] == 0 else C.read_exact(self.stream, 8 * run)
        return bytes(out)

    def read(self) -> bytes | None:
        first = self.words(1, at_start=True)
        if first is None:
            return None
        count = struct.unpack_from("<I", first)[0] + 1
        if count > C.MAX_SEGMENTS:
            raise Refused(f"{count} segments (at most {C.MAX_SEGMENTS})")
        rest = (4 * (count + 1) + 7) // 8 - 1
        table = first + (self.words(rest) if rest else b"")
        total = sum(struct.unpack_from(f"<{count}I", table, 4))
        if total > C.CAP_WORDS:
            raise Refused(f"a message of {total} words (at most {C.CAP_WORDS})")
        return table + (self.words(total) if total else b"")


class _Bytes:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def read(self, n: int) -> bytes:
        chunk = self.data[self.at : self.at + n]
        self.at += len(chunk)
        return chunk


def cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
