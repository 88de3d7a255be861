"""Starting a server under test on a free loopback port, and stopping it, never hanging (shared
by the conformance suites of the server workloads: redis, comm).

Every server (the implementation and the redis-server reference alike) is started from its
manifest's argv with `{port}` and `{host}` filled in (the address it listens on: 127.0.0.1, or
another loopback address for the tests of `--host`), stdout and stderr going to a log file (a
chatty server can never block on a full pipe). Ready = the port accepts a connection.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

START_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 5.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class ServerSpec:
    """How to start one implementation: its manifest argv (with `{port}`, and `{host}` where it
    takes the address it listens on) and cwd."""

    id: str
    argv: tuple[str, ...]
    cwd: str
    client_argv: tuple[str, ...] = ()  # the implementation's own client program, if any
    built: bool = True
    skip_markers: tuple[str, ...] = field(default=())

    def __str__(self) -> str:
        return self.id


class Server:
    """A running server process on host:port (127.0.0.1 unless asked otherwise)."""

    def __init__(
        self, spec: ServerSpec, extra_args: tuple[str, ...] = (), host: str = "127.0.0.1"
    ) -> None:
        self.spec = spec
        self.host = host
        self.port = free_port()
        self.log = tempfile.NamedTemporaryFile(prefix=f"server-{spec.id}-", suffix=".log")
        argv = [
            a.replace("{port}", str(self.port)).replace("{host}", host) for a in spec.argv
        ] + list(extra_args)
        self.proc = subprocess.Popen(
            argv,
            cwd=spec.cwd,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._wait_ready()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_tail(self, n: int = 2000) -> str:
        with open(self.log.name, "rb") as f:
            return f.read()[-n:].decode(errors="replace")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"{self.spec.id} exited with status {self.proc.returncode} at start-up:\n"
                    + self.log_tail()
                )
            try:
                socket.create_connection((self.host, self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.02)
        tail = self.log_tail()
        self.kill()
        raise AssertionError(
            f"{self.spec.id} did not accept on {self.host}:{self.port} in time:\n{tail}"
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_kb(self, field_name: str = "VmRSS") -> int:
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
        raise AssertionError(f"{field_name} missing for pid {self.pid}")

    def terminate(self, timeout: float = STOP_TIMEOUT_S) -> int | None:
        """SIGTERM, then the exit status (None if it did not exit within `timeout`)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.log.close()


def assert_usage_error(argv: list[str], cwd: str | None, what: str) -> None:
    """The lab's command-line contract (SPEC: bad arguments): the server started with `argv`
    exits at once with status 2, says why on stderr and prints nothing on stdout. `what` names
    the fault in the failure message."""
    try:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=10,
                           stdin=subprocess.DEVNULL)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{what}: the server started instead of refusing: {argv}") from None
    assert p.returncode == 2, f"{what}: exit status {p.returncode}: {p.stderr}"
    assert p.stderr.strip(), f"{what}: no message on stderr"
    assert p.stdout == "", f"{what}: printed on stdout: {p.stdout[:200]!r}"
