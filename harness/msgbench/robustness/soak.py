"""The soak with faults: each server under mixed load for minutes while the network, its clients
and (for nativemsg) its pipes misbehave; nothing may be lost and nothing may leak.

Server workloads (redis, comm over TCP; echonet over UDP) run in a two-host topology
(msgbench.topology): the server pinned to the implementation's CPU in the "server" namespace,
listening on its 127.0.0.1 as its SPEC says, reached at the host's address through a DNAT rule
(netns.expose_loopback); load workers and the fault proxy in the "client" namespace on the other
CPUs. Faults:

- the server's link drops LOSS_PERCENT of packets at random (nftables; TCP too) and its egress
  is rate-limited by `tc tbf` (RATE);
- the fault proxy (faultproxy.py) between the workers and the server delays, re-chunks and
  resets TCP connections, or delays, reorders and duplicates UDP datagrams;
- load workers (soakload.py) are SIGKILLed at random moments, mid-request, and replaced.

nativemsg (stdio) runs a long-lived host fed by threads whose reader stalls or reads a byte at
a time, SIGSTOP/SIGCONT pauses, and short-lived hosts whose stdin or stdout is closed inside a
frame (soakhost.py).

The server's RSS (/proc/PID/status VmRSS) and open descriptors (/proc/PID/fd) are sampled every
second. A result is **passed** when the server stayed up (and stopped cleanly when asked), every
check held, RSS grew at most BOUNDS["rss_growth_mib"] from the end of the warm-up (the first
WARMUP_SHARE of the time) to the end, and descriptors grew at most BOUNDS["fd_growth"] (counted
with no client connected, before the load and after it); otherwise **FAILED**, with the reasons.
Timings are never judged.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .. import paths
from ..topology import Host, Topology
from . import netns, soakhost, soakload
from .hostile import adapter, rss_kb

BOUNDS = {"rss_growth_mib": 16, "fd_growth": 10}
WARMUP_SHARE = 0.2
SAMPLE_S = 1.0
LOSS_PERCENT = 1.0
RATE = "40mbit"
WORKERS = {"comm": 3, "redis": 3, "echonet": 2}
ECHONET_OWNERS = ["80,81,b3", "a0,b0"]  # the settable EPCs each controller worker writes
ECHONET_GAP_S = 1.0
PORTS = {"comm": 7000, "redis": 6379}
STOP_WAIT_S = soakload.STALL_S + 15
START_TIMEOUT_S = 15.0

FAULTS = {
    "tcp": ["loss 1% (nftables, TCP and UDP)", "rate 40mbit (tc tbf)", "delay", "re-chunking",
            "connection resets (RST both ways)", "clients killed mid-request (SIGKILL)"],
    "udp": ["loss 1% (nftables)", "rate 40mbit (tc tbf)", "delay", "reordering", "duplication",
            "controllers killed mid-request (SIGKILL)"],
    "stdio": ["reader stalls", "reader reads a byte at a time", "writer dribbles bytes",
              "SIGSTOP/SIGCONT pauses", "stdin closed mid-frame", "stdout closed mid-frame"],
}  # fmt: skip


class SoakError(Exception):
    """The soak could not be set up (not a verdict on the implementation)."""


def unavailable_reason(workload: str) -> str | None:
    if workload == "nativemsg":
        return None
    from .. import topology

    return topology.unavailable_reason() or topology.loss_unavailable_reason()


# ---- measurements ------------------------------------------------------------------------------


def fd_count(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


class Sampler:
    """RSS and descriptors of one process every SAMPLE_S, on a thread."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.samples: list[tuple[float, int, int]] = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            rss, fds = rss_kb(self.pid), fd_count(self.pid)
            if rss and fds >= 0:
                self.samples.append((time.monotonic(), rss, fds))
            self._stop.wait(SAMPLE_S)

    def __enter__(self) -> Sampler:
        self._t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._t.join(5)


