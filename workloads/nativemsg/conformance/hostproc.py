"""Start a Native Messaging host exactly as a browser does, and talk to it without ever hanging.

A browser starts the host with stdin/stdout pipes, `argv[1]` = the caller's origin, and the
host's folder as cwd; stderr goes to the browser's log (here: a temporary file, so a chatty host
can never block on a full stderr pipe). Every wait in this module is bounded: reads poll with a
deadline, writes are non-blocking and drain the host's stdout while they wait (a host that
answers frame 1 while we are still writing frame 1000 must not deadlock the test), and the
process is killed on teardown whatever happened.

Failures are raised as AssertionError with the host's status and stderr in the message, so a
broken host shows up as a failed test that says what it did, never as a hung test.
"""

from __future__ import annotations

import os
import select
import signal
import struct
import subprocess
import tempfile
import time

from jsoneq import parse_reply

#: Host -> browser cap (SPEC §1): Chromium delivers 1,048,576 bytes and drops the port at one more.
MAX_REPLY = 1024 * 1024
#: Browser -> host cap (SPEC §1).
MAX_REQUEST = 64 * 1024 * 1024
#: Every single wait for the host (one reply, one exit) is bounded by this many seconds.
TIMEOUT = 10.0
#: How long a host may take to exit once its stream is over (EOF or an oversized length).
EXIT_TIMEOUT = 5.0

#: Text that only a crash prints: Rust panic, Python traceback, Go panic, C/C++ fatal signals,
#: uncaught C++ exceptions, sanitizers. A clean error message never contains these.
CRASH_SIGNATURES = (
    "panicked at",
    "Traceback",
    "goroutine ",
    "panic: ",
    "Segmentation",
    "core dumped",
    "terminate called",
    "has overflowed its stack",
    "AddressSanitizer",
    "Aborted",
)

_READ_CHUNK = 1 << 20


def frame(body: bytes) -> bytes:
    """One frame as a browser writes it: 4-byte unsigned little-endian length + body."""
    return struct.pack("<I", len(body)) + body


def header(length: int) -> bytes:
    """Only the 4-byte length prefix (for oversized-length and EOF-inside-a-frame tests)."""
    return struct.pack("<I", length)


def describe_length_prefix(prefix: bytes, following: bytes) -> str:
    """Explain a reply length prefix over the 1 MiB cap: name the classic bug it shows.
    (An 8-byte length shows up differently: as a body starting with four zero bytes, see
    jsoneq.parse_reply.)"""
    n = struct.unpack("<I", prefix)[0]
    hints = []
    if struct.unpack(">I", prefix)[0] <= MAX_REPLY:
        hints.append(
            f"read as big-endian it is {struct.unpack('>I', prefix)[0]}: "
            "the host writes the length in big-endian (network) order, not native order"
        )
    if all(32 <= b < 127 or b in b"\t\r\n" for b in prefix):
        text = (prefix + following).decode("ascii", "replace")
        hints.append(f"it is text ({text!r}…): the host writes text or logs to stdout")
    if not hints and n <= MAX_REQUEST:
        hints.append("the host sent a reply larger than 1 MiB instead of an error reply")
    hint = "; ".join(hints) or "the bytes on stdout are not a frame header"
    return f"reply length prefix {prefix.hex(' ')} (= {n} as u32 LE): {hint}"


