"""The redis workload's driver: one trial = start the server, load it with redis-benchmark,
read what it cost, stop it.

    driver.py --bench "-c 50 -P 16 -n 100000" --port 40123 [--count-keys]
              [--driver-cpus 0] [--impl-cpus 1] [--impl-stderr FILE] [--impl-cwd DIR]
              [--timeout-s 300] [--client-json JSON]
              [--impl-agent ADDR:PORT] [--impl-host ADDR] -- SERVER_ARGV...

With --impl-agent the server runs on another host: the host agent there starts it, reads its
CPU clock and peak RSS, and stops it (harness/msgbench/hostagent.py, docs/hosts.md), and
redis-benchmark loads it at --impl-host.

Standard library only (it runs under `python -E -S`; the agent's client is standard library
too). Prints one JSON document on stdout
(docs/driver-contract.md): per-test rps and latency from redis-benchmark's CSV, their
geometric mean, the server's CPU time per request (its process CPU clock) and peak RSS, the
load generator's own CPU per request. A failed trial: {"error": "..."} and exit status 1; a bad
command line: {"error": "bad command line: ..."} and exit status 2. See README.md beside this
file.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import ipaddress
import json
import math
import os
import selectors
import shlex
import signal
import socket
import subprocess
import sys
import time
import tty
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness"))
from msgbench import hostagent  # noqa: E402  (standard library only)
from msgbench.hostagent import AgentClient, AgentError, run_delay_ns  # noqa: E402

READY_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 5.0
#: Exit status of a bad command line (argparse's own).
USAGE = 2


class TrialError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad command line also prints the contract's error document on stdout,
    so the harness always has one JSON document to read."""

    def error(self, message: str):
        print(json.dumps({"error": f"bad command line: {message}"}), flush=True)
        self.print_usage(sys.stderr)
        self.exit(USAGE, f"{self.prog}: error: {message}\n")


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = _Parser(prog="redisbench-driver", description=__doc__.split("\n\n")[0])
    p.add_argument("--bench", required=True, help="redis-benchmark arguments (one string)")
    p.add_argument("--port", type=int, required=True, help="the port the server listens on")
    p.add_argument(
        "--count-keys",
        action="store_true",
        help="ask DBSIZE after the load and report peak RSS growth per key",
    )
    p.add_argument("--driver-cpus", type=cpu_list, help="CPUs for redis-benchmark, e.g. 0 or 0,2-3")
    p.add_argument("--impl-cpus", type=cpu_list, help="CPUs for the server, e.g. 1")
    p.add_argument("--impl-stderr", default=os.devnull, help="file for the server's output")
    p.add_argument("--impl-cwd", default=None, help="the server's working directory")
    p.add_argument("--timeout-s", type=float, default=300.0, help="bound of the whole trial")
    p.add_argument(
        "--client-json", help="accepted as every driver accepts it; redis-benchmark is the client"
    )
    p.add_argument("--impl-agent", help="the host agent of the server's host (ADDR:PORT)")
    p.add_argument(
        "--impl-host",
        type=ipaddress.IPv4Address,
        default=ipaddress.IPv4Address("127.0.0.1"),
        help="the address the server listens on",
    )
    p.add_argument("server", nargs=argparse.REMAINDER, help="-- then the server's argv")
    args = p.parse_args(argv)
    if args.server[:1] == ["--"]:
        args.server = args.server[1:]
    if not args.server:
        p.error("the server's argv is missing (after --)")
    if not 0 < args.port < 65536:
        p.error(f"--port {args.port} is not a TCP port")
    if not (math.isfinite(args.timeout_s) and args.timeout_s > 0):
        p.error(f"--timeout-s must be a positive number of seconds, not {args.timeout_s}")
    return args


def cpu_list(text: str) -> list[int]:
    """'0', '1,3' or '0-2,5' as a list of CPU numbers, in the order given."""
    cpus: list[int] = []
    try:
        for part in text.split(","):
            low, _, high = part.partition("-")
            first, last = int(low), int(high or low)
            if first < 0 or last < first:
                raise ValueError
            cpus.extend(range(first, last + 1))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a CPU list: {text!r}") from None
    return cpus


def pinned(cpus: list[int] | None):
    """preexec_fn: pin the child before it execs (so every thread it starts inherits it)."""
    if cpus is None:
        return None
    return lambda: os.sched_setaffinity(0, cpus)