def growth(samples: list[tuple[float, int, int]], t0: float, t1: float) -> dict:
    """RSS from the end of the warm-up to the end of the load window [t0, t1]: the median of
    the samples in a window (a tenth of the run, at least 3 s) before each point."""
    warm = t0 + WARMUP_SHARE * (t1 - t0)
    span = max(3.0, 0.1 * (t1 - t0))

    def around(t: float) -> int | None:
        xs = [rss for (ts, rss, _) in samples if t - span <= ts <= t]
        return int(statistics.median(xs)) if xs else None

    a, b = around(warm), around(t1)
    load = [s for s in samples if t0 <= s[0] <= t1]
    # RSS at each tenth of the run (the nearest sample): the shape of any growth.
    series = [min(load, key=lambda s, t=t0 + k * (t1 - t0) / 10: abs(s[0] - t))[1]
              for k in range(11)] if load else []  # fmt: skip
    return {
        "rss_warm_kb": a,
        "rss_end_kb": b,
        "rss_growth_kb": (b - a) if a is not None and b is not None else 0,
        "rss_peak_kb": max((s[1] for s in load), default=0),
        "fds_min": min((s[2] for s in load), default=0),
        "fds_max": max((s[2] for s in load), default=0),
        "samples": len(samples),
        "rss_tenths_kb": series,
    }


def reasons(row: dict, failures: list[str]) -> list[str]:
    """Why a soak FAILED, the server's own state first (died, growth, exit status), then the
    checks' failures; [] when it passed."""
    out = []
    if not row.get("server_alive", True):
        out.append("the server died during the soak")
    cap = BOUNDS["rss_growth_mib"] * 1024
    if row.get("rss_growth_kb", 0) > cap:
        out.append(f"RSS grew {row['rss_growth_kb'] / 1024:.1f} MiB after the warm-up "
                   f"(bound {BOUNDS['rss_growth_mib']} MiB)")  # fmt: skip
    if row.get("fd_growth", 0) > BOUNDS["fd_growth"]:
        out.append(f"{row['fd_growth']} more open descriptors at the end than at the start "
                   f"(bound {BOUNDS['fd_growth']})")  # fmt: skip
    if "exit_status" in row and row["exit_status"] != 0:
        out.append(f"exit status {row['exit_status']} when stopped (expected 0)")
    if not row.get("operations"):
        out.append("no operation completed")
    return out + list(failures)


def judge(row: dict, failures: list[str]) -> tuple[bool, str]:
    """The verdict on one implementation's soak: passed, or FAILED with its first reasons."""
    why = reasons(row, failures)
    if why:
        more = f" (+{len(why) - 3} more)" if len(why) > 3 else ""
        return False, "; ".join(why[:3]) + more
    return True, (f"{row['operations']:,} operations checked, RSS "
                  f"{row.get('rss_growth_kb', 0) / 1024:+.1f} MiB, descriptors "
                  f"{row.get('fd_growth', 0):+d}")  # fmt: skip


# ---- processes ---------------------------------------------------------------------------------


class Procs:
    """Every process the soak starts; whatever is still running at exit (an error, Ctrl-C)
    is killed by its process group (each starts a session of its own)."""

    def __init__(self) -> None:
        self.live: list[subprocess.Popen] = []

    def start(self, argv: list[str], cwd: str | None = None, **kw) -> subprocess.Popen:
        env = dict(os.environ, PYTHONPATH=str(paths.ROOT / "harness"))
        p = subprocess.Popen(argv, cwd=cwd or str(paths.ROOT), start_new_session=True, env=env,
                             **kw)  # fmt: skip
        if isinstance(kw.get("stderr"), int) and kw["stderr"] > 2:
            os.close(kw["stderr"])  # a descriptor of _file(): the child has its own now
        self.live.append(p)
        return p

    def kill(self, p: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, sig)
        if sig == signal.SIGKILL:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(5)

    def __enter__(self) -> Procs:
        return self

    def __exit__(self, *exc) -> None:
        for p in reversed(self.live):
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGCONT)
                self.kill(p)


def _module(name: str) -> list[str]:
    return [sys.executable, "-m", f"msgbench.robustness.{name}"]


def _file(path: Path):
    """A file for a child's stderr (the child keeps its own descriptor)."""
    with path.open("wb") as f:
        return os.dup(f.fileno())


def fd_kinds(pid: int, scratch: Path | None = None) -> dict[str, int]:
    """Open descriptors by kind (socket, pipe, anon_inode:[eventpoll], /dev/null...). A file in
    the soak's own scratch folder is named relative to it (`<soak>/server.log`): the folder's
    random name means nothing once the soak has ended, and a published run names no path of
    the machine that measured it."""
    kinds: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                kind = target.split(":[")[0] if ":[" in target else target
                if scratch is not None and kind.startswith(f"{scratch}/"):
                    kind = "<soak>/" + kind[len(str(scratch)) + 1 :]
                kinds[kind] = kinds.get(kind, 0) + 1
    return dict(sorted(kinds.items()))