class HostProcess:
    """One running host process. Use as a context manager, or call kill() when done."""

    def __init__(
        self,
        argv: list[str],
        cwd: str,
        timeout: float = TIMEOUT,
        exit_timeout: float = EXIT_TIMEOUT,
        env: dict | None = None,
    ):
        self.argv = list(argv)
        self.cwd = cwd
        self.timeout = timeout  # default bound of one send or one reply
        self.exit_timeout = exit_timeout  # default bound of waiting for the exit
        self._stderr = tempfile.TemporaryFile(prefix="nativemsg-host-stderr-")
        self.proc = subprocess.Popen(
            self.argv,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            bufsize=0,
            close_fds=True,
            # Like a browser's child: default SIGPIPE, so a host writing to a closed pipe dies
            # the way it would under Chromium.
            restore_signals=True,
        )
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        self._buf = bytearray()  # stdout bytes received and not yet consumed by read_*()
        self.transcript = bytearray()  # every byte the host ever wrote to stdout
        self.stdout_closed = False
        self.stdin_closed = False

    # ----------------------------------------------------------------- context management

    def __enter__(self) -> HostProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.kill()

    def kill(self) -> None:
        """Teardown: SIGKILL the host if it still runs (as a browser does ~2 s after disconnect)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        self.stdin_closed = True
        self._stderr.close()

    # ----------------------------------------------------------------- diagnostics

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def stderr_text(self) -> str:
        if self._stderr.closed:
            return ""
        self._stderr.flush()
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def describe(self) -> str:
        """Status and stderr tail, appended to every failure message."""
        rc = self.proc.poll()
        if rc is None:
            status = "still running"
        elif rc < 0:
            try:
                status = f"killed by signal {signal.Signals(-rc).name}"
            except ValueError:
                status = f"killed by signal {-rc}"
        else:
            status = f"exited with status {rc}"
        err = self.stderr_text().strip()
        if len(err) > 2000:
            err = "…" + err[-2000:]
        return f"[host {status}; stderr: {err!r}]"

    # ----------------------------------------------------------------- sending

    def send(self, data: bytes, timeout: float | None = None) -> None:
        """Write raw bytes to the host's stdin, draining its stdout meanwhile (never deadlocks)."""
        timeout = timeout or self.timeout
        view = memoryview(data)
        deadline = time.monotonic() + timeout
        poller = select.poll()
        poller.register(self._in, select.POLLOUT)
        if not self.stdout_closed:
            poller.register(self._out, select.POLLIN)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"host stopped reading stdin: {len(view)} of {len(data)} bytes unsent after "
                    f"{timeout:g} s {self.describe()}"
                )
            for fd, event in poller.poll(remaining * 1000):
                if fd == self._out:
                    if not self._pull():
                        poller.unregister(self._out)
                    continue
                if event & (select.POLLERR | select.POLLHUP) and not event & select.POLLOUT:
                    raise self._gone("while we were writing a request")
                try:
                    written = os.write(self._in, view[: 1 << 20])
                except BlockingIOError:
                    continue
                except BrokenPipeError:
                    raise self._gone("while we were writing a request") from None
                view = view[written:]

    def send_frame(self, body: bytes, timeout: float | None = None) -> None:
        self.send(frame(body), timeout)

    def send_in_pieces(self, data: bytes, cuts: list[int], pause: float = 0.002) -> None:
        """Write data split at the given offsets, sleeping between writes so the host really
        sees separate short reads (a pipe would otherwise merge them)."""
        start = 0
        for cut in [*cuts, len(data)]:
            if cut > start:
                self.send(data[start:cut])
                start = cut
                if cut < len(data):
                    time.sleep(pause)

    def close_stdin(self) -> None:
        """Disconnect, as a browser does: close the host's stdin."""
        if not self.stdin_closed:
            self.stdin_closed = True
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass

    def close_stdout(self) -> None:
        """Stop reading replies: close our end of the host's stdout (its writes then fail)."""
        if not self.stdout_closed:
            self.stdout_closed = True
            self.proc.stdout.close()

    # ----------------------------------------------------------------- receiving

    def _pull(self, timeout: float = 0.0) -> bool:
        """Read what stdout has (waiting up to timeout). False once stdout is at EOF."""
        if self.stdout_closed:
            return False
        ready, _, _ = select.select([self._out], [], [], max(timeout, 0.0))
        if not ready:
            return True
        chunk = os.read(self._out, _READ_CHUNK)
        if not chunk:
            self.stdout_closed = True
            return False
        self._buf += chunk
        self.transcript += chunk
        return True

    def _gone(self, when: str) -> AssertionError:
        try:
            self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass
        return AssertionError(f"host closed its stdin/stdout {when} {self.describe()}")

    def _need(self, n: int, deadline: float, timeout: float, what: str) -> None:
        while len(self._buf) < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"no complete {what} within {timeout:g} s (got {len(self._buf)} of {n} "
                    f"bytes): the host hangs or does not flush stdout after each reply "
                    f"{self.describe()}"
                )
            if not self._pull(remaining):
                raise self._gone(f"before a complete {what} ({len(self._buf)} of {n} bytes)")

    def read_frame(self, timeout: float | None = None) -> bytes:
        """One reply frame's body. Fails on a timeout, EOF, or a length prefix over 1 MiB."""
        timeout = timeout or self.timeout
        deadline = time.monotonic() + timeout
        self._need(4, deadline, timeout, "reply length prefix")
        prefix = bytes(self._buf[:4])
        n = struct.unpack("<I", prefix)[0]
        if n > MAX_REPLY:
            self._pull(0.2)
            raise AssertionError(
                f"reply frame over the 1 MiB host→browser cap (Chromium drops the port): "
                f"{describe_length_prefix(prefix, bytes(self._buf[4:24]))} {self.describe()}"
            )
        self._need(4 + n, deadline, timeout, f"reply body of {n} bytes")
        body = bytes(self._buf[4 : 4 + n])
        del self._buf[: 4 + n]
        return body

    def read_reply(self, timeout: float | None = None):
        """One reply, parsed strictly as a JSON object (see jsoneq.parse_reply)."""
        return parse_reply(self.read_frame(timeout), self.describe)

    def request(self, body: bytes, timeout: float | None = None):
        """Send one request frame and return its parsed reply."""
        self.send_frame(body, timeout)
        return self.read_reply(timeout)

    def unread_stdout(self) -> bytes:
        return bytes(self._buf)

    # ----------------------------------------------------------------- exit

    def wait_exit(self, timeout: float | None = None, why: str = "") -> int:
        """Wait for the host to exit (stdin left as it is), collecting any stdout it writes."""
        timeout = timeout or self.exit_timeout
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"host still running {timeout:g} s after {why or 'the end of its input'} "
                    f"{self.describe()}"
                )
            if self.stdout_closed:
                time.sleep(min(remaining, 0.005))
            else:
                self._pull(min(remaining, 0.05))
        # The process is gone; collect what it wrote before exiting (bounded).
        end = time.monotonic() + 1.0
        while not self.stdout_closed and time.monotonic() < end:
            self._pull(0.05)
        return self.proc.returncode

    def finish(self, timeout: float | None = None) -> int:
        """Close stdin (disconnect) and wait for the exit status."""
        self.close_stdin()
        return self.wait_exit(timeout, "stdin was closed")

    # ----------------------------------------------------------------- common assertions

    def assert_no_crash(self) -> None:
        """No signal death and no panic/traceback/segfault text on stderr."""
        rc = self.proc.poll()
        assert rc is None or rc >= 0, f"host was killed by a signal {self.describe()}"
        err = self.stderr_text()
        for sig in CRASH_SIGNATURES:
            assert sig not in err, f"crash signature {sig!r} on stderr {self.describe()}"
