"""The black boxes and the test's own UDP peers: fresh loopback addresses, a node process started
from its manifest (READY, counters on SIGTERM), a controller run, sockets with bounded waits, and
a fake node the test controls.

Addresses: every node, peer and fake node gets a random address of 127.64.0.0/10 (port 3610 is
fixed by the SPEC, so two stacks need two addresses; random ones keep parallel sessions apart).
A bind that fails because the address is taken is retried with another.
"""

from __future__ import annotations

import errno
import json
import os
import queue
import random
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable

import echonet_spec as S

START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 3.0
REPLY_TIMEOUT_S = 1.0
_BLOCK = (0x7F400000, 0x7F7FFFFF)  # 127.64.0.0/10


def fresh_addr() -> str:
    while True:
        n = random.randint(*_BLOCK)
        if n & 0xFF not in (0, 255):
            return socket.inet_ntoa(n.to_bytes(4, "big"))


def bind_udp(port: int = S.PORT, addr: str | None = None) -> socket.socket:
    """A UDP socket bound to a fresh loopback address (or `addr`) and `port` (0: any)."""
    for _ in range(20):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        try:
            s.bind((addr or fresh_addr(), port))
            return s
        except OSError as e:
            s.close()
            if e.errno != errno.EADDRINUSE or addr is not None:
                raise
    raise AssertionError("no free loopback address found in 20 tries")


# ---- the node ------------------------------------------------------------------------------


class Node:
    """A node process: `argv` + --bind ADDR --ifaddr ADDR --port 3610 (or `args` instead)."""

    def __init__(self, argv: list[str], cwd: str, addr: str | None = None,
                 args: list[str] | None = None, wrap: Callable | None = None,
                 attempts: int = 5) -> None:  # fmt: skip
        for attempt in range(attempts):
            self.addr = addr or fresh_addr()
            own = args if args is not None else ["--bind", self.addr, "--ifaddr", self.addr,
                                                 "--port", str(S.PORT)]  # fmt: skip
            self.argv = list(argv) + own
            self._start(wrap(self.argv) if wrap else self.argv, cwd)
            if self._wait_ready():
                return
            status = self.proc.returncode
            if status == 1 and addr is None and attempt + 1 < attempts:
                continue  # the random address is taken (another session): take another
            raise AssertionError(
                f"node exited with status {status} before READY: {' '.join(self.argv)}\n"
                f"stdout: {self.stdout_lines}\nstderr: {self.stderr_tail()}"
            )

    def _start(self, argv: list[str], cwd: str) -> None:
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.err,
            start_new_session=True,
        )  # fmt: skip
        self.stdout_lines: list[str] = []
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read_stdout, daemon=True).start()

    def _read_stdout(self) -> None:
        for raw in self.proc.stdout:
            self._lines.put(raw.decode(errors="replace"))
        self._lines.put(None)  # EOF

    def _next_line(self, deadline: float) -> str | None:
        """The next stdout line; None at EOF or when the deadline passes."""
        try:
            line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if line is not None:
            self.stdout_lines.append(line)
        return line

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + START_TIMEOUT_S
        line = self._next_line(deadline)
        if line is None:
            if self.proc.poll() is None and time.monotonic() >= deadline:
                self.kill()
                raise AssertionError(f"no READY within {START_TIMEOUT_S} s: {self.argv}")
            self.proc.wait(STOP_TIMEOUT_S)
            return False
        if line.rstrip("\r\n") != "READY":
            self.kill()
            raise AssertionError(f"the first line on stdout is {line!r}, not READY")
        return True

    def stderr_tail(self, n: int = 2000) -> str:
        if self.err.closed:
            return "(stderr no longer kept)"
        self.err.seek(0)
        return self.err.read()[-n:].decode(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int | None, list[str]]:
        """Send `sig`; return (exit status or None if it did not exit, stdout lines after
        READY)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            status = self.proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            return None, self.stdout_lines[1:]
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while self._next_line(deadline) is not None:
            pass
        return status, self.stdout_lines[1:]

    def counters(self, sig: int = signal.SIGTERM) -> dict:
        """Stop the node and return its counters, checking SPEC §7's shape on the way."""
        status, lines = self.stop(sig)
        assert status == 0, f"exit status {status} after signal {sig}:\n{self.stderr_tail()}"
        return parse_counters(lines)

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.err.close()