def tcp_states(host: Host, port: int) -> dict[str, int]:
    """States of the server's TCP sockets on `port` (ss, in its namespace): CLOSE-WAIT means
    the peer closed and the server never did."""
    done = subprocess.run(host.wrap(["ss", "-Htan", f"sport = :{port}"]), capture_output=True,
                          text=True, timeout=20)  # fmt: skip
    states: dict[str, int] = {}
    for line in done.stdout.splitlines():
        if line.split():
            states[line.split()[0]] = states.get(line.split()[0], 0) + 1
    return states


def _ready_line(p: subprocess.Popen, what: str) -> str:
    line = p.stdout.readline().decode().strip()
    if not line.startswith("READY"):
        raise SoakError(f"{what} did not start (exit {p.poll()}, said {line!r})")
    return line


def read_log(path: Path) -> list[dict]:
    recs = []
    if not path.exists():
        return recs
    for line in path.read_text().splitlines():
        with contextlib.suppress(ValueError):
            recs.append(json.loads(line))
    return recs


class Workers:
    """The load workers of one soak: start, kill mid-request and replace, stop."""

    def __init__(self, procs: Procs, host: Host, kind: str, n: int, tmp: Path, seed: int,
                 extra) -> None:  # fmt: skip
        self.procs, self.host, self.kind, self.tmp, self.seed = procs, host, kind, tmp, seed
        self.extra = extra  # (slot, gen) -> extra argv
        self.gen = [0] * n
        self.logs: list[Path] = []
        self.running: list[subprocess.Popen | None] = [None] * n
        self.kills = 0
        for slot in range(n):
            self._start(slot)

    def _start(self, slot: int) -> None:
        gen = self.gen[slot]
        log = self.tmp / f"worker-{slot}-{gen}.jsonl"
        self.logs.append(log)
        seed = self.seed * 10007 + slot * 101 + gen
        argv = [*_module("soakload"), self.kind, "--log", str(log), "--seed", str(seed),
                *self.extra(slot, gen)]  # fmt: skip
        with (self.tmp / f"worker-{slot}-{gen}.err").open("wb") as err:
            p = self.procs.start(self.host.wrap(argv), stdout=subprocess.DEVNULL, stderr=err)
        p.err_path = self.tmp / f"worker-{slot}-{gen}.err"
        self.running[slot] = p

    def kill_one(self, rng: random.Random) -> None:
        slot = rng.randrange(len(self.running))
        self.procs.kill(self.running[slot])
        self.kills += 1
        self.gen[slot] += 1
        self._start(slot)

    def stop(self) -> list[str]:
        problems = []
        for p in self.running:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_WAIT_S
        for p in self.running:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                problems.append("a load worker did not finish within "
                                f"{STOP_WAIT_S:.0f} s of being asked to stop")  # fmt: skip
                self.procs.kill(p)
            if p.returncode not in (0, -signal.SIGKILL):
                tail = p.err_path.read_bytes()[-300:].decode(errors="replace").strip()
                problems.append(f"a load worker ended with status {p.returncode}: {tail}")
        return problems


def _run_load(rng: random.Random, seconds: float, workers: Workers, alive) -> tuple[float, float]:
    """Let the load run for `seconds`, killing a worker now and then; (start, end) times."""
    mean_gap = min(10.0, max(2.0, seconds / 8))
    t0 = time.monotonic()
    end = t0 + seconds
    next_kill = t0 + rng.uniform(0.5, 1.5) * mean_gap
    while (now := time.monotonic()) < end:
        if not alive():
            break
        if now >= next_kill:
            workers.kill_one(rng)
            next_kill = now + rng.expovariate(1 / mean_gap)
        time.sleep(0.1)
    return t0, time.monotonic()


def _quiet_fds(pid: int) -> int:
    """Descriptors of an idle server: the least of a few samples over half a second."""
    counts = []
    for _ in range(6):
        counts.append(fd_count(pid))
        time.sleep(0.1)
    return min(counts)


