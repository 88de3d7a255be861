"""The soak's load workers: one process each, run in the client namespace, through the fault
proxy, until SIGTERM (then they finish cleanly) or SIGKILL (a client killed mid-request).

    python -m msgbench.robustness.soakload comm    --target HOST:PORT --log FILE --seed S
    python -m msgbench.robustness.soakload redis   --target HOST:PORT --log FILE --seed S \
        --prefix soak:0.0: [--replies-only]
    python -m msgbench.robustness.soakload echonet --target HOST:PORT --log FILE --seed S \
        --props 80,81 --node-addr ADDR

Each checks every reply as it comes and appends what it did to its log, one JSON line at a
time with a single write(2) (so a SIGKILL never leaves half a record): failures (`fail`),
progress counters, and what the final check needs — redis: the state of every key after each
acknowledged write, and the write in flight (`intent`) before it is sent; echonet: each SetC
(`set`) before it is sent and its acknowledgement (`ack`); comm: how each connection ended and
its local port (so a reset can be matched with the proxy's log).

What "nothing lost" means here:
- comm: the reply stream of a connection equals, byte for byte, the REPLY frames of what was
  sent, in order; a connection the proxy did not reset answers every message and, after END,
  sends END and closes.
- redis: each worker owns its keys; every reply equals what the worker's model of its keys
  predicts (SET/GET/APPEND/DEL/INCR/INCRBY, LPUSH/LPOP/LRANGE, HSET/HDEL/HGET/HGETALL,
  SADD/SREM/SMEMBERS). A write whose connection was reset before its reply is either applied
  or not: the key is read again (at least RESOLVE_AFTER_S later, on a new connection) and must
  be one of the two; the final keyspace is compared by the soak (soak.py).
- echonet: every answer matches a request of this worker (TID), with the right ESV and the
  SPEC's values; requests are asked again (same TID) when unanswered, as a controller does.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import signal
import socket
import struct
import sys
import time
from collections import deque
from pathlib import Path

STALL_S = 30.0  # no reply for this long with requests outstanding: the server hangs
RESOLVE_AFTER_S = 1.0  # an uncertain redis key is read again no sooner than this
MAX_FAILURES = 20  # a worker stops logging failures after this many (the first say enough)
PROGRESS_S = 1.0

_stop = False


def _on_signal(signum, frame) -> None:
    global _stop
    _stop = True


class Log:
    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.failures = 0
        self._last_progress = 0.0

    def write(self, **rec) -> None:
        rec.setdefault("t", round(time.monotonic(), 4))
        os.write(self.fd, (json.dumps(rec) + "\n").encode())

    def fail(self, message: str, **rec) -> None:
        self.failures += 1
        if self.failures <= MAX_FAILURES:
            self.write(fail=message[:500], **rec)

    def progress(self, counters: dict, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last_progress >= PROGRESS_S:
            self._last_progress = now
            self.write(progress=counters)


def _target(text: str) -> tuple[str, int]:
    host, port = text.rsplit(":", 1)
    return host, int(port)


def _rst(s: socket.socket) -> None:
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    s.close()


# ---- comm ------------------------------------------------------------------------------------

COMM_HEADER = struct.Struct(">BQ")
COMM_REPLY, COMM_END = 2, 4
COMM_TYPES = (0, 1, 16, 64, 128, 3, 200)  # each echoed as REPLY (SPEC §1)


def _comm_size(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.6:
        return rng.randint(0, 256)
    if r < 0.9:
        return rng.randint(257, 16384)
    if r < 0.99:
        return rng.randint(16385, 262144)
    return rng.randint(262145, 2 << 20)


def comm_worker(args, log: Log) -> None:
    rng = random.Random(args.seed)
    totals = {"sent": 0, "answered": 0, "connections": 0, "clean": 0, "resets": 0,
              "failed": 0, "bytes": 0}  # fmt: skip
    while not _stop and log.failures < MAX_FAILURES:
        try:
            s = socket.create_connection(_target(args.target), timeout=10)
        except OSError as e:
            log.fail(f"cannot connect: {e}")
            time.sleep(0.2)
            continue
        totals["connections"] += 1
        end = _comm_connection(s, rng, log, totals)
        totals[end] += 1
    log.write(summary=totals)


def _comm_connection(s: socket.socket, rng: random.Random, log: Log, totals: dict) -> str:
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.setblocking(False)
    port = s.getsockname()[1]
    window = rng.randint(1, 8)
    life = rng.randint(20, 2000)
    out = bytearray()
    expected = bytearray()
    ends: deque[int] = deque()  # offsets (in the reply stream) where each reply ends
    consumed = queued = 0  # reply-stream bytes checked / expected so far
    sent = answered = 0
    ending = False
    last_progress = time.monotonic()

    def finish(how: str, **extra) -> str:
        log.write(conn=port, end=how, sent=sent, answered=answered, **extra)
        return "clean" if how == "clean" else ("resets" if how == "reset" else "failed")

    while True:
        if not ending and (_stop or sent >= life):
            out += COMM_HEADER.pack(COMM_END, 0)
            expected += COMM_HEADER.pack(COMM_END, 0)
            queued += COMM_HEADER.size
            ending = True
        while not ending and sent - answered < window and len(out) < (4 << 20):
            body = rng.randbytes(_comm_size(rng))
            out += COMM_HEADER.pack(rng.choice(COMM_TYPES), len(body)) + body
            expected += COMM_HEADER.pack(COMM_REPLY, len(body)) + body
            queued += COMM_HEADER.size + len(body)
            ends.append(queued)
            sent += 1
            totals["sent"] += 1
        r, w, _ = select.select([s], [s] if out else [], [], 0.5)
        try:
            if w:
                n = s.send(out[:262144])
                del out[:n]
            data = s.recv(262144) if r else None
        except BlockingIOError:
            continue
        except ConnectionResetError:
            s.close()
            return finish("reset", unanswered=sent - answered)
        except OSError as e:
            log.fail(f"connection error {e}", port=port)
            s.close()
            return finish("fail")
        if data is None:
            if time.monotonic() - last_progress > STALL_S:
                after_end = (" after END (the server must answer, send END and close)"
                             if ending else "")  # fmt: skip
                log.fail(f"no reply for {STALL_S:.0f} s with {sent - answered} messages "
                         f"outstanding{after_end}", port=port)  # fmt: skip
                _rst(s)
                return finish("fail")
            continue
        if not data:
            s.close()
            if ending and not expected:
                return finish("clean")
            log.fail(f"the server closed the connection with {sent - answered} of {sent} "
                     "messages unanswered" + (" (after END)" if ending else ""),
                     port=port, missing_bytes=len(expected))  # fmt: skip
            return finish("fail")
        last_progress = time.monotonic()
        if len(data) > len(expected) or data != expected[: len(data)]:
            i = next((k for k in range(min(len(data), len(expected)))
                      if data[k] != expected[k]), min(len(data), len(expected)))  # fmt: skip
            log.fail(f"reply byte {consumed + i} differs from what was sent (message "
                     f"{answered + 1} of {sent}; got {bytes(data[i:i + 12]).hex()}, expected "
                     f"{bytes(expected[i:i + 12]).hex()})", port=port)  # fmt: skip
            _rst(s)
            return finish("fail")
        del expected[: len(data)]
        consumed += len(data)
        totals["bytes"] += len(data)
        while ends and ends[0] <= consumed:
            ends.popleft()
            answered += 1
            totals["answered"] += 1
        log.progress(totals)


# ---- redis -----------------------------------------------------------------------------------


def resp_command(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


class Resp:
    """A RESP2 reply reader over a blocking socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.s = sock
        self.buf = bytearray()

    def _fill(self) -> None:
        data = self.s.recv(65536)
        if not data:
            raise EOFError("the server closed the connection")
        self.buf += data

    def _line(self) -> bytes:
        while (i := self.buf.find(b"\r\n")) < 0:
            self._fill()
        line = bytes(self.buf[:i])
        del self.buf[: i + 2]
        return line

    def _exact(self, n: int) -> bytes:
        while len(self.buf) < n + 2:
            self._fill()
        data = bytes(self.buf[:n])
        if self.buf[n : n + 2] != b"\r\n":
            raise ValueError("a bulk reply not ended by CRLF")
        del self.buf[: n + 2]
        return data

    def read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return ("+", rest)
        if kind == b"-":
            return ("-", rest)
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise ValueError(f"not a RESP reply: {line[:40]!r}")