COUNTERS = ("received", "requests", "replies", "ignored", "dropped_malformed",
            "dropped_format2", "send_errors")  # fmt: skip


def parse_counters(lines: list[str]) -> dict:
    assert len(lines) == 1, f"expected one line of JSON after READY, got {lines!r}"
    doc = json.loads(lines[0])
    missing = [k for k in COUNTERS if k not in doc]
    assert not missing, f"counters missing: {missing} in {doc}"
    bad = {k: doc[k] for k in COUNTERS if type(doc[k]) is not int or doc[k] < 0}
    assert not bad, f"counters that are not non-negative integers: {bad}"
    parts = doc["requests"] + doc["ignored"] + doc["dropped_malformed"] + doc["dropped_format2"]
    assert doc["received"] == parts, (
        f"received {doc['received']} != requests + ignored + dropped_malformed + "
        f"dropped_format2 = {parts}: {doc}"
    )
    return doc


# ---- the test's own peer -------------------------------------------------------------------


class Peer:
    """A UDP socket of the test, on a fresh loopback address: asks a node and reads replies."""

    def __init__(self, port: int = 0, addr: str | None = None) -> None:
        self.sock = bind_udp(port, addr)
        self.addr, self.port = self.sock.getsockname()
        self._fence_tid = 0xFE00

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send(self, node_addr: str, data: bytes, port: int = S.PORT) -> None:
        self.sock.sendto(data, (node_addr, port))

    def recv(self, timeout: float = REPLY_TIMEOUT_S) -> tuple[bytes, tuple] | None:
        """The next datagram and its source, or None when none came within `timeout`."""
        self.sock.settimeout(timeout)
        try:
            data, src = self.sock.recvfrom(1 << 16)
        except TimeoutError:
            return None
        return data, src

    def ask(self, node_addr: str, data: bytes, timeout: float = REPLY_TIMEOUT_S) -> bytes:
        """Send one request and return the one reply, which must come from node_addr:3610."""
        self.send(node_addr, data)
        got = self.recv(timeout)
        assert got is not None, f"no reply within {timeout} s to {data.hex(' ')}"
        reply, src = got
        assert src == (node_addr, S.PORT), f"reply from {src}, not from the node at " \
                                           f"{node_addr}:{S.PORT}"  # fmt: skip
        return reply

    def fence(self, node_addr: str, timeout: float = REPLY_TIMEOUT_S) -> None:
        """Ask the node a Get of 0x80 and require that its reply is the NEXT datagram to arrive.
        A node reads its socket in order and answers as it goes, so anything it wrongly sent
        for an earlier datagram arrives first: a 'no reply' is proven without waiting out a
        timeout."""
        self._fence_tid += 1
        req = S.get_request(self._fence_tid, S.NODE_PROFILE, [0x80])
        want = S.get_reply(req, S.NODE_PROFILE, {0x80: S.h("30")}, [0x80])
        self.send(node_addr, req)
        got = self.recv(timeout)
        assert got is not None, "the node did not answer a Get of 0x80 (the fence)"
        assert got[0] == want, (
            f"the node sent a datagram it should not have: {got[0].hex(' ')} "
            f"(expected nothing before the fence's reply {want.hex(' ')})"
        )

    def assert_no_reply(self, node_addr: str, data: bytes, what: str = "") -> None:
        """Send `data`; the node must not answer it (checked with a fence)."""
        self.send(node_addr, data)
        try:
            self.fence(node_addr)
        except AssertionError as e:
            raise AssertionError(f"{what or data[:40].hex(' ')}: {e}") from None

    def drain(self, quiet: float = 0.05) -> list[bytes]:
        out = []
        while (got := self.recv(quiet)) is not None:
            out.append(got[0])
        return out


# ---- a controller run ----------------------------------------------------------------------


