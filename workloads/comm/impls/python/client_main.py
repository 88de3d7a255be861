"""The comm client program (SPEC §3): the seed's Test4 (stream) and test3 (rtt) on Connectors.

    python -E -S client_main.py --port PORT [--host 127.0.0.1] [--clients N] [--messages M]
        [--size BYTES] [--type T] [--mode stream|rtt] [--end end|quit|eof] [--warmup W]

stream: per client, a send thread posts M messages without waiting and then ends the session;
a receive thread takes the M replies and checks each (type REPLY, length, every body byte),
then expects the server's END or end of file. rtt: per client one thread posts a message and
waits for its reply before the next; W unmeasured round trips first. Every connection is open
before the clock starts; throughput = content bytes of all measured messages (decimal MB) /
time from the first post to the last reply. One JSON object on stdout; exit 1 on any error.
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time

from connector import SESSION_ENDS, Connector, ConnectorError
from frame import DEFAULT_MAX_BODY, REPLY, ends_session
from pattern import Bodies

PROGRAM = "comm-python-client"
USAGE = (
    "usage: client_main.py --port PORT [--host 127.0.0.1] [--clients N] [--messages M]"
    " [--size BYTES] [--type T] [--mode stream|rtt] [--end end|quit|eof] [--warmup W]"
)
THREAD_STACK = 512 * 1024  # 1,024 threads for 256 clients: keep their stacks small


class UsageError(Exception):
    pass


class Options:
    def __init__(self) -> None:
        self.port = 0
        self.host = "127.0.0.1"
        self.clients = 1
        self.messages = 1000
        self.size = 4096
        self.type = 0
        self.mode = "stream"
        self.end = "end"
        self.warmup = 0


def _number(option: str, text: str, lo: int, hi: int) -> int:
    if not (text.isascii() and text.isdigit()) or not lo <= int(text) <= hi:
        raise UsageError(f"bad {option} {text!r}: expected an integer from {lo} to {hi}")
    return int(text)


def parse_args(args: list[str]) -> Options:
    o = Options()
    numbers = {
        "--port": (1, 65535),
        "--clients": (1, 100_000),
        "--messages": (0, 1 << 40),
        "--size": (0, DEFAULT_MAX_BODY),
        "--type": (0, 255),
        "--warmup": (0, 1 << 40),
    }
    choices = {"--mode": ("stream", "rtt"), "--end": SESSION_ENDS}
    port_given = False
    i = 0
    while i < len(args):
        name, eq, value = args[i].partition("=")
        if name not in numbers and name not in choices and name != "--host":
            raise UsageError(f"unknown argument {args[i]!r}")
        if not eq:
            if i + 1 >= len(args):
                raise UsageError(f"{name} needs a value")
            i += 1
            value = args[i]
        i += 1
        attr = name[2:]
        if name in numbers:
            setattr(o, attr, _number(name, value, *numbers[name]))
            port_given |= name == "--port"
        elif name in choices:
            if value not in choices[name]:
                raise UsageError(f"bad {name} {value!r}: expected one of {choices[name]}")
            setattr(o, attr, value)
        elif not value:
            # connect(("", port)) would mean "this host, any address": name the server.
            raise UsageError("bad --host '': expected the server's address")
        else:
            o.host = value
    if not port_given:
        raise UsageError("--port is required")
    if ends_session(o.type):
        raise UsageError(f"bad --type {o.type}: END and QUIT end the session")
    return o


class Run:
    """What the client threads share: options, bodies, the start line, the first error."""

    def __init__(self, opt: Options, bodies: Bodies, threads: int) -> None:
        self.opt = opt
        self.bodies = bodies
        self.start_line = threading.Barrier(threads)
        self._lock = threading.Lock()
        self.error: str | None = None

    def fail(self, client: Client, what: str) -> None:
        with self._lock:
            if self.error is None:
                self.error = f"client {client.id}: {what}"
        client.conn.abort(what)  # wakes this client's other thread


class Client:
    def __init__(self, cid: int, conn: Connector) -> None:
        self.id = cid
        self.conn = conn
        self.first_ns = 0
        self.last_ns = 0
        self.latencies: list[int] = []

    def check(self, run: Run, m: int, reply: tuple[int, bytes] | None) -> bool:
        """Is `reply` the echo of message m? Records the first thing wrong with it."""
        opt = run.opt
        if reply is None:
            why = f"connection closed after {m} of {opt.warmup + opt.messages} replies"
        elif reply[0] != REPLY:
            why = f"reply {m} has type {reply[0]}"
        elif len(reply[1]) != opt.size:
            why = f"reply {m} has length {len(reply[1])}, expected {opt.size}"
        elif reply[1] != run.bodies.expected(self.id, m):
            why = f"reply {m} has the wrong body"
        else:
            return True
        run.fail(self, why)
        return False

    def expect_end(self, run: Run) -> None:
        """After the last reply: the server's END or end of file, nothing else."""
        extra = self.conn.get()
        if extra is not None:
            run.fail(self, f"unexpected message of type {extra[0]} after the last reply")

    def post_all(self, run: Run) -> None:
        """stream, send side: M messages without waiting, then the session end."""
        opt, conn, bodies = run.opt, self.conn, run.bodies
        post, posted, kind, cid = conn.post, bodies.posted, opt.type, self.id
        run.start_line.wait()
        self.first_ns = time.perf_counter_ns()
        try:
            for m in range(opt.messages):
                post(kind, posted(cid, m))
            conn.close(opt.end)
        except ConnectorError:
            pass  # the receive side reports what went wrong

    def check_all(self, run: Run) -> None:
        """stream, receive side: every reply checked, then END or end of file."""
        get, check, expected, cid = self.conn.get, self.check, run.bodies.expected, self.id
        run.start_line.wait()
        try:
            for m in range(run.opt.messages):
                reply = get()
                # The common case inline; check() says what is wrong otherwise.
                if (
                    reply is None or reply[0] != REPLY or reply[1] != expected(cid, m)
                ) and not check(run, m, reply):
                    return
            self.last_ns = time.perf_counter_ns()
            self.expect_end(run)
        except ConnectorError as e:
            run.fail(self, str(e))

    def round_trips(self, run: Run) -> None:
        """rtt: each message waits for its reply; the first W are not measured."""
        opt, conn, bodies = run.opt, self.conn, run.bodies
        post, get, check, now = conn.post, conn.get, self.check, time.perf_counter_ns
        lat = self.latencies
        run.start_line.wait()
        self.first_ns = now()  # replaced by the first measured send
        try:
            for m in range(opt.warmup + opt.messages):
                t0 = now()
                if m == opt.warmup:
                    self.first_ns = t0
                post(opt.type, bodies.posted(self.id, m))
                if not check(run, m, get()):
                    return
                if m >= opt.warmup:
                    lat.append(now() - t0)
            self.last_ns = now()
            conn.close(opt.end)
            self.expect_end(run)
        except ConnectorError as e:
            run.fail(self, str(e))