OK = ("+", b"OK")


def enc(v) -> dict | None:
    """A key's state as JSON: None (no key), string, list, hash or set."""
    if v is None:
        return None
    if isinstance(v, tuple) or (isinstance(v, list | set) and not all(
            isinstance(x, bytes) for x in v)):  # fmt: skip
        return {"reply": repr(v)[:200]}  # not a key's value: an error reply, say
    if isinstance(v, dict) and not all(isinstance(x, bytes) for x in (*v, *v.values())):
        return {"reply": repr(v)[:200]}
    if isinstance(v, bytes):
        return {"s": v.hex()}
    if isinstance(v, list):
        return {"l": [x.hex() for x in v]}
    if isinstance(v, dict):
        return {"h": {k.hex(): x.hex() for k, x in sorted(v.items())}}
    return {"z": sorted(x.hex() for x in v)}


KINDS = {"s": "string", "c": "string", "l": "list", "h": "hash", "z": "set"}


def read_key(r: Resp, sock: socket.socket, key: bytes, kind: str):
    """The key's value as the model holds it (an empty aggregate is no key)."""
    if kind == "string":
        sock.sendall(resp_command(b"GET", key))
        return r.read()
    if kind == "list":
        sock.sendall(resp_command(b"LRANGE", key, b"0", b"-1"))
        v = r.read()
        return v or None
    if kind == "hash":
        sock.sendall(resp_command(b"HGETALL", key))
        v = r.read()
        return dict(zip(v[::2], v[1::2], strict=True)) if v else None
    sock.sendall(resp_command(b"SMEMBERS", key))
    v = r.read()
    return set(v) if v else None


