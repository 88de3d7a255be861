"""The test's own multicast peer, run inside a network namespace (a process enters a namespace;
a thread of pytest cannot): `h.wrap([python, mcast_helper.py, ...])`. Standard library only.

    mcast_helper.py listen --ifaddr A --count N --timeout-s S
        joins 224.0.23.0 on A (bound to 0.0.0.0:3610), prints READY, then collects datagrams
        until N have come or S seconds passed
    mcast_helper.py get --bind A --expect N --timeout-s S [--deoj 0ef001] [--tid 0101]
        multicasts a Get of 0xD6 from A:3610 (resent every 0.5 s) and collects the unicast
        answers until N sources answered, then 0.2 s more (duplicates would show)

Both print one JSON object: {"attempts": multicasts sent (get), "datagrams": [{"src": [addr,
port], "data": hex}, ...]}.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time

GROUP, PORT = "224.0.23.0", 3610


def collect(sock: socket.socket, until: float, done) -> list[dict]:
    got: list[dict] = []
    while time.monotonic() < until and not done(got):
        sock.settimeout(max(0.001, until - time.monotonic()))
        try:
            data, src = sock.recvfrom(65536)
        except TimeoutError:
            break
        got.append({"src": list(src), "data": data.hex()})
    return got


def listen(a) -> dict:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", PORT))
    mreq = socket.inet_aton(GROUP) + socket.inet_aton(a.ifaddr)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
    print("READY", flush=True)
    got = collect(s, time.monotonic() + a.timeout_s, lambda got: len(got) >= a.count)
    return {"attempts": 0, "datagrams": got}


def get(a) -> dict:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((a.bind, PORT))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(a.bind))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    req = (bytes.fromhex("1081") + bytes.fromhex(a.tid) + bytes.fromhex("05ff01")
           + bytes.fromhex(a.deoj) + bytes.fromhex("6201d600"))  # fmt: skip
    end = time.monotonic() + a.timeout_s

    def answered(datagrams: list[dict]) -> bool:
        return len({tuple(d["src"]) for d in datagrams}) >= a.expect

    got: list[dict] = []
    attempts = 0
    while time.monotonic() < end and not answered(got):
        s.sendto(req, (GROUP, PORT))
        attempts += 1
        got += collect(s, min(end, time.monotonic() + 0.5), lambda g, seen=got: answered(seen + g))
    got += collect(s, time.monotonic() + 0.2, lambda g: False)
    return {"attempts": attempts, "datagrams": got}


def main() -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("listen")
    q.add_argument("--ifaddr", required=True)
    q.add_argument("--count", type=int, required=True)
    q.add_argument("--timeout-s", type=float, default=5.0)
    q = sub.add_parser("get")
    q.add_argument("--bind", required=True)
    q.add_argument("--expect", type=int, required=True)
    q.add_argument("--timeout-s", type=float, default=3.0)
    q.add_argument("--deoj", default="0ef001")
    q.add_argument("--tid", default="0101")
    a = p.parse_args()
    out = listen(a) if a.cmd == "listen" else get(a)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