def percentile_us(ordered: list[int], p: float) -> float:
    """Nearest-rank percentile of sorted nanoseconds, in microseconds."""
    rank = min(len(ordered), max(1, math.ceil(p * len(ordered) - 1e-9)))
    return round(ordered[rank - 1] / 1000, 3)


def report(opt: Options, clients: list[Client]) -> dict:
    first = min(c.first_ns for c in clients)
    last = max(c.last_ns for c in clients)
    elapsed = max(last - first, 1) / 1e9
    count = opt.clients * opt.messages
    total = count * opt.size
    doc = {
        "clients": opt.clients,
        "messages": opt.messages,
        "size": opt.size,
        "bytes": total,
        "elapsed_s": round(elapsed, 6),
        "mb_per_s": round(total / 1e6 / elapsed, 3),
        "msgs_per_s": round(count / elapsed, 1),
    }
    if opt.mode == "rtt" and count:
        lat = sorted(x for c in clients for x in c.latencies)
        doc["latency_us"] = {
            "p50": percentile_us(lat, 0.50),
            "p90": percentile_us(lat, 0.90),
            "p99": percentile_us(lat, 0.99),
            "p999": percentile_us(lat, 0.999),
            "max": round(lat[-1] / 1000, 3),
            "min": round(lat[0] / 1000, 3),
            "mean": round(sum(lat) / len(lat) / 1000, 3),
        }
    return doc


def run_clients(opt: Options) -> dict:
    """Connect every client, run the load, release everything; the report or {"error"}."""
    bodies = Bodies(opt.size)
    clients: list[Client] = []
    try:
        for c in range(opt.clients):
            clients.append(Client(c, Connector(opt.host, opt.port)))
    except OSError as e:
        for cl in clients:
            cl.conn.release()
        return {"error": f"connect to {opt.host}:{opt.port}: {e.strerror or e}"}

    threading.stack_size(THREAD_STACK)
    rtt = opt.mode == "rtt"
    run = Run(opt, bodies, len(clients) * (1 if rtt else 2))
    threads = []
    for cl in clients:
        targets = [cl.round_trips] if rtt else [cl.post_all, cl.check_all]
        for target in targets:
            t = threading.Thread(target=target, args=(run,), daemon=True)
            t.start()
            threads.append(t)
    for t in threads:
        t.join()
    for cl in clients:
        cl.conn.release()
    if run.error is not None:
        return {"error": run.error}
    return report(opt, clients)


def main(argv: list[str]) -> int:
    try:
        opt = parse_args(argv)
    except UsageError as e:
        sys.stderr.write(f"{PROGRAM}: {e} ({USAGE})\n")
        return 2
    doc = run_clients(opt)
    sys.stdout.write(json.dumps(doc, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    return 1 if "error" in doc else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