def _value(rng: random.Random) -> bytes:
    r = rng.random()
    n = rng.randint(1, 32) if r < 0.7 else (rng.randint(33, 1024) if r < 0.95 else
                                             rng.randint(1025, 16384))  # fmt: skip
    return rng.randbytes(n)


def redis_op(rng: random.Random, key: bytes, kind: str, before):
    """(command, expected reply, state after, compare) for a random operation on `key`.
    `compare` normalises an unordered reply (hash, set) before comparison."""
    ident = None
    if kind == "string" and key.split(b":")[-1].startswith(b"c"):  # a counter
        n = int(before) if before is not None else 0
        if rng.random() < 0.7:
            return resp_command(b"INCR", key), n + 1, str(n + 1).encode(), ident
        d = rng.randint(-1000, 1000)
        return resp_command(b"INCRBY", key, str(d).encode()), n + d, str(n + d).encode(), ident
    if kind == "string":
        op = rng.choices(["SET", "GET", "APPEND", "DEL"], [3, 3, 1, 1])[0]
        if op == "SET":
            v = _value(rng)
            return resp_command(b"SET", key, v), OK, v, ident
        if op == "GET":
            return resp_command(b"GET", key), before, before, ident
        if op == "APPEND":
            v = _value(rng)
            after = (before or b"") + v
            return resp_command(b"APPEND", key, v), len(after), after, ident
        return resp_command(b"DEL", key), int(before is not None), None, ident
    if kind == "list":
        cur = list(before or [])
        op = rng.choices(["LPUSH", "LPOP", "LRANGE"], [2, 1 + (len(cur) > 30) * 4, 2])[0]
        if op == "LPUSH":
            v = _value(rng)
            after = [v, *cur]
            return resp_command(b"LPUSH", key, v), len(after), after, ident
        if op == "LPOP":
            after = cur[1:] or None
            return resp_command(b"LPOP", key), (cur[0] if cur else None), after, ident
        return resp_command(b"LRANGE", key, b"0", b"-1"), cur, before, ident
    if kind == "hash":
        cur = dict(before or {})
        field = b"f%d" % rng.randrange(8)
        op = rng.choices(["HSET", "HDEL", "HGET", "HGETALL"], [3, 1, 1, 1])[0]
        if op == "HSET":
            v = _value(rng)
            after = {**cur, field: v}
            return resp_command(b"HSET", key, field, v), int(field not in cur), after, ident
        if op == "HDEL":
            after = {k: x for k, x in cur.items() if k != field} or None
            return resp_command(b"HDEL", key, field), int(field in cur), after, ident
        if op == "HGET":
            return resp_command(b"HGET", key, field), cur.get(field), before, ident
        pairs = lambda v: dict(zip(v[::2], v[1::2], strict=True)) if isinstance(v, list) else v  # noqa: E731
        return resp_command(b"HGETALL", key), cur, before, pairs
    cur = set(before or set())
    member = b"m%d" % rng.randrange(16)
    op = rng.choices(["SADD", "SREM", "SMEMBERS"], [3, 1, 1])[0]
    if op == "SADD":
        return resp_command(b"SADD", key, member), int(member not in cur), cur | {member}, ident
    if op == "SREM":
        return (resp_command(b"SREM", key, member), int(member in cur),
                (cur - {member}) or None, ident)  # fmt: skip
    as_set = lambda v: set(v) if isinstance(v, list) else v  # noqa: E731
    return resp_command(b"SMEMBERS", key), cur, before, as_set