def _settled_fds(pid: int, target: int, wait_s: float = 5.0) -> int:
    """Descriptors once the server has closed what the load left (up to `wait_s`)."""
    deadline = time.monotonic() + wait_s
    n = fd_count(pid)
    while n > target and time.monotonic() < deadline:
        time.sleep(0.2)
        n = fd_count(pid)
    return n


def _stop_server(p: subprocess.Popen) -> int | None:
    if p.poll() is not None:
        return p.returncode
    p.send_signal(signal.SIGTERM)
    try:
        return p.wait(5)
    except subprocess.TimeoutExpired:
        return None


# ---- TCP servers: redis, comm ------------------------------------------------------------------


def soak_tcp(kind: str, impl, seconds: float, seed: int, cpu: int) -> dict:
    port = PORTS[kind]
    replies_only = kind == "redis" and "semantics" in (impl.skip_markers or [])
    rng = random.Random(seed)
    failures: list[str] = []
    row: dict = {}
    with contextlib.ExitStack() as stack:
        topo = stack.enter_context(Topology(
            ["client", "server"], loss_percent=LOSS_PERCENT, lossy=["server"], rate=RATE,
            loss_protocols=("udp", "tcp"),
        ))  # fmt: skip
        srv, cli = topo.host("server"), topo.host("client")
        netns.expose_loopback(srv, port)
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="msgbench-soak-")))
        procs = stack.enter_context(Procs())
        err = (tmp / "server.log").open("wb")
        server = procs.start(srv.wrap(["taskset", "-c", str(cpu), *impl.argv(port)]),
                             cwd=impl.cwd(), stdin=subprocess.DEVNULL, stdout=err,
                             stderr=subprocess.STDOUT)  # fmt: skip
        _wait_tcp(srv, port, server, tmp / "server.log")
        fds_start = _quiet_fds(server.pid)  # once the readiness probe's connection is closed
        row["fd_kinds_start"] = fd_kinds(server.pid, tmp)
        proxy = procs.start(srv_proxy_argv(cli, "tcp", f"{srv.addr}:{port}", tmp, seed),
                            stdout=subprocess.PIPE, stderr=_file(tmp / "proxy.err"))  # fmt: skip
        pport = int(_ready_line(proxy, "the fault proxy").split()[1])

        def extra(slot: int, gen: int) -> list[str]:
            args = ["--target", f"127.0.0.1:{pport}"]
            if kind == "redis":
                args += ["--prefix", f"soak:{slot}.{gen}:"]
                args += ["--replies-only"] if replies_only else []
            return args

        with Sampler(server.pid) as sampler:
            workers = Workers(procs, cli, kind, WORKERS[kind], tmp, seed, extra)
            t0, t1 = _run_load(rng, seconds, workers, lambda: server.poll() is None)
            failures += workers.stop()
            proxy.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proxy.wait(10)
            fds_end = _settled_fds(server.pid, fds_start)
            row["fd_kinds_end"] = fd_kinds(server.pid, tmp)
            row["tcp_states_end"] = tcp_states(srv, port)
        row.update(growth(sampler.samples, t0, t1))
        row.update(fds_start=fds_start, fds_end=fds_end, fd_growth=fds_end - fds_start,
                   kills=workers.kills, seconds=round(t1 - t0, 1))  # fmt: skip
        row["server_alive"] = server.poll() is None
        if row["server_alive"] and kind == "redis" and not replies_only:
            failures += check_keyspace(srv, port, workers.logs, row)
        row["exit_status"] = _stop_server(server) if row["server_alive"] else server.returncode
        err.close()
        if not row["server_alive"]:
            row["server_log_tail"] = (tmp / "server.log").read_bytes()[-600:].decode(
                errors="replace")  # fmt: skip
        proxy_log = read_log(tmp / "proxy.jsonl")
        failures += _analyse_workers(kind, workers.logs, proxy_log, row)
        failures += _proxy_problems(proxy, tmp)
    return _finish(row, failures)


def srv_proxy_argv(cli: Host, kind: str, upstream: str, tmp: Path, seed: int) -> list[str]:
    return cli.wrap([*_module("faultproxy"), kind, "--upstream", upstream,
                     "--log", str(tmp / "proxy.jsonl"), "--seed", str(seed)])  # fmt: skip