class ControllerRun:
    def __init__(self, proc: subprocess.CompletedProcess, argv: list[str]) -> None:
        self.status = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.argv = argv

    def __repr__(self) -> str:
        return (f"`{' '.join(self.argv)}` exit {self.status}\nstdout: {self.stdout[-800:]!r}\n"
                f"stderr: {self.stderr[-800:]!r}")  # fmt: skip

    def json(self) -> dict:
        lines = [ln for ln in self.stdout.splitlines() if ln.strip()]
        assert len(lines) == 1, f"expected one JSON document on stdout: {self!r}"
        try:
            return json.loads(lines[0])
        except json.JSONDecodeError as e:
            raise AssertionError(f"stdout is not JSON ({e}): {self!r}") from None

    def ok(self) -> dict:
        assert self.status == 0, f"controller failed: {self!r}"
        doc = self.json()
        assert "error" not in doc, f"controller reported an error: {self!r}"
        return doc


def run_controller(client, args: list[str], bind: str | None = None, timeout: float = 20,
                   wrap: Callable | None = None) -> ControllerRun:  # fmt: skip
    """`client`'s controller program: client_argv() + [--bind ADDR] + args. A controller that
    does not finish within `timeout` fails the test (a hang is a bug, e.g. unbounded retries)."""
    argv = list(client.client_argv()) + (["--bind", bind] if bind else []) + list(args)
    run = wrap(argv) if wrap else argv
    try:
        p = subprocess.run(run, cwd=client.cwd(), capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)  # fmt: skip
    except subprocess.TimeoutExpired as e:
        raise AssertionError(
            f"the controller did not finish within {timeout} s (a hang, or retries without "
            f"bound): {' '.join(argv)}\nstdout: {e.stdout!r}"
        ) from None
    return ControllerRun(p, argv)


def start_controller(client, args: list[str], bind: str) -> subprocess.Popen:
    argv = list(client.client_argv()) + ["--bind", bind] + list(args)
    return subprocess.Popen(argv, cwd=client.cwd(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip


# ---- a fake node the test controls ---------------------------------------------------------

Answer = tuple[float, bytes, "socket.socket | None"]  # (delay s, datagram, from which socket)


class FakeNode:
    """A socket on ADDR:3610 that records what a controller sends and answers as `respond`
    says: respond(datagram, index) -> [(delay_s, reply bytes, socket or None = this one)].
    `others` are extra sockets on other addresses (port 3610) to answer from the wrong source."""

    def __init__(self, respond: Callable[[bytes, int], list[Answer]] | None = None,
                 others: int = 0, port: int = S.PORT) -> None:  # fmt: skip
        self.sock = bind_udp(port)
        self.addr = self.sock.getsockname()[0]
        self.others = [bind_udp(S.PORT) for _ in range(others)]
        self.respond = respond or (lambda data, i: [])
        self.received: list[tuple[float, bytes, tuple]] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        pending: list[tuple[float, bytes, socket.socket, tuple]] = []
        self.sock.settimeout(0.01)
        while not self._stop.is_set():
            now = time.monotonic()
            for item in [p for p in pending if p[0] <= now]:
                pending.remove(item)
                try:
                    item[2].sendto(item[1], item[3])
                except OSError as e:
                    self.errors.append(f"send: {e}")
            try:
                data, src = self.sock.recvfrom(1 << 16)
            except TimeoutError:
                continue
            except OSError:
                return
            index = len(self.received)
            self.received.append((time.monotonic(), data, src))
            try:
                answers = self.respond(data, index)
            except Exception as e:  # reported by the test (assert_clean)
                self.errors.append(f"respond({data.hex()}): {e!r}")
                continue
            t = time.monotonic()
            for delay, out, sock in answers:
                pending.append((t + delay, out, sock or self.sock, src))

    def datagrams(self) -> list[bytes]:
        return [d for _, d, _ in self.received]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        for s in [self.sock, *self.others]:
            s.close()

    def __enter__(self) -> FakeNode:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def node_answers(addr: str):
    """A `respond` that answers Gets of the node profile and the air conditioner like a correct
    node (the table values of echonet_spec), once per request."""
    objs = S.objects(addr)

    def respond(data: bytes, index: int) -> list[Answer]:
        f = S.decode(data)
        if f.esv != S.GET or f.deoj not in objs:
            return []
        return [(0.0, S.get_reply(data, f.deoj, objs[f.deoj], f.epcs), None)]

    return respond