def redis_worker(args, log: Log) -> None:
    rng = random.Random(args.seed)
    prefix = args.prefix.encode()
    names = [b"s0", b"s1", b"s2", b"s3", b"s4", b"c0", b"c1", b"l0", b"l1", b"h0", b"h1",
             b"z0"]  # fmt: skip
    keys = {prefix + n: KINDS[n[:1].decode()] for n in names}
    state: dict[bytes, object] = {}
    uncertain: dict[bytes, tuple] = {}  # key -> (before, after, since)
    totals = {"ops": 0, "writes": 0, "connections": 0, "resets": 0, "resolved": 0}
    sock = reader = None
    while not _stop and log.failures < MAX_FAILURES:
        if sock is None:
            try:
                sock = socket.create_connection(_target(args.target), timeout=STALL_S)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                reader = Resp(sock)
                totals["connections"] += 1
            except OSError as e:
                log.fail(f"cannot connect: {e}")
                time.sleep(0.2)
                continue
        try:
            if args.replies_only:
                _redis_replies_only(rng, sock, reader, list(keys), log, totals)
            else:
                _redis_step(rng, sock, reader, keys, state, uncertain, log, totals)
        except (ConnectionResetError, EOFError, TimeoutError, OSError, ValueError) as e:
            if isinstance(e, ConnectionResetError):
                totals["resets"] += 1  # the proxy's (the only RSTs a worker sees)
            elif isinstance(e, TimeoutError):
                log.fail(f"no reply in {STALL_S:.0f} s")
            else:
                log.fail(f"{type(e).__name__}: {e}")
            _rst(sock)
            sock = reader = None
        log.progress(totals)
    if sock is not None:
        sock.close()
    log.write(summary=totals, uncertain=len(uncertain))


def _redis_replies_only(rng, sock, reader, keys, log: Log, totals: dict) -> None:
    """The floor answers +OK to everything: the check is one reply per request, in order."""
    key = rng.choice(keys)
    cmd, _, _, _ = redis_op(rng, key, KINDS["s"], None)
    sock.sendall(cmd)
    reply = reader.read()
    if reply != OK or reader.buf:
        log.fail(f"reply {reply!r} (+{len(reader.buf)} bytes more) to {cmd[:60]!r}")
    totals["ops"] += 1