def _wait_tcp(srv: Host, port: int, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            tail = log.read_bytes()[-600:].decode(errors="replace")
            raise SoakError(f"the server exited with status {server.returncode} at start: {tail}")
        try:
            netns.connect(srv, "127.0.0.1", port, timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SoakError(f"the server did not accept on port {port} in {START_TIMEOUT_S:.0f} s")


def _proxy_problems(proxy: subprocess.Popen, tmp: Path) -> list[str]:
    """The fault proxy must have lasted the whole soak (else the soak itself failed)."""
    if proxy.returncode == 0:
        return []
    tail = (tmp / "proxy.err").read_bytes()[-300:].decode(errors="replace").strip()
    return [f"the fault proxy ended with status {proxy.returncode} (the soak's own failure): "
            f"{tail}"]  # fmt: skip


def _summaries(logs: list[Path]) -> tuple[list[str], list[dict], list[list[dict]]]:
    """Failures, the last counters of each worker (summary, else last progress), all records."""
    fails, counters, every = [], [], []
    for path in logs:
        recs = read_log(path)
        every.append(recs)
        last = {}
        for r in recs:
            if "fail" in r:
                fails.append(r["fail"])
            if "progress" in r:
                last = r["progress"]
            if "summary" in r:
                last = r["summary"]
        counters.append(last)
    return fails, counters, every


def _total(counters: list[dict]) -> dict:
    out: dict = {}
    for c in counters:
        for k, v in c.items():
            if isinstance(v, int | float):
                out[k] = out.get(k, 0) + v
    return out


def _analyse_workers(kind: str, logs: list[Path], proxy_log: list[dict], row: dict) -> list[str]:
    fails, counters, every = _summaries(logs)
    total = _total(counters)
    row["counters"] = total
    row["proxy"] = next((r["summary"] for r in proxy_log if "summary" in r), {})
    row["operations"] = total.get("answered" if kind == "comm" else "ops", 0)
    if kind == "comm":
        proxy_resets: dict[int, int] = {}
        for r in proxy_log:
            if "reset" in r:
                proxy_resets[r["reset"]] = proxy_resets.get(r["reset"], 0) + 1
        for recs in every:
            for r in recs:
                if r.get("end") == "reset":
                    if proxy_resets.get(r["conn"], 0) > 0:
                        proxy_resets[r["conn"]] -= 1
                    else:
                        fails.append(f"connection from port {r['conn']} was reset, and not by "
                                     "the fault proxy (the server reset it)")  # fmt: skip
    return fails


# ---- redis: the final keyspace -------------------------------------------------------------------


def expected_keyspace(logs: list[Path]) -> dict[str, list]:
    """Key -> the states it may have: the last acknowledged one, and the state after the write
    that was in flight when its connection was reset or its worker killed (if any)."""
    allowed: dict[str, list] = {}
    for path in logs:
        state: dict[str, object] = {}
        pending: dict[str, object] = {}
        for r in read_log(path):
            if "intent" in r:
                pending[r["intent"]] = r["after"]
            elif "k" in r:
                state[r["k"]] = r["v"]
                pending.pop(r["k"], None)
        for k in state.keys() | pending.keys():
            allowed[k] = [state.get(k)] + ([pending[k]] if k in pending else [])
    return allowed


def read_keyspace(srv: Host, port: int) -> dict[str, object]:
    """Every soak key's state, read directly from the server (not through the proxy)."""
    sock = netns.connect(srv, "127.0.0.1", port, timeout=30)
    try:
        r = soakload.Resp(sock)
        sock.sendall(soakload.resp_command(b"KEYS", b"soak:*"))
        keys = r.read() or []
        out = {}
        for key in keys:
            kind = soakload.KINDS.get(key.split(b":")[-1][:1].decode(errors="replace"))
            if kind is None:
                out[key.decode(errors="replace")] = "unexpected key"
                continue
            out[key.decode()] = soakload.enc(soakload.read_key(r, sock, key, kind))
        return out
    finally:
        sock.close()


def check_keyspace(srv: Host, port: int, logs: list[Path], row: dict) -> list[str]:
    allowed = expected_keyspace(logs)
    try:
        actual = read_keyspace(srv, port)
    except (OSError, EOFError, ValueError) as e:
        return [f"the final keyspace could not be read: {e}"]
    problems = []
    for key in sorted(allowed.keys() | actual.keys()):
        got, ok = actual.get(key), allowed.get(key, [None])
        if got not in ok:
            what = "missing" if got is None else json.dumps(got)[:80]
            problems.append(f"final keyspace: {key} is {what}; acknowledged: "
                            f"{json.dumps(ok[0])[:80]}" + (" or the write in flight"
                                                          if len(ok) > 1 else ""))  # fmt: skip
    row["keys_checked"] = len(allowed.keys() | actual.keys())
    row["keys_in_flight"] = sum(len(v) > 1 for v in allowed.values())
    return problems


# ---- echonet -----------------------------------------------------------------------------------


def soak_udp(w, impl, seconds: float, seed: int, cpu: int) -> dict:
    mod = adapter(w)  # its conformance helpers: the node process (P) and the frames (S)
    P, S = mod.P, mod.S
    rng = random.Random(seed)
    failures: list[str] = []
    row: dict = {}
    with contextlib.ExitStack() as stack:
        topo = stack.enter_context(Topology(["client", "server"], loss_percent=LOSS_PERCENT,
                                            lossy=["server"], rate=RATE))  # fmt: skip
        srv, cli = topo.host("server"), topo.host("client")
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="msgbench-soak-")))
        procs = stack.enter_context(Procs())
        node = P.Node(["taskset", "-c", str(cpu), *impl.argv()], impl.cwd(), addr=srv.addr,
                      wrap=srv.wrap)  # fmt: skip
        stack.callback(lambda: node.proc.poll() is None and node.kill())
        fds_start = fd_count(node.proc.pid)
        proxy = procs.start(srv_proxy_argv(cli, "udp", f"{srv.addr}:{S.PORT}", tmp, seed),
                            stdout=subprocess.PIPE, stderr=_file(tmp / "proxy.err"))  # fmt: skip
        pport = int(_ready_line(proxy, "the fault proxy").split()[1])

        floor = "semantics" in (impl.skip_markers or [])  # only the benchmark's Gets
        # A known deviation (its impl.toml): refused SetCs answered with another ESV. The soak
        # does not send them, so that it checks what the implementation is known to do right.
        no_refused = "test_set_range" in (getattr(impl, "deviations", None) or {})
        if no_refused:
            row["note"] = ("refused SetCs not sent: known deviation test_set_range: "
                           + impl.deviations["test_set_range"])  # fmt: skip

        def extra(slot: int, gen: int) -> list[str]:
            return ["--target", f"127.0.0.1:{pport}", "--props", ECHONET_OWNERS[slot],
                    "--node-addr", srv.addr, "--gap", str(ECHONET_GAP_S),
                    *(["--floor"] if floor else []),
                    *(["--no-refused"] if no_refused else [])]  # fmt: skip

        with Sampler(node.proc.pid) as sampler:
            workers = Workers(procs, cli, "echonet", WORKERS["echonet"], tmp, seed, extra)
            t0, t1 = _run_load(rng, seconds, workers, node.alive)
            failures += workers.stop()
            proxy.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proxy.wait(10)
            fds_end = fd_count(node.proc.pid)
        row.update(growth(sampler.samples, t0, t1))
        row.update(fds_start=fds_start, fds_end=fds_end, fd_growth=fds_end - fds_start,
                   kills=workers.kills, seconds=round(t1 - t0, 1))  # fmt: skip
        row["server_alive"] = node.alive()
        proxy_log = read_log(tmp / "proxy.jsonl")
        failures += _analyse_workers("echonet", workers.logs, proxy_log, row)
        failures += _proxy_problems(proxy, tmp)
        if row["server_alive"]:
            if not floor:
                failures += check_echonet_state(S, cli, srv.addr, workers.logs, row)
            status, lines = node.stop()
            row["exit_status"] = status
            with contextlib.suppress(ValueError, IndexError):
                row["node_counters"] = json.loads(lines[-1])
        else:
            row["exit_status"] = node.proc.returncode
            row["server_log_tail"] = node.stderr_tail(600)
    return _finish(row, failures)


