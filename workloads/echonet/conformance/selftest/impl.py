"""The echonet self-test's implementation: a small, correct ECHONET Lite node and controller
(SPEC.md §3-§8, standard library only) or, with --bug NAME, the same with ONE classic mistake.
test_selftest.py checks that the suite catches every bug. Written apart from the suite's
echonet_spec.py on purpose: a shared mistake would pass unnoticed.

    impl.py node [--bug NAME] [--bind IPV4] [--ifaddr IPV4] [--port N]
    impl.py controller [--bug NAME] [--bind IPV4] ... COMMAND ARGS...
    impl.py --list-bugs
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import select
import signal
import socket
import sys
import time

NODE_BUGS = {
    "propmap-trusts-n": "writes 16 as N in every bitmap-form property map (the peers' mistake)",
    "bitmap-wrong-bit": "bitmap bit j stands for high nibble 0xF - j instead of 8 + j",
    "no-get-sna": "a Get with an unreadable EPC is answered 0x72 (PDC 0), never 0x52",
    "sna-drops-readable": "Get_SNA gives every EPC PDC 0, readable ones too",
    "reply-to-3610": "replies go to the requester's port 3610, whatever the source port",
    "tid-byteswap": "the reply's TID has its two bytes swapped",
    "answers-malformed": "trailing bytes and a too-large OPC are tolerated and answered",
    "format2-answered": "format 2 frames are answered as if format 1",
    "counts-nothing": "every counter stays 0",
    "seti-replies-on-success": "a successful SetI is answered with Set_Res",
    "setc-applies-refused": "an out-of-range Set value is stored although refused",
    "instance-zero-ignored": "DEOJ instance 0x00 is ignored instead of meaning every instance",
}
CONTROLLER_BUGS = {
    "accepts-any-tid": "any reply from the node with a matching ESV is taken, whatever its TID",
    "accepts-any-source": "a reply with the right TID is taken from any address",
    "no-retry": "a request is sent once, --retries is ignored",
    "retries-forever": "an unanswered request is resent forever",
    "tid-starts-at-0": "the first TID is 0",
}

GROUP = "224.0.23.0"
NODE_PROFILE, AIRCON, CONTROLLER = 0x0EF001, 0x013001, 0x05FF01
GET, SETI, SETC, INF_REQ, SETGET, INFC = 0x62, 0x60, 0x61, 0x63, 0x6E, 0x74
REQUEST_ESVS = {GET, SETI, SETC, INF_REQ, SETGET, INFC}

BUG: str | None = None


# ---- frame and property maps ---------------------------------------------------------------


class Malformed(Exception):
    pass


class Format2(Exception):
    pass


def read_props(data: bytes, i: int) -> tuple[list[tuple[int, bytes]], int]:
    if i >= len(data):
        raise Malformed("no OPC")
    n, i = data[i], i + 1
    out = []
    for _ in range(n):
        if i + 2 > len(data):
            if BUG == "answers-malformed":
                break
            raise Malformed("OPC past the payload")
        pdc = data[i + 1]
        if i + 2 + pdc > len(data):
            raise Malformed("PDC past the end")
        out.append((data[i], bytes(data[i + 2 : i + 2 + pdc])))
        i += 2 + pdc
    return out, i


def decode(data: bytes):
    """(tid bytes, seoj, deoj, esv, props, gets or None)."""
    if len(data) < 12 or data[0] != 0x10 or data[1] not in (0x81, 0x82):
        raise Malformed("header")
    if data[1] == 0x82 and BUG != "format2-answered":
        raise Format2()
    esv = data[10]
    props, i = read_props(data, 11)
    gets = None
    if esv in (SETGET, 0x7E, 0x5E):  # the SetGet family: OPCSet and OPCGet
        gets, i = read_props(data, i)
        if not props and not gets:
            raise Malformed("OPC 0")
    elif not props:
        raise Malformed("OPC 0")
    if i != len(data) and BUG != "answers-malformed":
        raise Malformed("trailing bytes")
    seoj = int.from_bytes(data[4:7], "big")
    deoj = int.from_bytes(data[7:10], "big")
    return data[2:4], seoj, deoj, esv, props, gets


def encode_props(props) -> bytes:
    out = bytearray([len(props)])
    for epc, edt in props:
        out += bytes([epc, len(edt)]) + edt
    return bytes(out)


def encode(tid: bytes, seoj: int, deoj: int, esv: int, props, gets=None) -> bytes:
    out = b"\x10\x81" + tid + seoj.to_bytes(3, "big") + deoj.to_bytes(3, "big") + bytes([esv])
    out += encode_props(props)
    if gets is not None:
        out += encode_props(gets)
    return out


def propmap(epcs) -> bytes:
    epcs = sorted(epcs)
    if len(epcs) < 16:
        return bytes([len(epcs), *epcs])
    bits = bytearray(16)
    for e in epcs:
        j = (e >> 4) - 8
        if BUG == "bitmap-wrong-bit":
            j = 7 - j
        bits[e & 0xF] |= 1 << j
    n = 16 if BUG == "propmap-trusts-n" else len(epcs)
    return bytes([n]) + bytes(bits)


# ---- the objects ---------------------------------------------------------------------------


def objects(addr: str) -> dict[int, dict[int, bytes]]:
    node = {
        0x80: b"\x30",
        0x82: bytes.fromhex("010e0100"),
        0x83: bytes.fromhex("feffffff") + bytes(9) + socket.inet_aton(addr),
        0x8A: b"\xff\xff\xff",
        0x9D: propmap([0x80, 0xD5]),
        0x9E: propmap([]),
        0xD3: bytes.fromhex("000001"),
        0xD4: bytes.fromhex("0002"),
        0xD5: bytes.fromhex("01013001"),
        0xD6: bytes.fromhex("01013001"),
        0xD7: bytes.fromhex("010130"),
    }
    node[0x9F] = propmap(list(node) + [0x9F])
    ac = {
        0x80: b"\x31", 0x81: b"\x00", 0x82: bytes.fromhex("00005201"), 0x88: b"\x42",
        0x8A: b"\xff\xff\xff", 0x8F: b"\x42", 0x93: b"\x42", 0x97: bytes.fromhex("0c00"),
        0x98: bytes.fromhex("07e60101"), 0x9D: propmap([0x80, 0x81, 0x88, 0xB0]),
        0x9E: propmap(list(ACCEPTS)), 0xA0: b"\x41", 0xB0: b"\x41", 0xB1: b"\x41",
        0xB3: b"\x14", 0xBA: b"\x32", 0xBB: b"\x14",
    }  # fmt: skip
    ac[0x9F] = propmap(list(ac) + [0x9F])
    return {NODE_PROFILE: node, AIRCON: ac}


ACCEPTS = {
    0x80: range(0x30, 0x32),
    0x81: range(0x00, 0x100),
    0xA0: [*range(0x31, 0x39), 0x41],
    0xB0: range(0x40, 0x46),
    0xB3: range(0x00, 0x33),
}


def try_set(obj_id: int, values: dict[int, bytes], epc: int, edt: bytes) -> bool:
    ok = obj_id == AIRCON and epc in ACCEPTS and len(edt) == 1 and edt[0] in ACCEPTS[epc]
    if ok or (BUG == "setc-applies-refused" and obj_id == AIRCON and epc in values and edt):
        values[epc] = edt
    return ok


# ---- the responder -------------------------------------------------------------------------


def get_part(values, props):
    out, ok = [], True
    for epc, _ in props:
        if epc in values:
            out.append((epc, values[epc]))
        else:
            ok = False
            out.append((epc, b""))
    if not ok and BUG == "sna-drops-readable":
        out = [(e, b"") for e, _ in out]
    return out, ok


def set_part(obj_id, values, props):
    out, ok = [], True
    for epc, edt in props:
        if try_set(obj_id, values, epc, edt):
            out.append((epc, b""))
        else:
            ok = False
            out.append((epc, edt))
    return out, ok


def answer(objs, obj_id, tid, seoj, esv, props, gets):
    """The reply of object `obj_id` (None: no reply)."""
    values = objs[obj_id]
    if esv in (GET, INF_REQ):
        out, ok = get_part(values, props)
        if BUG == "no-get-sna":
            ok = True
        esv_out = (0x72 if ok else 0x52) if esv == GET else (0x73 if ok else 0x53)
        return encode(tid, obj_id, seoj, esv_out, out)
    if esv in (SETI, SETC):
        out, ok = set_part(obj_id, values, props)
        if ok:
            if esv == SETI and BUG != "seti-replies-on-success":
                return None
            return encode(tid, obj_id, seoj, 0x71, out)
        return encode(tid, obj_id, seoj, 0x50 if esv == SETI else 0x51, out)
    if esv == SETGET:
        s, ok1 = set_part(obj_id, values, props)
        g, ok2 = get_part(values, gets)
        return encode(tid, obj_id, seoj, 0x7E if ok1 and ok2 else 0x5E, s, g)
    if esv == INFC:
        return encode(tid, obj_id, seoj, 0x7A, [(e, b"") for e, _ in props])
    return None


# ---- the node program ----------------------------------------------------------------------


def ipv4(text: str) -> str:
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an IPv4 address: {text!r}") from None


def port_number(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port: {text!r}") from None
    if not 1 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"port outside 1-65535: {n}")
    return n


def node_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="impl.py node", allow_abbrev=False)
    p.add_argument("--bind", type=ipv4, default="0.0.0.0")
    p.add_argument("--ifaddr", type=ipv4, default=None)
    p.add_argument("--port", type=port_number, default=3610)
    a = p.parse_args(argv)
    ifaddr = a.ifaddr or a.bind
    c = dict.fromkeys(("received", "requests", "replies", "ignored", "dropped_malformed",
                       "dropped_format2", "send_errors"), 0)  # fmt: skip
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind((a.bind, a.port))
    except OSError as e:
        print(f"cannot bind {a.bind}:{a.port}: {e.strerror}", file=sys.stderr)
        return 1
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(ifaddr))
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    if a.bind == "0.0.0.0":
        mreq = socket.inet_aton(GROUP) + socket.inet_aton(ifaddr)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
    objs = objects(ifaddr)
    try:
        inf = encode(
            b"\x00\x01", NODE_PROFILE, NODE_PROFILE, 0x73, [(0xD5, objs[NODE_PROFILE][0xD5])]
        )
        sock.sendto(inf, (GROUP, a.port))
    except OSError as e:
        c["send_errors"] += 1
        print(f"start INF not sent: {e.strerror}", file=sys.stderr)
    stop = []
    rfd, wfd = os.pipe()
    os.set_blocking(wfd, False)
    signal.set_wakeup_fd(wfd)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, f: stop.append(s))
    print("READY", flush=True)
    sock.setblocking(False)
    while not stop:
        try:
            select.select([sock, rfd], [], [])
        except InterruptedError:
            continue
        while not stop:
            try:
                data, src = sock.recvfrom(65536)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                continue
            c["received"] += 1
            serve(sock, objs, data, src, c, a.port)
    if BUG == "counts-nothing":
        c = dict.fromkeys(c, 0)
    print(json.dumps(c), flush=True)
    return 0


def serve(sock, objs, data, src, c, port) -> None:
    try:
        tid, seoj, deoj, esv, props, gets = decode(data)
    except Malformed:
        c["dropped_malformed"] += 1
        return
    except Format2:
        c["dropped_format2"] += 1
        return
    cls, inst = deoj >> 8, deoj & 0xFF
    targets = [o for o in objs if o >> 8 == cls and (inst == (o & 0xFF) or
               (inst == 0 and BUG != "instance-zero-ignored"))]  # fmt: skip
    if esv not in REQUEST_ESVS or not targets:
        c["ignored"] += 1
        return
    c["requests"] += 1
    if BUG == "tid-byteswap":
        tid = tid[::-1]
    dest = (src[0], 3610) if BUG == "reply-to-3610" else src
    for obj_id in targets:
        out = answer(objs, obj_id, tid, seoj, esv, props, gets)
        if out is None:
            continue
        try:
            sock.sendto(out, dest)
            c["replies"] += 1
        except OSError:
            c["send_errors"] += 1


# ---- the controller ------------------------------------------------------------------------


class Unanswered(Exception):
    pass


REPLIES = {GET: (0x72, 0x52), SETC: (0x71, 0x51), SETI: (0x50,), SETGET: (0x7E, 0x5E),
           INF_REQ: (0x73, 0x53)}  # fmt: skip


class Controller:
    def __init__(self, bind: str, ifaddr: str, port: int, timeout_ms: int, retries: int):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((bind, port))
        self.sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(ifaddr))
        self.sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
        self.port, self.timeout, self.retries = port, timeout_ms / 1000, retries
        self.tid = 0 if BUG == "tid-starts-at-0" else 1
        self.ignored = 0
        self.retried = 0

    def next_tid(self) -> bytes:
        t = self.tid
        self.tid = (self.tid + 1) & 0xFFFF or 1
        return t.to_bytes(2, "big")

    def wait(self, until: float, accept):
        """The first datagram `accept` takes before `until`; the others are counted ignored."""
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                data, src = self.sock.recvfrom(65536)
            except TimeoutError:
                return None
            try:
                f = decode(data)
            except (Malformed, Format2):
                self.ignored += 1
                continue
            if accept(f, src):
                return f, src
            self.ignored += 1

    def request(self, host: str, deoj: int, esv: int, props, gets=None, once=False):
        tid = self.next_tid()
        data = encode(tid, CONTROLLER, deoj, esv, props, gets)
        attempts = 0
        limit = 1 if once or BUG == "no-retry" else 1 + self.retries

        def accept(f, src):
            return ((f[0] == tid or BUG == "accepts-any-tid")
                    and (src[0] == host or BUG == "accepts-any-source")
                    and f[3] in REPLIES[esv])  # fmt: skip

        while attempts < limit or BUG == "retries-forever":
            attempts += 1
            self.sock.sendto(data, (host, self.port))
            got = self.wait(time.monotonic() + self.timeout, accept)
            if got is not None:
                self.retried += attempts - 1
                return got[0], got[1], attempts
        if once:
            return None, None, attempts
        raise Unanswered(f"no reply from {host} after {attempts} attempts")


def props_json(props):
    return [{"epc": f"{e:02x}", "edt": d.hex()} for e, d in props]


def reply_json(f, src, attempts, ignored) -> dict:
    tid, seoj, deoj, esv, props, gets = f
    doc = {"host": src[0], "tid": tid.hex(), "seoj": f"{seoj:06x}", "deoj": f"{deoj:06x}",
           "esv": f"{esv:02x}"}  # fmt: skip
    if gets is None:
        doc["properties"] = props_json(props)
    else:
        doc["set"], doc["get"] = props_json(props), props_json(gets)
    doc.update(attempts=attempts, ignored=ignored)
    return doc


class Usage(Exception):
    pass


def parse_eoj(text: str) -> int:
    if len(text) != 6:
        raise Usage(f"EOJ must be six hex digits: {text!r}")
    try:
        return int(text, 16)
    except ValueError:
        raise Usage(f"EOJ must be six hex digits: {text!r}") from None


def parse_epcs(text: str) -> list[tuple[int, bytes]]:
    out = []
    for item in text.split(","):
        if len(item) != 2:
            raise Usage(f"an EPC is two hex digits: {item!r}")
        try:
            out.append((int(item, 16), b""))
        except ValueError:
            raise Usage(f"an EPC is two hex digits: {item!r}") from None
    return out


def parse_sets(text: str) -> list[tuple[int, bytes]]:
    out = []
    for item in text.split(","):
        epc, sep, data = item.partition("=")
        if not sep:
            raise Usage(f"a Set is EPC=HEXDATA: {item!r}")
        try:
            out.append((parse_epcs(epc)[0][0], bytes.fromhex(data)))
        except ValueError:
            raise Usage(f"bad hex data in {item!r}") from None
    return out


BENCH_EPCS = [0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7]


def controller_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="impl.py controller", allow_abbrev=False)
    p.add_argument("--bind", type=ipv4, default="0.0.0.0")
    p.add_argument("--ifaddr", type=ipv4, default=None)
    p.add_argument("--port", type=port_number, default=3610)
    p.add_argument("--timeout-ms", type=int, default=500)
    p.add_argument("--retries", type=int, default=3)
    p.add_argument("command")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    try:
        if a.timeout_ms < 1 or a.retries < 0:
            raise Usage("--timeout-ms must be >= 1 and --retries >= 0")
        run = command(a)
    except Usage as e:
        print(f"impl.py controller: {e}", file=sys.stderr)
        return 2
    try:
        ctl = Controller(a.bind, a.ifaddr or a.bind, a.port, a.timeout_ms, a.retries)
    except OSError as e:
        print(json.dumps({"error": f"cannot bind {a.bind}:{a.port}: {e.strerror}"}))
        return 1
    try:
        doc = run(ctl)
    except Unanswered as e:
        print(json.dumps({"error": str(e)}))
        return 1
    print(json.dumps(doc))
    return 0


def command(a):
    """The command's work as a function of the controller (usage errors raised here)."""
    cmd, args = a.command, a.args

    def need(n):
        if len(args) != n:
            raise Usage(f"{cmd} takes {n} arguments, not {len(args)}")

    if cmd in ("get", "setc", "seti", "setget", "inf-req"):
        need(4 if cmd == "setget" else 3)
        host = str(ipv4_usage(args[0]))
        deoj = parse_eoj(args[1])
        if cmd in ("get", "inf-req"):
            props, gets, esv = parse_epcs(args[2]), None, GET if cmd == "get" else INF_REQ
        elif cmd == "setget":
            props, gets, esv = parse_sets(args[2]), parse_epcs(args[3]), SETGET
        else:
            props, gets, esv = parse_sets(args[2]), None, SETC if cmd == "setc" else SETI

        def run(ctl):
            f, src, attempts = ctl.request(host, deoj, esv, props, gets, once=(esv == SETI))
            if f is None:
                return {"host": host, "tid": "0001", "esv": None, "attempts": attempts,
                        "ignored": ctl.ignored}  # fmt: skip
            return reply_json(f, src, attempts, ctl.ignored)

        return run
    if cmd == "discover":
        q = argparse.ArgumentParser(prog="discover", allow_abbrev=False)
        q.add_argument("--expect", type=int, default=None)
        q.add_argument("--wait-ms", type=int, default=1000)
        d = parse_sub(q, args)
        return lambda ctl: discover(ctl, d.expect, d.wait_ms)
    if cmd == "bench":
        if not args:
            raise Usage("bench needs HOST")
        host = str(ipv4_usage(args[0]))
        q = argparse.ArgumentParser(prog="bench", allow_abbrev=False)
        q.add_argument("--mode", choices=["faithful", "batched"], required=True)
        q.add_argument("--iterations", type=int, required=True)
        q.add_argument("--warmup", type=int, default=0)
        b = parse_sub(q, args[1:])
        return lambda ctl: bench(ctl, host, b.mode, b.iterations, b.warmup)
    raise Usage(f"unknown command {cmd!r}")


