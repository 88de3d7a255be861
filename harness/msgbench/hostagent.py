"""The host agent: runs an implementation on its host for a driver on another host, and measures
it there (docs/hosts.md).

When a trial's driver and implementation are on different hosts (network namespaces of this
machine, or nodes of a Ray cluster), the driver cannot start the implementation as its child,
nor read its CPU clock. The runner then starts one agent on the implementation's host, and the
driver (`--impl-agent ADDR:PORT`, docs/driver-contract.md) asks it, over one TCP connection per
implementation process, to do what it would otherwise do itself: start it pinned to its CPUs,
wait until it accepts, read its process CPU clock and peak RSS while it runs, say whether it
still runs, and stop it with SIGTERM. The clocks are the same as a local driver's (the process
CPU clock, VmHWM), read on the implementation's own host; the request and reply travel outside
the measured window, as a local driver's own clock reads do.

Protocol: JSON objects, one per line, at most MAX_LINE bytes (a longer line is refused before it
is buffered further). The first request of a connection is `hello` with the agent's token (it is
started with MSGBENCH_AGENT_TOKEN in its environment: the agent runs what it is asked to, so it
listens only on the lab's own network and answers only the runner's drivers). Every reply has
`ok`; a failed request has `ok: false` and `error`, a sentence that names what failed.

    hello  {token}                     -> {host: {hostname, kernel, cpus, ...}}
    free_port {addr}                   -> {port}         a TCP port free on addr (the kernel's)
    start  {argv, cwd, cpus, log}      -> {pid}          one implementation per connection
    ready  {addr, port, timeout_s}     -> {}             it accepts on addr:port
    cpu    {}                          -> {cpu_ns, run_delay_ns}
    memory {}                          -> {vmhwm_kb, vmrss_kb}
    status {}                          -> {running, exit?}
    stop   {wait_s}                    -> {exited, exit}   SIGTERM, then SIGKILL after wait_s
    log    {max_bytes}                 -> {text}         the tail of its stdout + stderr

`run_delay_ns` is the time its threads spent runnable but waiting for a CPU
(/proc/<pid>/task/*/schedstat): what other processes on its CPUs took from it, Ray's own among
them (docs/hosts.md, "What Ray costs").

A connection that closes while its implementation runs (a driver that died) kills the
implementation's process group: nothing outlives the trial that started it. Its standard input
is the runner's control channel (the same JSON lines, `free_port` only, the replies on its
standard output): the runner may not reach the agent's address itself. The agent exits when its
standard input closes (the runner, or the Ray actor that started it, is gone), and kills
whatever still runs first.

Standard library only: drivers/redisbench (run with `python -E -S`) imports the client half.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path

MAX_LINE = 1 << 20  # a request is a few hundred bytes; an argv of a few KiB at most
TOKEN_ENV = "MSGBENCH_AGENT_TOKEN"
PROBE_INTERVAL_S = 0.005
OPS = ("free_port", "start", "ready", "cpu", "memory", "status", "stop", "log")  # after hello
_CPUCLOCK_SCHED = 2  # Linux's process CPU clock of user + system time, to the ns


class AgentError(Exception):
    """A request failed; the message says what (sent back as `error`)."""


# --------------------------------------------------------------------------- measuring a process


def process_cpu_ns(pid: int) -> int:
    """Every thread's CPU time of process `pid`, exited threads included, read while it is alive
    (glibc's clock_getcpuclockid: (~pid << 3) | CPUCLOCK_SCHED)."""
    try:
        return time.clock_gettime_ns(((~pid) << 3) | _CPUCLOCK_SCHED)
    except OSError as e:
        raise AgentError(f"cannot read the CPU clock of process {pid}: {e}") from None


def run_delay_ns(pid: int) -> int:
    """The time the live threads of `pid` waited on a run queue (schedstat's second field)."""
    total = 0
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[1])
    return total


def status_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError as e:
        raise AgentError(f"cannot read /proc/{pid}/status: {e}") from None
    raise AgentError(f"/proc/{pid}/status has no {field} (the process has exited?)")


def describe_exit(returncode: int) -> dict:
    """A Popen return code as the drivers say it (drivers/kit Exit::describe)."""
    if returncode < 0:
        sig = -returncode
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return {
            "code": None,
            "signal": sig,
            "describe": f"was killed by signal {sig} ({name})",
        }
    return {"code": returncode, "signal": None, "describe": f"exited with status {returncode}"}


# ------------------------------------------------------------------------------- the server side