def echonet_allowed(S, logs: list[Path], max_late_ms: float) -> dict[int, set[int]]:
    """EPC -> the values the node may hold at the end: the last acknowledged SetC, any valid
    SetC sent after it (in flight, or unanswered), and any sent so shortly before it that a
    delayed copy could still arrive after it (the proxy's hold time plus its own lag)."""
    hold = 0.03 + max_late_ms / 1000 + 0.05
    sets: dict[int, list[dict]] = {}
    for path in logs:
        by_tid: dict[int, dict] = {}
        for r in read_log(path):
            if "set" in r and r.get("valid"):
                s = {"v": r["v"], "t0": r["t"], "t1": None, "acked": False}
                sets.setdefault(r["set"], []).append(s)
                by_tid[r["tid"]] = s
            elif ("ack" in r or "unanswered" in r) and r.get("tid") in by_tid:
                s = by_tid.pop(r["tid"])
                s["t1"] = r["t1"]
                s["acked"] = "ack" in r
    initial = S.aircon_initial()
    allowed: dict[int, set[int]] = {}
    for epc in S.SETTABLE:
        xs = sorted(sets.get(epc, []), key=lambda s: s["t0"])
        acked = [s for s in xs if s["acked"]]
        if not acked:
            allowed[epc] = {initial[epc][0], *(s["v"] for s in xs)}
            continue
        a = acked[-1]
        after = {s["v"] for s in xs if s["t0"] > a["t0"]}
        cutoff = a["t0"] - hold
        late = {s["v"] for s in xs
                if s["t0"] < a["t0"] and (s["t1"] is None or s["t1"] >= cutoff)}  # fmt: skip
        allowed[epc] = {a["v"]} | after | late
    return allowed


