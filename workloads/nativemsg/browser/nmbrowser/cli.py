"""The command line, the native driver's own (docs/decisions.md, "Drivers"), so the harness
runs either driver the same way:

    driver.py --mode persistent|spawn --op ping|echo --size BYTES --iterations N --warmup N
              [--driver-cpus L] [--host-cpus L] [--host-stderr PATH] [--host-cwd DIR]
              [--timeout-s S] [--check-full N] -- HOST_ARGV...

Usage errors exit 2 with a message on stderr, as clap does for the native driver.
"""

from __future__ import annotations

import argparse
import math
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
    host_cpus: list[int] | None
    host_stderr: str | None
    host_cwd: str | None
    timeout_s: float
    check_full: int
    host_argv: list[str]


def _cpu_list(text: str) -> list[int]:
    try:
        cpus = [int(c) for c in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated CPU list: {text!r}") from None
    if any(c < 0 for c in cpus):
        raise argparse.ArgumentTypeError(f"CPU numbers are ≥ 0: {text!r}")
    return cpus


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be ≥ 0: {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="driver.py",
        description="Measures a Native Messaging host through headless Chromium and the lab's "
        "extension; latencies are timed in the extension page. Prints one JSON object.",
        epilog='Exit status: 0 with the results on stdout; 1 with {"error": "..."} on stdout '
        "when the trial failed; 2 for a bad command line.",
    )
    p.add_argument("--mode", required=True, choices=["persistent", "spawn"])
    p.add_argument("--op", required=True, choices=["ping", "echo"])
    p.add_argument("--size", type=_count, default=0, metavar="BYTES")
    p.add_argument("--iterations", type=_count, required=True, metavar="N")
    p.add_argument("--warmup", type=_count, required=True, metavar="N")
    p.add_argument("--driver-cpus", type=_cpu_list, metavar="CPUS")
    p.add_argument("--host-cpus", type=_cpu_list, metavar="CPUS")
    p.add_argument(
        "--host-stderr",
        metavar="PATH",
        help="append Chromium's stderr (and so the hosts') to this file",
    )
    p.add_argument(
        "--host-cwd",
        metavar="DIR",
        help="honoured for hosts that need a launcher "
        "(Python); Chromium runs a program in its own directory",
    )
    p.add_argument("--timeout-s", type=float, default=60.0, metavar="SECONDS")
    p.add_argument("--check-full", type=_count, default=50, metavar="N")
    return p


def parse(argv: list[str]) -> Args:
    p = parser()
    if "--" not in argv:
        p.error("the host command line is missing: ... -- HOST_ARGV...")
    split = argv.index("--")
    ns = p.parse_args(argv[:split])
    host_argv = argv[split + 1 :]
    if not host_argv:
        p.error("the host command line after -- is empty")
    args = Args(**vars(ns), host_argv=host_argv)
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