def _redis_step(rng, sock, reader, keys: dict, state: dict, uncertain: dict, log: Log,
                totals: dict) -> None:  # fmt: skip
    now = time.monotonic()
    for key, (before, after, since) in list(uncertain.items()):
        if now - since < RESOLVE_AFTER_S:
            continue
        got = read_key(reader, sock, key, keys[key])
        if got == before or got == after:
            state[key] = got
            del uncertain[key]
            totals["resolved"] += 1
            log.write(k=key.decode(), v=enc(got), resolved=True)
        else:
            log.fail(
                f"{key.decode()}: after a reset its value is {enc(got)}, neither the value "
                f"before the write in flight ({enc(before)}) nor after it ({enc(after)})"
            )
            state[key] = got
            del uncertain[key]
            log.write(k=key.decode(), v=enc(got), resolved=False)
    free = [k for k in keys if k not in uncertain]
    if not free:
        time.sleep(0.05)
        return
    key = rng.choice(free)
    before = state.get(key)
    cmd, want, after, norm = redis_op(rng, key, keys[key], before)
    writes = after != before or cmd.split(b"\r\n")[2] in (b"SET", b"INCRBY", b"INCR")
    if writes:
        log.write(intent=key.decode(), before=enc(before), after=enc(after))
    try:
        sock.sendall(cmd)
        got = reader.read()
    except BaseException:
        if writes:
            uncertain[key] = (before, after, time.monotonic())
        raise
    if norm is not None:
        got = norm(got)
    if got != want or reader.buf:
        extra = f" and {len(reader.buf)} bytes more" if reader.buf else ""
        log.fail(f"{cmd[:80]!r}: reply {str(got)[:120]}{extra}, expected {str(want)[:120]}")
        reader.buf.clear()
        # What the key holds now is unknown: read it again later, from a fresh connection.
        if writes:
            uncertain[key] = (before, after, time.monotonic())
        raise OSError("reply mismatch")
    totals["ops"] += 1
    if writes:
        state[key] = after
        totals["writes"] += 1
        log.write(k=key.decode(), v=enc(after))


# ---- echonet ---------------------------------------------------------------------------------

ECHONET_TRIES = 8
ECHONET_WAIT_S = 0.25


def _echonet_spec():
    root = Path(__file__).resolve().parents[3]
    sys.path.insert(0, str(root / "workloads" / "echonet" / "conformance"))
    import echonet_spec

    return echonet_spec