def check_echonet_state(S, cli: Host, node_addr: str, logs: list[Path], row: dict) -> list[str]:
    max_late = (row.get("proxy") or {}).get("max_late_ms", 0.0)
    allowed = echonet_allowed(S, logs, max_late)
    epcs = sorted(S.SETTABLE)
    sock = netns.udp_socket(cli)
    sock.settimeout(0.3)
    got = None
    try:
        for attempt in range(30):
            sock.sendto(S.get_request(0x7000 + attempt, S.AIRCON, epcs), (node_addr, S.PORT))
            try:
                while True:
                    f = S.decode(sock.recv(65536))
                    if f.tid == 0x7000 + attempt:
                        got = f
                        break
            except TimeoutError:
                continue
            break
    finally:
        sock.close()
    if got is None:
        return ["the node's final state could not be read (30 Gets unanswered)"]
    values = dict(got.props)
    problems = []
    for epc in epcs:
        v = values.get(epc, b"")
        if len(v) != 1 or v[0] not in allowed[epc]:
            problems.append(f"final state: EPC {epc:#x} is {v.hex() or 'missing'}; the last "
                            f"acknowledged SetC (or one in flight) set one of "
                            f"{sorted(hex(x) for x in allowed[epc])}")  # fmt: skip
    row["final_state"] = {f"{e:#x}": values.get(e, b"").hex() for e in epcs}
    return problems


# ---- nativemsg ---------------------------------------------------------------------------------