# ------------------------------------------------------------------------- the server process


def process_cpu_ns(pid: int) -> int:
    """CPU time (user + system) of every thread `pid` has had, in ns, read while it is alive:
    the kernel's thread_group_cputime, exact, where /proc/<pid>/stat counts 10 ms ticks
    (drivers/kit/src/clock.rs says why this clock). The host agent's reader, which a remote
    server is measured with too."""
    try:
        return hostagent.process_cpu_ns(pid)
    except AgentError as e:
        raise TrialError(str(e)) from None


def proc_status_kb(pid: int, name: str) -> int:
    try:
        return hostagent.status_kb(pid, name)
    except AgentError as e:
        raise TrialError(str(e)) from None


class LocalServer:
    """The server as the driver's child: started pinned, measured from its process CPU clock
    and /proc, stopped with SIGTERM."""

    def __init__(self, args: argparse.Namespace, log) -> None:
        try:
            self.proc = subprocess.Popen(
                args.server,
                cwd=args.impl_cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                preexec_fn=pinned(args.impl_cpus),
                start_new_session=True,
            )
        except OSError as e:
            raise TrialError(f"cannot start the server {args.server[0]}: {e}") from None
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise TrialError(
                    f"the server exited with status {self.proc.returncode} at start-up"
                )
            try:
                socket.create_connection((str(args.impl_host), args.port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise TrialError(
                        f"the server did not accept on port {args.port} within "
                        f"{READY_TIMEOUT_S:g} s"
                    ) from None
                time.sleep(0.01)

    def cpu_ns(self) -> int:
        return process_cpu_ns(self.proc.pid)

    def run_delay_ns(self) -> int:
        return run_delay_ns(self.proc.pid)

    def status_kb(self, name: str) -> int:
        return proc_status_kb(self.proc.pid, name)

    def ended(self) -> str | None:
        """How it ended ('exited with status 1'), None while it runs."""
        if self.proc.poll() is None:
            return None
        return f"exited with status {self.proc.returncode}"

    def stop(self) -> int | None:
        """SIGTERM, then its exit status; SIGKILL (and None) if it does not exit in time."""
        proc = self.proc
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return None


class RemoteServer:
    """The server on another host, started and measured there by its host agent (the same
    clocks: its process CPU clock, VmHWM); its output goes to the agent's log."""

    def __init__(self, args: argparse.Namespace) -> None:
        try:
            self.agent = AgentClient(args.impl_agent)
            self.agent.call(
                "start",
                argv=args.server,
                cwd=args.impl_cwd,
                cpus=args.impl_cpus,
                log=os.path.basename(args.impl_stderr) if args.impl_stderr != os.devnull else None,
            )
            self.agent.call(
                "ready", addr=str(args.impl_host), port=args.port, timeout_s=READY_TIMEOUT_S
            )
        except AgentError as e:
            raise TrialError(f"the server: {e}") from None
        self.host = self.agent.host

    def _call(self, op: str, **fields) -> dict:
        try:
            return self.agent.call(op, **fields)
        except AgentError as e:
            raise TrialError(f"the server: {e}") from None

    def cpu_ns(self) -> int:
        return int(self._call("cpu")["cpu_ns"])

    def run_delay_ns(self) -> int:
        return int(self._call("cpu")["run_delay_ns"])

    def status_kb(self, name: str) -> int:
        reply = self._call("memory")
        return int(reply["vmhwm_kb" if name == "VmHWM" else "vmrss_kb"])

    def ended(self) -> str | None:
        reply = self._call("status")
        return None if reply["running"] else reply["exit"]["describe"]

    def stop(self) -> int | None:
        reply = self._call("stop", wait_s=STOP_TIMEOUT_S)
        self.agent.close()
        return reply["exit"]["code"] if reply["exited"] else None


def dbsize(host: str, port: int) -> int | None:
    """DBSIZE over a plain socket; None if the reply is not an integer (e.g. the floor)."""
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(b"*1\r\n$6\r\nDBSIZE\r\n")
        reply = b""
        while not reply.endswith(b"\r\n"):
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
    return int(reply[1:-2]) if reply.startswith(b":") else None


# -------------------------------------------------------------------------- the load generator


def short_test_name(name: str) -> str:
    """A short stable name per CSV row: 'LRANGE_100 (first 100 elements)' → 'LRANGE_100'; the
    LPUSH that fills the list for the LRANGE tests is its own test, 'LPUSH_LRANGE'."""
    if "needed to benchmark LRANGE" in name:
        return "LPUSH_LRANGE"
    return name.split(" ", 1)[0]


def parse_csv(text: str) -> dict[str, dict]:
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or rows[0][:2] != ["test", "rps"]:
        raise TrialError(f"redis-benchmark printed no CSV header: {text[:200]!r}")
    tests: dict[str, dict] = {}
    for row in rows[1:]:
        if len(row) < 8:
            continue
        name, rps, avg, _min, p50, _p95, p99, mx = row[:8]
        value = float(rps)
        tests[short_test_name(name)] = {
            "name": name,
            "rps": value if math.isfinite(value) else None,  # "inf" with a tiny -n
            "avg_ms": float(avg),
            "p50_ms": float(p50),
            "p99_ms": float(p99),
            "max_ms": float(mx),
        }
    if not tests:
        raise TrialError("redis-benchmark reported no test")
    return tests


def stream_lines(
    argv: list[str], cpus: list[int] | None, timeout_s: float, sample
) -> tuple[list[tuple[str, int]], str, int]:
    """Run `argv` with its stdout on a pseudo-terminal and read it line by line as it comes:
    ([(line, sample() when the line arrived)], its stderr, its exit status).

    redis-benchmark prints each test's CSV line when that test ends, with printf: into a pipe
    stdio would hold every line until exit, on a terminal it flushes each one. A pty (not
    `stdbuf -oL`, an LD_PRELOAD that a static build would silently ignore) makes the line
    arrive while the next test has not started, so sampling the server's CPU clock then splits
    its CPU per test. Raw mode: no \r added to the lines."""
    master, slave = os.openpty()
    try:
        tty.setraw(slave)
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=slave,
            stderr=subprocess.PIPE,
            preexec_fn=pinned(cpus),
        )
    except OSError as e:
        os.close(master)
        raise TrialError(f"cannot start {argv[0]}: {e}") from None
    finally:
        os.close(slave)
    deadline = time.monotonic() + timeout_s
    lines: list[tuple[str, int]] = []
    partial, err = b"", b""
    sel = selectors.DefaultSelector()
    sel.register(master, selectors.EVENT_READ)
    sel.register(proc.stderr, selectors.EVENT_READ)
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                proc.kill()
                proc.wait()
                raise TrialError(f"{argv[0]} did not finish within {timeout_s:.0f} s")
            for key, _ in sel.select(min(left, 1.0)):
                try:
                    chunk = os.read(key.fd, 65536)
                except OSError:  # EIO: the pty's last writer has closed it
                    chunk = b""
                if not chunk:
                    sel.unregister(key.fileobj)
                elif key.fd == master:
                    now = sample()
                    *complete, partial = (partial + chunk).split(b"\n")
                    lines.extend((ln.decode(errors="replace"), now) for ln in complete)
                else:
                    err += chunk
    finally:
        sel.close()
        os.close(master)
        proc.stderr.close()
    if partial:
        lines.append((partial.decode(errors="replace"), sample()))
    return lines, err.decode(errors="replace"), proc.wait()


def run_benchmark(
    args: argparse.Namespace, timeout_s: float, server_cpu_ns
) -> tuple[dict, float, list[str]]:
    """(tests, load generator CPU seconds, argv). Fails on exit status or an Error line. The
    load generator's CPU is its rusage, read once it has exited and been reaped (wait4). Each
    test gets `cpu_us_per_req`: the server's CPU from the previous test's line (or the start)
    to its own, per request (per_test_cpu)."""
    argv = [
        "redis-benchmark",
        "-h",
        str(args.impl_host),
        "-p",
        str(args.port),
        "--csv",
        *shlex.split(args.bench),
    ]
    start_ns = server_cpu_ns()
    lines, text_err, status = stream_lines(argv, args.driver_cpus, timeout_s, server_cpu_ns)
    usage = proc_usage_children()
    if status != 0 or "Error" in text_err:
        line = next((ln for ln in text_err.splitlines() if "rror" in ln), text_err[-300:])
        raise TrialError(f"redis-benchmark exit status {status}: {line.strip()}")
    tests = parse_csv("".join(ln + "\n" for ln, _ in lines))
    per_req = per_test_cpu(lines, start_ns, requests_per_test(args.bench))
    for name, test in tests.items():
        test["cpu_us_per_req"] = per_req.get(name)
    return tests, usage, argv


def per_test_cpu(lines: list[tuple[str, int]], start_ns: int, requests: int) -> dict[str, float]:
    """Server CPU µs per request of each test, from the CPU clock read when each CSV line
    arrived: a test's share is the CPU since the line before (the header arrives as the first
    test starts, so the first test's share runs from `start_ns`, connecting its clients and
    redis-benchmark's CONFIG GET included; each test also carries the closing of the previous
    test's clients)."""
    out: dict[str, float] = {}
    before = start_ns
    for line, cpu_ns in lines:
        row = next(csv.reader([line]), [])
        if len(row) < 8 or row[:2] == ["test", "rps"]:
            continue
        out[short_test_name(row[0])] = (cpu_ns - before) / 1e3 / requests
        before = cpu_ns
    return out


_children_cpu_before = 0.0


def proc_usage_children() -> float:
    """CPU seconds of reaped children since the last call (only redis-benchmark is reaped
    between two calls: the server is reaped after)."""
    global _children_cpu_before
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = ru.ru_utime + ru.ru_stime
    delta, _children_cpu_before = total - _children_cpu_before, total
    return delta


def requests_per_test(bench: str) -> int:
    words = shlex.split(bench)
    for i, w in enumerate(words):
        if w == "-n" and i + 1 < len(words):
            return int(words[i + 1])
    return 100_000  # redis-benchmark's default


# ------------------------------------------------------------------------------------- trial


def trial(args: argparse.Namespace) -> dict:
    started = time.monotonic()
    proc_usage_children()  # baseline for the load generator's CPU
    # A remote server's output goes to its agent's log, on its own host.
    local_log = contextlib.nullcontext() if args.impl_agent else open(args.impl_stderr, "ab")
    with local_log as log:
        server = RemoteServer(args) if args.impl_agent else LocalServer(args, log)
        try:
            rss_ready = server.status_kb("VmRSS")
            # The window: from just before the load to just after it, the server alive at both.
            delay_before = server.run_delay_ns()
            cpu_before = server.cpu_ns()
            left = args.timeout_s - (time.monotonic() - started)
            tests, client_cpu, bench_argv = run_benchmark(args, left, server.cpu_ns)
            cpu_s = (server.cpu_ns() - cpu_before) / 1e9
            delay_s = (server.run_delay_ns() - delay_before) / 1e9
            peak = server.status_kb("VmHWM")
            keys = dbsize(str(args.impl_host), args.port) if args.count_keys else None
            if ended := server.ended():
                raise TrialError(f"the server {ended} under load")
        finally:
            status = server.stop()
    if status is None:
        raise TrialError(f"the server did not exit within {STOP_TIMEOUT_S:g} s of SIGTERM")
    if status != 0:
        raise TrialError(f"the server exited with status {status} after SIGTERM")
    requests = requests_per_test(args.bench) * len(tests)
    rates = [t["rps"] for t in tests.values() if t["rps"]]
    impl_doc = {
        "cpu_s": round(cpu_s, 9),
        "cpu_clock": "process-cpu-clock",
        "cpu_us_per_op": cpu_s * 1e6 / requests,
        "maxrss_kb": peak,
        "exit_status": status,
        "rss_ready_kb": rss_ready,
        # What other processes on its CPUs took from it while it was loaded (docs/hosts.md).
        "run_delay_us_per_op": delay_s * 1e6 / requests,
    }
    if isinstance(server, RemoteServer):
        impl_doc["host"] = server.host
    if args.count_keys:
        impl_doc["keys"] = keys
        if keys:
            impl_doc["bytes_per_key"] = (peak - rss_ready) * 1024 / keys
    return {
        "driver": "redisbench",
        "driver_cpus": args.driver_cpus,
        "impl_cpus": args.impl_cpus,
        "tests": tests,
        "rps_geomean": math.exp(sum(map(math.log, rates)) / len(rates)) if rates else None,
        "requests": requests,
        "impl": impl_doc,
        "load_generator": {
            "argv": bench_argv,
            "cpu_s": client_cpu,
            "cpu_clock": "wait4-rusage",
            "cpu_us_per_req": client_cpu * 1e6 / requests,
        },
    }


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    try:
        doc = trial(args)
    except TrialError as e:
        print(json.dumps({"error": str(e)}))
        return 1
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