def ipv4_usage(text: str):
    try:
        return ipaddress.IPv4Address(text)
    except ValueError:
        raise Usage(f"not an IPv4 address: {text!r}") from None


def parse_sub(q: argparse.ArgumentParser, args: list[str]):
    try:
        return q.parse_args(args)
    except SystemExit:
        raise Usage(f"bad arguments: {' '.join(args)}") from None


def discover(ctl: Controller, expect, wait_ms) -> dict:
    tid = ctl.next_tid()
    data = encode(tid, CONTROLLER, NODE_PROFILE, GET, [(0xD6, b"")])
    nodes: dict[str, dict] = {}
    start = last = time.monotonic()

    def accept(f, src):
        return f[0] == tid and f[3] == 0x72 and src[0] not in nodes

    attempts = 0
    while True:
        attempts += 1
        ctl.sock.sendto(data, (GROUP, ctl.port))
        until = time.monotonic() + (ctl.timeout if expect else wait_ms / 1000)
        while expect is None or len(nodes) < expect:
            got = ctl.wait(until, accept)
            if got is None:
                break
            f, src = got
            edt = dict(f[4]).get(0xD6, b"")
            insts = [edt[i : i + 3].hex() for i in range(1, 1 + 3 * edt[0], 3)] if edt else []
            nodes[src[0]] = {"host": src[0], "eoj": f"{f[1]:06x}", "instances": insts}
            last = time.monotonic()
        if expect is None or len(nodes) >= expect:
            break
        if attempts > ctl.retries:
            raise Unanswered(f"{len(nodes)} of {expect} nodes answered")
    hosts = sorted(nodes, key=lambda a: socket.inet_aton(a))
    return {"nodes": [nodes[h] for h in hosts], "elapsed_s": round(last - start, 6),
            "attempts": attempts, "ignored": ctl.ignored}  # fmt: skip