def soak_stdio(impl, seconds: float, seed: int, cpu: int) -> dict:
    rng = random.Random(seed)
    argv = ["taskset", "-c", str(cpu), *impl.argv()]
    baseline = "json" in (impl.skip_markers or [])
    failures: list[str] = []
    row: dict = {"close_faults": 0}
    host = soakhost.LongHost(argv, impl.cwd(), seed, baseline)
    stop = threading.Event()

    def closers() -> None:
        sides = ["stdin", "stdout"]
        while not stop.wait(rng.uniform(1.0, 3.0)):
            side = sides[row["close_faults"] % 2]
            problem = soakhost.close_mid_frame(argv, impl.cwd(), random.Random(rng.random()),
                                               side)  # fmt: skip
            row["close_faults"] += 1
            if problem:
                failures.append(problem)

    try:
        deadline = time.monotonic() + 10
        while host.answered == 0 and host.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        fds_start = fd_count(host.proc.pid)
        faults = {"stall": 0, "bytewise": 0, "dribble": 0, "sigstop": 0}
        closer = threading.Thread(target=closers, daemon=True)
        with Sampler(host.proc.pid) as sampler:
            closer.start()
            t0 = time.monotonic()
            end = t0 + seconds
            while time.monotonic() < end and host.proc.poll() is None:
                if host.stalled():
                    n = host.outstanding()
                    failures.append(f"{n} requests unanswered for {soakhost.STALL_S:.0f} s "
                                    "while the pipe was open")  # fmt: skip
                    break
                fault = rng.choice(["none", "none", *faults])
                length = rng.uniform(0.2, 1.2)
                if fault == "stall":
                    host.reader_mode = "stall"
                elif fault == "bytewise":
                    host.reader_mode = "bytewise"
                elif fault == "dribble":
                    host.writer_dribble = True
                elif fault == "sigstop":
                    host.pause(min(length, 0.6))
                if fault in faults:
                    faults[fault] += 1
                time.sleep(length)
                host.reader_mode = "normal"
                host.writer_dribble = False
                time.sleep(rng.uniform(0.1, 0.5))
            t1 = time.monotonic()
            stop.set()
            closer.join(soakhost.EXIT_WAIT_S * 2 + 5)
            alive = host.proc.poll() is None
            # Descriptors with nothing outstanding, before stdin is closed.
            deadline = time.monotonic() + soakhost.STALL_S
            host.stop_writing.set()
            while host.outstanding() and alive and time.monotonic() < deadline:
                time.sleep(0.02)
            fds_end = fd_count(host.proc.pid)
        row.update(growth(sampler.samples, t0, t1))
        row.update(fds_start=fds_start, fds_end=fds_end, fd_growth=fds_end - fds_start,
                   seconds=round(t1 - t0, 1), faults=faults)  # fmt: skip
        row["server_alive"] = alive
        if alive:
            row.update(host.finish())
        else:
            row["exit_status"] = host.proc.returncode
            row["stderr_tail"] = soakhost._tail(host.err)
        failures[:0] = host.failures
        row["operations"] = host.answered
        row["counters"] = {"sent": host.sent, "answered": host.answered}
    finally:
        stop.set()
        host.kill()
    return _finish(row, failures)


# ---- the whole soak ----------------------------------------------------------------------------


def _finish(row: dict, failures: list[str]) -> dict:
    row["failures"] = failures[:20]
    row["failure_count"] = len(failures)
    row["reasons"] = reasons(row, failures)[:20]
    row["ok"], row["verdict"] = judge(row, failures)
    return row


def transport(workload: str) -> str | None:
    return {"redis": "tcp", "comm": "tcp", "echonet": "udp", "nativemsg": "stdio"}.get(workload)


def soak_one(w, impl, seconds: float, seed: int, cpu: int) -> dict:
    t = transport(w.name)
    if t == "tcp":
        return soak_tcp(w.name, impl, seconds, seed, cpu)
    if t == "udp":
        return soak_udp(w, impl, seconds, seed, cpu)
    return soak_stdio(impl, seconds, seed, cpu)


def run(w, impls: list, minutes: float, seed: int, on_done) -> dict:
    """Every chosen implementation of `w` soaked for `minutes`; results as a document."""
    if w.name not in ("redis", "comm", "echonet", "nativemsg"):
        raise SoakError(f"{w.name} has no soak (redis, comm, echonet, nativemsg)")
    reason = unavailable_reason(w.name)
    if reason:
        raise SoakError(reason)
    cpus = sorted(os.sched_getaffinity(0))
    impl_cpu, driver_cpus = cpus[-1], cpus[:-1] or cpus
    doc: dict = {
        "workload": w.name, "minutes": minutes, "seed": seed, "faults": FAULTS[transport(w.name)],
        "bounds": BOUNDS, "warmup_share": WARMUP_SHARE,
        "placement": {"impl_cpu": impl_cpu, "driver_cpus": driver_cpus}, "impls": {},
    }  # fmt: skip
    if transport(w.name) != "stdio":
        doc["network"] = {"loss_percent": LOSS_PERCENT, "rate": RATE, "workers": WORKERS[w.name]}
    own = os.sched_getaffinity(0)
    os.sched_setaffinity(0, driver_cpus)
    try:
        for impl in impls:
            try:
                row = soak_one(w, impl, minutes * 60, seed, impl_cpu)
            except SoakError as e:
                row = _finish({"server_alive": False, "setup_error": str(e)}, [str(e)])
            doc["impls"][impl.id] = row
            on_done(impl.id, row)
    finally:
        os.sched_setaffinity(0, own)
    return doc
