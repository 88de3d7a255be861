"""The nativemsg soak: long-lived Native Messaging hosts fed mixed requests while the stdio side
misbehaves (no network: a host's peer is its parent's pipes).

One **long-lived host** (pinned to the implementation's CPU) serves the whole soak: a writer
thread pipelines ping / echo / fill requests (up to WINDOW outstanding, sometimes dribbled a few
bytes per write) and a reader thread checks every reply in order, while the supervisor injects
faults at random: the reader **stalls** (the host blocks on a full stdout pipe, then stops
reading), the reader takes **one byte per read**, and the host is paused with **SIGSTOP** and
resumed with SIGCONT. Every reply must be the right one (JSON-equal; fill exactly N bytes), and
no request is ever left unanswered while the pipe is open. At the end stdin is closed at a frame
boundary: the host must exit 0.

Beside it, **short-lived hosts** meet the pipe closed in the middle of a frame, alternately:
stdin closed inside a frame (after a good exchange), and stdout's read end closed inside a large
reply. Either way the host must exit 1 at once, by itself: not killed by a signal (SIGPIPE), no
panic or traceback on stderr (SPEC §3).
"""

from __future__ import annotations

import json
import os
import queue
import random
import select
import signal
import struct
import subprocess
import tempfile
import threading
import time

WINDOW = 4
STALL_S = 30.0
EXIT_WAIT_S = 10.0
CRASH_MARKS = ("Traceback", "panicked", "panic:", "goroutine ", "AddressSanitizer",
               "runtime error", "Segmentation fault", "core dumped")  # fmt: skip
FILL_MIN = 64  # below any host's smallest possible fill reply