def bench(ctl: Controller, host: str, mode: str, iterations: int, warmup: int) -> dict:
    asks = [[e] for e in BENCH_EPCS] if mode == "faithful" else [BENCH_EPCS]
    requests = 0
    start = time.monotonic()
    for it in range(warmup + iterations):
        if it == warmup:
            start, requests = time.monotonic(), 0
        for epcs in asks:
            f, _, _ = ctl.request(host, NODE_PROFILE, GET, [(e, b"") for e in epcs])
            if f[3] != 0x72 or [e for e, _ in f[4]] != epcs:
                raise Unanswered(f"wrong reply to a Get of {epcs}")
            requests += 1
    elapsed = time.monotonic() - start
    return {
        "mode": mode,
        "iterations": iterations,
        "requests": requests,
        "elapsed_s": round(elapsed, 6),
        "retries": ctl.retried,
        "ignored": ctl.ignored,
    }


def main() -> int:
    global BUG
    args = sys.argv[1:]
    if args == ["--list-bugs"]:
        print("\n".join([*NODE_BUGS, *CONTROLLER_BUGS]))
        return 0
    if not args or args[0] not in ("node", "controller"):
        print("usage: impl.py node|controller [--bug NAME] ...", file=sys.stderr)
        return 2
    role, rest = args[0], args[1:]
    if rest[:1] == ["--bug"]:
        if len(rest) < 2 or rest[1] not in (NODE_BUGS if role == "node" else CONTROLLER_BUGS):
            print(f"unknown bug for the {role}", file=sys.stderr)
            return 2
        BUG, rest = rest[1], rest[2:]
    return node_main(rest) if role == "node" else controller_main(rest)


if __name__ == "__main__":
    sys.exit(main())