class Implementation:
    """The one process a connection started, and what the agent knows about it."""

    def __init__(self, argv: list[str], cwd: str | None, cpus: list[int] | None, log: Path):
        self.log = log
        with open(log, "ab") as out:
            try:
                self.proc = subprocess.Popen(
                    argv,
                    cwd=cwd or None,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=out,
                    start_new_session=True,  # its own group: a stray grandchild dies with it
                    preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
                )
            except OSError as e:
                raise AgentError(f"cannot start {argv[0]}: {e}") from None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def running(self) -> bool:
        return self.proc.poll() is None

    def ended(self) -> str:
        """'exited with status 1' (for a message), or '' while it runs."""
        return "" if self.running() else describe_exit(self.proc.returncode)["describe"]

    def ready(self, addr: str, port: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            if not self.running():
                raise AgentError(f"the implementation {self.ended()} before it accepted on {port}")
            left = deadline - time.monotonic()
            if left <= 0:
                raise AgentError(f"the implementation did not accept on {addr}:{port} in time")
            try:
                socket.create_connection((addr, port), timeout=min(left, 1.0)).close()
                return
            except OSError:
                time.sleep(min(PROBE_INTERVAL_S, max(left, 0)))

    def stop(self, wait_s: float) -> tuple[bool, dict]:
        """SIGTERM; its exit within wait_s (True), else SIGKILL to the group (False)."""
        if self.running():
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(wait_s)
            return True, describe_exit(self.proc.returncode)
        except subprocess.TimeoutExpired:
            self.kill()
            return False, describe_exit(self.proc.returncode)

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


class _Handler(socketserver.StreamRequestHandler):
    server: Agent

    def handle(self) -> None:
        impl: Implementation | None = None
        greeted = False
        try:
            while True:
                line = self.rfile.readline(MAX_LINE + 1)
                if not line:
                    return
                try:
                    if len(line) > MAX_LINE:
                        raise AgentError(f"request longer than {MAX_LINE} bytes")
                    request = json.loads(line)
                    if not isinstance(request, dict) or not isinstance(request.get("op"), str):
                        raise AgentError('a request is a JSON object with "op"')
                    if not greeted:
                        self.server.check_hello(request)
                        greeted = True
                        reply = {"host": self.server.describe_host()}
                    else:
                        reply, impl = self.server.serve(request, impl)
                    reply["ok"] = True
                except (AgentError, ValueError) as e:
                    reply = {"ok": False, "error": str(e)}
                self.wfile.write(json.dumps(reply).encode() + b"\n")
                if not greeted or len(line) > MAX_LINE:
                    return  # a stranger, or a stream that is no longer line-aligned
        except OSError:
            return
        finally:
            if impl is not None:
                impl.kill()  # the driver is gone (or done): nothing outlives its trial
                with self.server.lock:
                    self.server.live.discard(impl)


class Agent(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr: str, port: int, token: str, log_dir: Path):
        super().__init__((addr, port), _Handler)
        self.token = token
        self.log_dir = log_dir
        log_dir.mkdir(parents=True, exist_ok=True)
        self.live: set[Implementation] = set()
        self.lock = threading.Lock()

    def kill_all(self) -> None:
        """At exit: nothing the agent started outlives it."""
        with self.lock:
            live, self.live = list(self.live), set()
        for impl in live:
            impl.kill()

    @property
    def address(self) -> str:
        host, port = self.server_address[:2]
        return f"{host}:{port}"

    def check_hello(self, request: dict) -> None:
        if request.get("op") != "hello":
            raise AgentError("the first request must be hello")
        if not secrets.compare_digest(str(request.get("token", "")), self.token):
            raise AgentError("wrong token")

    def describe_host(self) -> dict:
        """What the driver records as the implementation's host (the run's fingerprint)."""
        return {
            "hostname": socket.gethostname(),
            "kernel": os.uname().release,
            "cpus": sorted(os.sched_getaffinity(0)),
            "agent_pid": os.getpid(),
        }

    def log_path(self, name: object) -> Path:
        text = str(name or "impl.log")
        if "/" in text or text.startswith(".") or not text:
            raise AgentError(f"log must be a plain file name, not {text!r}")
        return self.log_dir / text

    def serve(
        self, request: dict, impl: Implementation | None
    ) -> tuple[dict, Implementation | None]:
        op = request["op"]
        if op not in OPS:
            raise AgentError(f"unknown op {op!r} (valid: {', '.join(OPS)})")
        if op == "free_port":
            with socket.socket() as probe:
                try:
                    probe.bind((str(request.get("addr", "127.0.0.1")), 0))
                except OSError as e:
                    raise AgentError(f"no free port on {request.get('addr')}: {e}") from None
                return {"port": probe.getsockname()[1]}, impl
        if op == "start":
            if impl is not None:
                raise AgentError("this connection already started an implementation")
            argv = request.get("argv")
            if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
                raise AgentError("start needs argv, a non-empty list of strings")
            cpus = request.get("cpus") or None
            if cpus is not None and not all(isinstance(c, int) and c >= 0 for c in cpus):
                raise AgentError("cpus must be a list of CPU numbers")
            impl = Implementation(argv, request.get("cwd"), cpus, self.log_path(request.get("log")))
            with self.lock:
                self.live.add(impl)
            return {"pid": impl.pid}, impl
        if impl is None:
            raise AgentError(f"{op}: no implementation started on this connection")
        if op == "ready":
            impl.ready(
                str(request.get("addr", "127.0.0.1")),
                int(request.get("port", 0)),
                float(request.get("timeout_s", 15)),
            )
            return {}, impl
        if op in ("cpu", "memory") and not impl.running():
            raise AgentError(f"the implementation {impl.ended()}: no {op} to read")
        if op == "cpu":
            return {
                "cpu_ns": process_cpu_ns(impl.pid),
                "run_delay_ns": run_delay_ns(impl.pid),
            }, impl
        if op == "memory":
            return {
                "vmhwm_kb": status_kb(impl.pid, "VmHWM"),
                "vmrss_kb": status_kb(impl.pid, "VmRSS"),
            }, impl
        if op == "status":
            if impl.running():
                return {"running": True}, impl
            return {"running": False, "exit": describe_exit(impl.proc.returncode)}, impl
        if op == "stop":
            exited, how = impl.stop(float(request.get("wait_s", 5)))
            return {"exited": exited, "exit": how}, impl
        if op == "log":
            limit = max(0, int(request.get("max_bytes", 4096)))
            try:
                with open(impl.log, "rb") as f:
                    f.seek(0, os.SEEK_END)
                    f.seek(max(0, f.tell() - limit))
                    text = f.read().decode(errors="replace")
            except OSError as e:
                raise AgentError(f"cannot read the implementation's log: {e}") from None
            return {"text": text}, impl
        raise AgentError(f"op {op!r} is not served")  # every op of OPS is handled above


# ------------------------------------------------------------------------------- the client side


class AgentClient:
    """One connection to an agent: one implementation's life (what a driver uses)."""

    def __init__(self, address: str, token: str | None = None, timeout_s: float = 30.0):
        host, sep, port = address.rpartition(":")
        if not sep or not port.isdigit():
            raise AgentError(f"an agent address is HOST:PORT, not {address!r}")
        try:
            self.sock = socket.create_connection((host, int(port)), timeout=timeout_s)
        except OSError as e:
            raise AgentError(f"cannot reach the host agent at {address}: {e}") from None
        self.address = address
        self.file = self.sock.makefile("rwb")
        self.host = self.call(
            "hello", token=token if token is not None else os.environ.get(TOKEN_ENV, "")
        )["host"]

    def call(self, op: str, **fields) -> dict:
        """One request, its reply; AgentError with the agent's own sentence if it failed."""
        try:
            self.file.write(json.dumps({"op": op, **fields}).encode() + b"\n")
            self.file.flush()
            line = self.file.readline(MAX_LINE + 1)
        except OSError as e:
            raise AgentError(f"the host agent at {self.address}: {op}: {e}") from None
        if not line:
            raise AgentError(f"the host agent at {self.address} closed the connection ({op})")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise AgentError(str(reply.get("error", f"{op} failed")))
        return reply

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.file.close()
            self.sock.close()

    def __enter__(self) -> AgentClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ------------------------------------------------------------------------------------- the agent


def cpu_list(text: str) -> set[int]:
    """'0', '1,3' or '0-2,5' as a set of CPU numbers."""
    cpus: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def control(agent: Agent, line: bytes) -> dict:
    """One request of the runner's control channel: free_port only."""
    try:
        request = json.loads(line)
        if not isinstance(request, dict) or request.get("op") != "free_port":
            raise AgentError("the control channel serves free_port only")
        reply, _ = agent.serve(request, None)
        return {**reply, "ok": True}
    except (AgentError, ValueError) as e:
        return {"ok": False, "error": str(e)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m msgbench.hostagent", description=__doc__)
    p.add_argument("--listen", default="127.0.0.1", help="the address to listen on")
    p.add_argument("--port", type=int, default=0, help="the port (default: any free one)")
    p.add_argument("--log-dir", type=Path, required=True, help="the implementations' logs")
    p.add_argument("--cpus", help="pin the agent itself to these CPUs (off the implementation's)")
    args = p.parse_args(argv)
    token = os.environ.get(TOKEN_ENV, "")
    if len(token) < 16:
        p.error(f"{TOKEN_ENV} must hold a token of at least 16 characters")
    if args.cpus:
        os.sched_setaffinity(0, cpu_list(args.cpus))
    agent = Agent(args.listen, args.port, token, args.log_dir)
    threading.Thread(target=agent.serve_forever, daemon=True).start()
    print(json.dumps({"agent": "ready", "address": agent.address, "pid": os.getpid()}), flush=True)
    # The runner's control channel, until it closes our stdin (or is gone): the agent never
    # outlives its runner. It asks for free ports there, because the runner may be unable to
    # reach the agent's address (a namespace behind a bridge of its own).
    with contextlib.suppress(OSError):
        for line in sys.stdin.buffer:
            print(json.dumps(control(agent, line)), flush=True)
    agent.shutdown()
    agent.kill_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