def jeq(a, b) -> bool:
    """Equal as JSON (SPEC §2): same types, numbers as doubles, members as sets."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(jeq(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(jeq(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _text(rng: random.Random, n: int) -> str:
    alphabet = 'abc xyz"\\/\n\t\u00e9\u4e2d\U0001f600\u0001\u2028'
    return "".join(rng.choice(alphabet) for _ in range(n))


def json_value(rng: random.Random, depth: int = 0):
    r = rng.random()
    if depth >= 3 or r < 0.45:
        return rng.choice([
            lambda: rng.randint(-(2**53), 2**53), lambda: rng.randint(-1000, 1000) / 8,
            lambda: _text(rng, rng.randint(0, 40)), lambda: rng.random() < 0.5, lambda: None,
        ])()  # fmt: skip
    if r < 0.75:
        return [json_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return {_text(rng, rng.randint(1, 8)): json_value(rng, depth + 1)
            for _ in range(rng.randint(0, 5))}  # fmt: skip


def dumps(v, ascii_only: bool = True) -> bytes:
    """Compact JSON, as a browser sends it (the floor echoes bodies that start `{"op":"echo"`)."""
    return json.dumps(v, separators=(",", ":"), ensure_ascii=ascii_only).encode()


def frame(body: bytes) -> bytes:
    return struct.pack("<I", len(body)) + body


def request(rng: random.Random, baseline: bool) -> tuple[bytes, object]:
    """A request body and its check: a callable(reply body) -> error string or None."""
    r = rng.random()
    if r < 0.35:
        body = dumps({"op": "ping", "n": rng.randrange(1 << 30)})
        return body, _expect_json({"op": "pong"})
    if r < 0.8:
        big = rng.random() < 0.04
        # A large string of plain letters: every serialiser writes it at the same size, so the
        # reply stays under the 1 MiB cap whatever the host's escaping.
        data = "".join(rng.choices("abcdefghij", k=rng.randint(65536, 1_000_000))) if big else (
            json_value(rng))  # fmt: skip
        body = dumps({"op": "echo", "data": data}, ascii_only=rng.random() < 0.5)
        if baseline:
            return body, lambda got: None if got == body else "echo not returned byte for byte"
        return body, _expect_json({"op": "echo", "data": data})
    n = rng.randint(FILL_MIN, 4096) if rng.random() < 0.8 else rng.randint(4097, 1 << 20)
    body = dumps({"op": "fill", "bytes": n})
    if baseline:
        return body, _expect_json({"op": "pong"})

    def fill(got: bytes) -> str | None:
        if len(got) != n:
            return f"fill {n}: a reply of {len(got)} bytes"
        v = json.loads(got)
        if v.get("op") != "fill" or set(v.get("data", "?")) - {"x"}:
            return f"fill {n}: {got[:60]!r}"
        return None

    return body, fill


def _expect_json(want):
    def check(got: bytes) -> str | None:
        try:
            v = json.loads(got)
        except ValueError as e:
            return f"a reply that is not JSON ({e}): {got[:60]!r}"
        return None if jeq(v, want) else f"reply {got[:100]!r}, expected {json.dumps(want)[:100]}"

    return check


class LongHost:
    """The long-lived host, its writer and reader threads, and the faults they obey."""

    def __init__(self, argv: list[str], cwd: str, seed: int, baseline: bool) -> None:
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, start_new_session=True)  # fmt: skip
        self.rng = random.Random(seed)
        self.baseline = baseline
        self.pending: queue.Queue = queue.Queue()
        self.slots = threading.Semaphore(WINDOW)
        self.stop_writing = threading.Event()
        self.reader_mode = "normal"  # normal | stall | bytewise
        self.writer_dribble = False
        self.failures: list[str] = []
        self.sent = self.answered = 0
        self.last_reply = time.monotonic()
        self.paused = False
        self.writer = threading.Thread(target=self._write, daemon=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.writer.start()
        self.reader.start()

    def fail(self, msg: str) -> None:
        if len(self.failures) < 20:
            self.failures.append(msg)

    def _write(self) -> None:
        fd = self.proc.stdin.fileno()
        try:
            while not self.stop_writing.is_set():
                if not self.slots.acquire(timeout=0.2):
                    continue
                body, check = request(self.rng, self.baseline)
                self.pending.put((body[:80], check))
                data = frame(body)
                while data:
                    n = self.rng.randint(1, 7) if self.writer_dribble else len(data)
                    written = os.write(fd, data[:n])
                    data = data[written:]
                self.sent += 1
        except OSError as e:
            if self.proc.poll() is None:
                self.fail(f"writing a request failed: {e}")

    def _read_exact(self, fd: int, n: int) -> bytes | None:
        buf = bytearray()
        while len(buf) < n:
            while self.reader_mode == "stall":
                time.sleep(0.01)
            step = 1 if self.reader_mode == "bytewise" else n - len(buf)
            chunk = os.read(fd, min(step, 1 << 20))
            if not chunk:
                return None
            buf += chunk
        return bytes(buf)

    def _read(self) -> None:
        fd = self.proc.stdout.fileno()
        while True:
            head = self._read_exact(fd, 4)
            if head is None:
                return
            n = struct.unpack("<I", head)[0]
            if n > (1 << 20):
                self.fail(f"a reply length of {n} bytes (over the 1 MiB cap)")
                return
            body = self._read_exact(fd, n)
            if body is None:
                self.fail("stdout ended inside a reply")
                return
            try:
                what, check = self.pending.get_nowait()
            except queue.Empty:
                self.fail(f"a reply to no request: {body[:60]!r}")
                continue
            problem = check(body)
            if problem:
                self.fail(f"to {what!r}: {problem}")
            self.answered += 1
            self.last_reply = time.monotonic()
            self.slots.release()

    def outstanding(self) -> int:
        return self.pending.qsize()

    def pause(self, seconds: float) -> None:
        self.paused = True
        os.kill(self.proc.pid, signal.SIGSTOP)
        time.sleep(seconds)
        os.kill(self.proc.pid, signal.SIGCONT)
        self.paused = False
        self.last_reply = max(self.last_reply, time.monotonic() - 0.001)

    def stalled(self) -> bool:
        """Requests outstanding, the reader reading, and no reply for STALL_S."""
        return (self.outstanding() > 0 and self.reader_mode == "normal" and not self.paused
                and time.monotonic() - self.last_reply > STALL_S)  # fmt: skip

    def finish(self) -> dict:
        """Stop writing, take every outstanding reply, close stdin at a frame boundary: exit 0."""
        self.reader_mode = "normal"
        self.writer_dribble = False
        self.stop_writing.set()
        self.writer.join(STALL_S)
        deadline = time.monotonic() + STALL_S
        while self.outstanding() and time.monotonic() < deadline and self.proc.poll() is None:
            time.sleep(0.02)
        if self.outstanding():
            self.fail(f"{self.outstanding()} requests never answered")
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            status = self.proc.wait(EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            status = self.proc.wait()
            self.fail(f"did not exit within {EXIT_WAIT_S:.0f} s of EOF at a frame boundary")
        self.reader.join(5)
        stderr = _tail(self.err)
        if status != 0:
            self.fail(f"exit status {status} at EOF on a frame boundary (expected 0): {stderr}")
        return {"exit_status": status, "stderr_tail": stderr}

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, signal.SIGCONT)
                self.proc.kill()
            except ProcessLookupError:
                pass
            self.proc.wait()


def _tail(f, n: int = 400) -> str:
    f.seek(0)
    return f.read()[-n:].decode(errors="replace").strip()


def _judge_exit(proc: subprocess.Popen, err, what: str) -> str | None:
    """Exit 1 by itself within EXIT_WAIT_S, no signal, no crash text; else the problem."""
    try:
        status = proc.wait(EXIT_WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return f"{what}: still running {EXIT_WAIT_S:.0f} s later (killed)"
    text = _tail(err, 2000)
    crash = next((m for m in CRASH_MARKS if m in text), None)
    if status < 0:
        return f"{what}: killed by signal {signal.Signals(-status).name}"
    if crash:
        return f"{what}: exit {status} with {crash!r} on stderr: {text[-200:]}"
    if status != 1:
        return f"{what}: exit status {status}, expected 1 ({text[-200:]})"
    return None


def _recv(fd: int, n: int, timeout: float) -> bytes:
    """Up to `n` bytes (fewer at EOF), waiting at most `timeout` in all."""
    buf = bytearray()
    deadline = time.monotonic() + timeout
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"no reply within {timeout:.0f} s")
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            break
        buf += chunk
    return bytes(buf)


def close_mid_frame(argv: list[str], cwd: str, rng: random.Random, side: str) -> str | None:
    """One short-lived host meets a pipe closed inside a frame: `stdin` (the request is cut)
    or `stdout` (its reader goes away inside a large reply). None when it exits 1 cleanly."""
    err = tempfile.TemporaryFile()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=err, start_new_session=True, bufsize=0)  # fmt: skip
    out = proc.stdout.fileno()
    try:
        proc.stdin.write(frame(b'{"op":"ping"}'))
        head = _recv(out, 4, EXIT_WAIT_S)
        if len(head) < 4:
            return f"{side}: no reply to a ping (exit {proc.poll()})"
        _recv(out, struct.unpack("<I", head)[0], EXIT_WAIT_S)
        if side == "stdin":
            whole = frame(dumps({"op": "echo", "data": _text(rng, 300)}))
            cut = rng.choice((1, 2, 3, rng.randint(4, len(whole) - 1)))
            proc.stdin.write(whole[:cut])
            time.sleep(rng.uniform(0, 0.05))
            proc.stdin.close()
            return _judge_exit(proc, err, f"stdin closed {cut} bytes into a frame")
        writer = threading.Thread(
            target=_write_quietly,
            args=(proc.stdin, frame(dumps({"op": "echo", "data": "y" * 600_000}))),
            daemon=True,
        )
        writer.start()
        _recv(out, rng.randint(1, 20000), EXIT_WAIT_S)
        proc.stdout.close()  # the reader goes away inside the reply; stdin stays open
        return _judge_exit(proc, err, "stdout closed inside a 600 kB reply")
    except (OSError, TimeoutError) as e:
        return f"{side}: the host went away early or stopped answering ({e}; exit {proc.poll()})"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for f in (proc.stdin, proc.stdout):
            try:
                f.close()
            except OSError:
                pass


def _write_quietly(f, data: bytes) -> None:
    try:
        f.write(data)
    except OSError:
        pass
