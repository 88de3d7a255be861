#!/usr/bin/env python3
"""A small ECHONET Lite node for the driver's own tests (standard library only): SPEC §7's
command line, READY, the start INF, the node profile's Get (SPEC §5, §6) and the JSON counters
on SIGTERM. Only Get is served (the driver sends nothing else); `--behaviour NAME` picks a
fault to show how the driver reports it. It logs its argv, CPU mask and network namespace to
stderr, so a test can see how the driver started it.

    fake_node.py [--behaviour NAME] [--bind IPV4] [--ifaddr IPV4] [--port N]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import struct
import sys

GROUP = "224.0.23.0"
NODE_PROFILE = bytes([0x0E, 0xF0, 0x01])
BEHAVIOURS = [
    "good",
    "wrong-bytes",  # the 5th request's reply has a wrong EDT byte
    "wrong-port",  # the 3rd request is answered from another port
    "wrong-tid",  # replies carry the request's TID + 1, so they never match
    "mute",  # counts every request, answers none
    "die",  # exits with status 3 at the 5th request
    "drop-some",  # leaves every 4th datagram unanswered (the resend is answered)
    "duplicate",  # answers every request twice
    "exit-at-start",  # exits with status 5 before READY
    "no-ready",  # never prints READY
    "bad-exit",  # prints its counters on SIGTERM, then exits with status 3
    "bad-counters",  # received is off by one
    "no-counters",  # prints nothing on SIGTERM, exits 0
    "ignore-term",  # ignores SIGTERM
]


def node_profile(addr: str) -> dict[int, bytes]:
    """The node profile's EDTs (SPEC §5) for a node at `addr`."""
    instances = bytes([0x01, 0x01, 0x30, 0x01])
    return {
        0x80: b"\x30",
        0x82: bytes([0x01, 0x0E, 0x01, 0x00]),
        0x83: bytes([0xFE, 0xFF, 0xFF, 0xFF]) + bytes(9) + socket.inet_aton(addr),
        0x8A: b"\xff\xff\xff",
        0x9D: bytes([0x02, 0x80, 0xD5]),
        0x9E: b"\x00",
        0x9F: bytes([0x0C, 0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7]),
        0xD3: bytes([0x00, 0x00, 0x01]),
        0xD4: bytes([0x00, 0x02]),
        0xD5: instances,
        0xD6: instances,
        0xD7: bytes([0x01, 0x01, 0x30]),
    }


STOP = []


def stop(signum, frame):
    """SIGTERM or SIGINT: the loop ends at its next turn (a flag, not an exception, so a reply
    being sent is counted)."""
    STOP.append(signum)


def parse_properties(frame: bytes) -> list[tuple[int, bytes]] | None:
    """The properties of a format-1 frame, or None if it is malformed (SPEC §3)."""
    opc, at, props = frame[11], 12, []
    if opc == 0:
        return None
    for _ in range(opc):
        if at + 2 > len(frame) or at + 2 + frame[at + 1] > len(frame):
            return None
        epc, pdc = frame[at], frame[at + 1]
        props.append((epc, frame[at + 2 : at + 2 + pdc]))
        at += 2 + pdc
    return props if at == len(frame) else None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--behaviour", choices=BEHAVIOURS, default="good")
    parser.add_argument("--bind", default="0.0.0.0")
    parser.add_argument("--ifaddr")
    parser.add_argument("--port", type=int, default=3610)
    args = parser.parse_args()
    ifaddr = args.ifaddr or args.bind
    behaviour = args.behaviour
    start = {
        "argv": sys.argv[1:],
        "cpus": sorted(os.sched_getaffinity(0)),
        "netns": os.readlink("/proc/self/ns/net"),
    }
    sys.stderr.write(f"start {json.dumps(start)}\n")
    sys.stderr.flush()
    if behaviour == "exit-at-start":
        return 5
    counts = dict.fromkeys(
        [
            "received",
            "requests",
            "replies",
            "ignored",
            "dropped_malformed",
            "dropped_format2",
            "send_errors",
        ],
        0,
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind((args.bind, args.port))
    except OSError as e:
        sys.stderr.write(f"fake_node: cannot bind {args.bind}:{args.port}: {e}\n")
        return 1
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(ifaddr))
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    if args.bind == "0.0.0.0":
        mreq = socket.inet_aton(GROUP) + socket.inet_aton(ifaddr)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
    inf = bytes.fromhex("1081 0001 0ef001 0ef001 73 01 d5 04 01013001")
    try:
        sock.sendto(inf, (GROUP, args.port))
    except OSError as e:
        counts["send_errors"] += 1
        sys.stderr.write(f"fake_node: start INF: {e}\n")
    values = node_profile(ifaddr)
    other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    other.bind((args.bind, 0))

    if behaviour == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # A short timeout, so the loop sees the flag soon after a signal.
    sock.settimeout(0.05)
    if behaviour != "no-ready":
        print("READY", flush=True)
    while not STOP:
        try:
            data, peer = sock.recvfrom(65536)
        except TimeoutError:
            continue
        counts["received"] += 1
        if len(data) < 12 or data[0] != 0x10 or data[1] not in (0x81, 0x82):
            counts["dropped_malformed"] += 1
            continue
        if data[1] == 0x82:
            counts["dropped_format2"] += 1
            continue
        props = parse_properties(data)
        if props is None:
            counts["dropped_malformed"] += 1
            continue
        deoj, esv = data[7:10], data[10]
        if esv != 0x62 or deoj not in (NODE_PROFILE, bytes([0x0E, 0xF0, 0x00])):
            counts["ignored"] += 1
            continue
        counts["requests"] += 1
        n = counts["requests"]
        if behaviour == "mute" or (behaviour == "drop-some" and n % 4 == 0):
            continue
        if behaviour == "die" and n == 5:
            return 3
        tid = data[2:4]
        if behaviour == "wrong-tid":
            tid = struct.pack(">H", (struct.unpack(">H", tid)[0] + 1) & 0xFFFF)
        reply, ok = bytearray(), True
        for epc, _ in props:
            edt = values.get(epc)
            if edt is None:
                ok = False
                reply += bytes([epc, 0])
                continue
            if behaviour == "wrong-bytes" and n == 5:
                edt = bytes([edt[0] ^ 1]) + edt[1:]
            reply += bytes([epc, len(edt)]) + edt
        head = b"\x10\x81" + tid + NODE_PROFILE + data[4:7]
        frame = head + bytes([0x72 if ok else 0x52, len(props)]) + reply
        sender = other if behaviour == "wrong-port" and n == 3 else sock
        for _ in range(2 if behaviour == "duplicate" else 1):
            try:
                sender.sendto(frame, peer)
                counts["replies"] += 1
            except OSError:
                counts["send_errors"] += 1
    if behaviour == "bad-counters":
        counts["received"] += 1
    if behaviour != "no-counters":
        print(json.dumps(counts), flush=True)
    return 3 if behaviour == "bad-exit" else 0


if __name__ == "__main__":
    sys.exit(main())