def echonet_worker(args, log: Log) -> None:
    S = _echonet_spec()
    rng = random.Random(args.seed)
    target = _target(args.target)
    # The floor answers only the benchmark's Gets of the node profile: no Set, no aircon.
    owned = [] if args.floor else [int(p, 16) for p in args.props.split(",") if p]
    node = S.node_profile(args.node_addr)
    aircon = S.aircon_initial()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    sock.bind(("127.0.0.1", 0))
    start = time.monotonic()
    # The first write of each property waits a gap: the worker this one replaces may have
    # written it just before it was killed.
    last_tx = dict.fromkeys(owned, start)
    tid = rng.randrange(1, 1 << 16)
    recent: dict[int, dict] = {}  # TID -> the request (its answers are checked against it)
    totals = {"ops": 0, "gets": 0, "sets": 0, "refused_sets": 0, "retries": 0,
              "late_or_duplicate": 0}  # fmt: skip

    def check(f, req: dict) -> str | None:
        if f.esv != req["esv"]:
            return f"ESV {f.esv:#x}, expected {req['esv']:#x}"
        if f.seoj != req["deoj"] or f.deoj != S.CONTROLLER:
            return f"SEOJ {f.seoj:06x} DEOJ {f.deoj:06x}"
        if f.props != req["props"] and req["kind"] == "set":
            return f"properties {f.props}, expected {req['props']}"
        if req["kind"] == "get":
            if f.epcs != req["epcs"]:
                return f"EPCs {f.epcs}, expected {req['epcs']}"
            table = node if req["deoj"] == S.NODE_PROFILE else aircon
            for epc, edt in f.props:
                if req["deoj"] == S.AIRCON and epc in S.SETTABLE:
                    if len(edt) != 1 or edt[0] not in S.SETTABLE[epc]:
                        return f"EPC {epc:#x} = {edt.hex()}: not a value a Set accepts"
                elif edt != table[epc]:
                    return f"EPC {epc:#x} = {edt.hex()}, expected {table[epc].hex()}"
        return None

    while not _stop and log.failures < MAX_FAILURES:
        now = time.monotonic()
        tid = tid % 0xFFFF + 1  # never 0
        writable = [p for p in owned if now - last_tx[p] >= args.gap]
        if writable and rng.random() < 0.5:
            epc = rng.choice(writable)
            ok_values = sorted(S.SETTABLE[epc])
            bad = [v for v in range(256) if v not in S.SETTABLE[epc]]
            valid = not bad or args.no_refused or rng.random() < 0.9
            value = rng.choice(ok_values if valid else bad)
            edt = bytes([value])
            frame = S.frame(tid, S.CONTROLLER, S.AIRCON, S.SETC, [(epc, edt)])
            req = {"kind": "set", "deoj": S.AIRCON, "esv": S.SET_RES if valid else S.SETC_SNA,
                   "props": [(epc, b"")] if valid else [(epc, edt)]}  # fmt: skip
            log.write(set=epc, v=value, valid=valid, tid=tid)
        else:
            if args.floor:
                deoj = S.NODE_PROFILE
                epcs = list(S.NODE_PROFILE_EPCS) if rng.random() < 0.3 else [
                    rng.choice(S.NODE_PROFILE_EPCS)]  # fmt: skip
            elif rng.random() < 0.7:
                deoj = S.AIRCON
                epcs = [rng.choice(list(aircon)) for _ in range(rng.randint(1, 6))]
            else:
                deoj = S.NODE_PROFILE
                epcs = [rng.choice(list(node)) for _ in range(rng.randint(1, 6))]
            frame = S.get_request(tid, deoj, epcs)
            req = {"kind": "get", "deoj": deoj, "esv": S.GET_RES, "epcs": epcs, "props": None}
            epc = None
        recent[tid] = req
        if len(recent) > 4096:
            recent.pop(next(iter(recent)))
        answered = False
        for attempt in range(ECHONET_TRIES):
            totals["retries"] += attempt > 0
            sock.sendto(frame, target)
            if epc is not None:
                last_tx[epc] = time.monotonic()
            deadline = time.monotonic() + ECHONET_WAIT_S
            while (left := deadline - time.monotonic()) > 0 and not answered:
                r, _, _ = select.select([sock], [], [], left)
                if not r:
                    break
                data = sock.recv(65536)
                try:
                    f = S.decode(data)
                except ValueError as e:
                    log.fail(f"malformed answer {data[:40].hex()}: {e}")
                    continue
                known = recent.get(f.tid)
                if known is None:
                    log.fail(f"an answer with TID {f.tid:#06x}, which no request had")
                    continue
                problem = check(f, known)
                if problem:
                    log.fail(f"answer to TID {f.tid:#06x} ({known['kind']}): {problem}")
                if f.tid == tid:
                    answered = True
                else:
                    totals["late_or_duplicate"] += 1
            if answered:
                break
        if not answered:
            log.fail(f"TID {tid:#06x} ({req['kind']}) unanswered after {ECHONET_TRIES} tries")
            if epc is not None:
                log.write(unanswered=epc, v=value, tid=tid, t1=round(last_tx[epc], 4))
            continue
        totals["ops"] += 1
        if epc is not None:
            totals["sets"] += 1
            totals["refused_sets"] += not valid
            log.write(ack=epc, v=value, valid=valid, tid=tid, t1=round(last_tx[epc], 4))
        else:
            totals["gets"] += 1
        log.progress(totals)
    log.write(summary=totals)


def main() -> None:
    p = argparse.ArgumentParser(description="the soak's load workers (docs/robustness.md)")
    p.add_argument("kind", choices=["comm", "redis", "echonet"])
    p.add_argument("--target", required=True, help="HOST:PORT (the fault proxy)")
    p.add_argument("--log", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--prefix", default="soak:0.0:", help="redis: this worker's keys")
    p.add_argument(
        "--replies-only",
        action="store_true",
        help="redis: a server without a keyspace (the floor): count replies only",
    )
    p.add_argument("--props", default="", help="echonet: the EPCs this worker sets (hex)")
    p.add_argument("--node-addr", default="0.0.0.0", help="echonet: the node's address")
    p.add_argument(
        "--no-refused",
        action="store_true",
        help="echonet: send only SetCs the node accepts",
    )
    p.add_argument(
        "--floor",
        action="store_true",
        help="echonet: the floor (only the benchmark's Gets of the node profile)",
    )
    p.add_argument("--gap", type=float, default=1.0,
                   help="echonet: seconds between two SetC of one property")  # fmt: skip
    args = p.parse_args()
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    log = Log(args.log)
    log.write(started=args.kind, pid=os.getpid())
    {"comm": comm_worker, "redis": redis_worker, "echonet": echonet_worker}[args.kind](args, log)


if __name__ == "__main__":
    main()
