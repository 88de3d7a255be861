"""The command line, the native driver's own (its scenario options plus the driver contract's
common ones, docs/driver-contract.md), so the harness runs either driver the same way:

    driver.py --mode persistent|spawn --op ping|echo --size BYTES --iterations N --warmup N
              [--driver-cpus L] [--impl-cpus L] [--impl-stderr PATH] [--impl-cwd DIR]
              [--timeout-s S] [--check-full N] -- HOST_ARGV...

`--port` and `--client-json` are accepted, as every driver accepts them, and ignored. A bad
command line exits 2 with {"error": "bad command line: ..."} on stdout and argparse's message
on stderr, as the native driver does.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass

from .payload import MAX_REQUEST_BODY, MIN_ECHO_SIZE


@dataclass
class Args:
    mode: str
    op: str
    size: int
    iterations: int
    warmup: int
    driver_cpus: list[int] | None
    impl_cpus: list[int] | None
    impl_stderr: str | None
    impl_cwd: str | None
    timeout_s: float
    check_full: int
    port: int | None
    client_json: str | None
    impl_argv: list[str]


#: Exit status of a bad command line (argparse's and clap's).
USAGE = 2


def _cpu_list(text: str) -> list[int]:
    """'0', '1,3' or '0-2,5', in the order given (the native driver's syntax)."""
    cpus: list[int] = []
    for part in text.split(","):
        first, dash, last = part.partition("-")
        try:
            low, high = int(first), int(last if dash else first)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a CPU list: {text!r}") from None
        if low < 0 or high < low:
            raise argparse.ArgumentTypeError(f"not a CPU list: {text!r}")
        cpus.extend(range(low, high + 1))
    return cpus


class _Parser(argparse.ArgumentParser):
    """A bad command line also prints the contract's error document on stdout."""

    def error(self, message: str):
        print(json.dumps({"error": f"bad command line: {message}"}), flush=True)
        self.print_usage(sys.stderr)
        self.exit(USAGE, f"{self.prog}: error: {message}\n")


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be ≥ 0: {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="driver.py",
        description="Measures a Native Messaging host through headless Chromium and the lab's "
        "extension; latencies are timed in the extension page. Prints one JSON object.",
        epilog='Exit status: 0 with the results on stdout; 1 with {"error": "..."} on stdout '
        'when the trial failed; 2 with {"error": "bad command line: ..."} for a bad command line.',
    )
    p.add_argument("--mode", required=True, choices=["persistent", "spawn"])
    p.add_argument("--op", required=True, choices=["ping", "echo"])
    p.add_argument("--size", type=_count, default=0, metavar="BYTES")
    p.add_argument("--iterations", type=_count, required=True, metavar="N")
    p.add_argument("--warmup", type=_count, required=True, metavar="N")
    p.add_argument("--driver-cpus", type=_cpu_list, metavar="CPUS")
    p.add_argument("--impl-cpus", type=_cpu_list, metavar="CPUS")
    p.add_argument(
        "--impl-stderr",
        metavar="PATH",
        help="append Chromium's stderr (and so the hosts') to this file",
    )
    p.add_argument(
        "--impl-cwd",
        metavar="DIR",
        help="honoured for hosts that need a launcher "
        "(Python); Chromium runs a program in its own directory",
    )
    p.add_argument("--timeout-s", type=float, default=60.0, metavar="SECONDS")
    p.add_argument("--check-full", type=_count, default=50, metavar="N")
    p.add_argument("--port", type=int, help="ignored: a host talks over its stdio")
    p.add_argument("--client-json", metavar="JSON", help="ignored: a host has no client program")
    return p


def parse(argv: list[str]) -> Args:
    p = parser()
    if "--" not in argv:
        p.error("the host command line is missing: ... -- HOST_ARGV...")
    split = argv.index("--")
    ns = p.parse_args(argv[:split])
    impl_argv = argv[split + 1 :]
    if not impl_argv:
        p.error("the host command line after -- is empty")
    args = Args(**vars(ns), impl_argv=impl_argv)
    problem = validate(args)
    if problem:
        p.error(problem)
    return args


def validate(args: Args) -> str | None:
    """What argparse cannot check: ranges and combinations (the native driver's rules)."""
    if args.iterations < 1:
        return "--iterations must be at least 1"
    if not (math.isfinite(args.timeout_s) and 0 < args.timeout_s <= 1e9):
        return f"--timeout-s must be a positive number of seconds, not {args.timeout_s}"
    if args.op == "ping" and args.size != 0:
        return (
            'ping always sends the 13-byte {"op":"ping"}; --size applies to echo '
            f"(got --size {args.size})"
        )
    if args.op == "echo" and not MIN_ECHO_SIZE <= args.size <= MAX_REQUEST_BODY:
        return (
            f"--size for echo must be {MIN_ECHO_SIZE}..={MAX_REQUEST_BODY} bytes, not {args.size}"
        )
    return None
