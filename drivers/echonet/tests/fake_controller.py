#!/usr/bin/env python3
"""A small ECHONET Lite controller for the driver's own tests (standard library only): SPEC
§8's `bench HOST --mode faithful`, for real, against the node, with its JSON. The environment
variable FAKE_CONTROLLER picks a fault: `fail` (exit 1 with an error), `miscount` (reports one
iteration less), `hang`. It logs its argv and CPU mask to stderr.

    fake_controller.py [--bind IPV4] [--ifaddr IPV4] [--port N] [--timeout-ms MS]
                       [--retries N] bench HOST --mode faithful --iterations N [--warmup N]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time

EPCS = [0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7]


def main() -> int:
    start = {"argv": sys.argv[1:], "cpus": sorted(os.sched_getaffinity(0))}
    sys.stderr.write(f"controller {json.dumps(start)}\n")
    sys.stderr.flush()
    parser = argparse.ArgumentParser()
    parser.add_argument("--bind", default="0.0.0.0")
    parser.add_argument("--ifaddr")
    parser.add_argument("--port", type=int, default=3610)
    parser.add_argument("--timeout-ms", type=int, default=500)
    parser.add_argument("--retries", type=int, default=3)
    parser.add_argument("command", choices=["bench"])
    parser.add_argument("host")
    parser.add_argument("--mode", choices=["faithful"], required=True)
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument("--warmup", type=int, default=0)
    args = parser.parse_args()
    fault = os.environ.get("FAKE_CONTROLLER", "good")
    if fault == "fail":
        print(json.dumps({"error": "Get 0x83 to the node: no reply after 4 attempts"}))
        return 1
    if fault == "hang":
        time.sleep(120)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((args.bind, args.port))
    sock.settimeout(args.timeout_ms / 1000)
    node = (args.host, args.port)
    tid, retries, ignored = 0, 0, 0
    started = None
    for iteration in range(args.warmup + args.iterations):
        if iteration == args.warmup:
            started = time.perf_counter()
        for epc in EPCS:
            tid = tid % 0xFFFF + 1
            request = bytes.fromhex("1081") + tid.to_bytes(2, "big")
            request += bytes.fromhex("05ff01 0ef001 62 01") + bytes([epc, 0])
            for attempt in range(args.retries + 1):
                retries += attempt > 0
                sock.sendto(request, node)
                try:
                    while True:
                        data, peer = sock.recvfrom(65536)
                        if peer[0] == args.host and data[2:4] == request[2:4]:
                            break
                        ignored += 1
                except TimeoutError:
                    continue
                if data[10] != 0x72 or data[12] != epc:
                    print(json.dumps({"error": f"wrong reply to Get 0x{epc:02x}"}))
                    return 1
                break
            else:
                print(json.dumps({"error": f"Get 0x{epc:02x}: no reply"}))
                return 1
    elapsed = time.perf_counter() - started
    iterations = args.iterations - (fault == "miscount")
    report = {
        "mode": "faithful",
        "iterations": iterations,
        "requests": 12 * iterations,
        "elapsed_s": round(elapsed, 6),
        "retries": retries,
        "ignored": ignored,
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
