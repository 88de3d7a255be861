"""The echonet controller (SPEC §8).

    python -E -S controller_main.py [--bind IPV4] [--ifaddr IPV4] [--port N] [--timeout-ms MS]
        [--retries N] COMMAND ARGS...

Commands: get, setc, seti, setget, inf-req, discover, bench. Success: one JSON object on
stdout, exit 0 (a refusal is a reply). A request left unanswered or a wrong reply: {"error":
...} on stdout, exit 1. A bad command line: a message on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import frame
import options
import transport
from controller import Controller, NoReply, WrongReply
from frame import Frame

# The node profile's 12 implementation-required properties, in the seed's order.
BENCH_EPCS = (0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7)


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _is_hex(text: str) -> bool:
    # bytes.fromhex and int(x, 16) also take spaces, signs and "0x": only digits pass here.
    return all(c in _HEX_DIGITS for c in text)


def _hex_byte(text: str) -> int:
    if len(text) != 2 or not _is_hex(text):
        raise ValueError
    return int(text, 16)


def eoj(text: str) -> bytes:
    """Six hex digits, e.g. 0ef001."""
    if len(text) != 6 or not _is_hex(text):
        raise argparse.ArgumentTypeError(f"bad EOJ {text!r}: expected six hex digits")
    return bytes.fromhex(text)


def epcs(text: str) -> list[int]:
    """Comma-separated two-digit hex EPCs, e.g. 80,82 (1 to 255 of them)."""
    try:
        out = [_hex_byte(item) for item in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad EPC list {text!r}: expected e.g. 80,82") from None
    if len(out) > 255:
        raise argparse.ArgumentTypeError(f"{len(out)} EPCs: at most 255 fit in one request")
    return out


def sets(text: str) -> list[tuple[int, bytes]]:
    """Comma-separated EPC=HEXDATA, e.g. 80=30,b3=19 (HEXDATA may be empty: PDC 0)."""
    out = []
    try:
        for item in text.split(","):
            epc_text, eq, data = item.partition("=")
            if not eq or len(data) % 2 or len(data) > 2 * 255 or not _is_hex(data):
                raise ValueError
            out.append((_hex_byte(epc_text), bytes.fromhex(data)))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"bad property list {text!r}: expected e.g. 80=30,b3=19"
        ) from None
    if len(out) > 255:
        raise argparse.ArgumentTypeError(f"{len(out)} properties: at most 255 fit in one request")
    return out


def build_parser() -> argparse.ArgumentParser:
    def controller_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
        options.add_network_options(parser, suppress)
        parser.add_argument(
            "--timeout-ms", type=options.integer(1, 86_400_000), metavar="MS",
            default=argparse.SUPPRESS if suppress else 500,
            help="how long one attempt waits for its reply (500)",
        )  # fmt: skip
        parser.add_argument(
            "--retries", type=options.integer(0, 1_000_000), metavar="N",
            default=argparse.SUPPRESS if suppress else 3, help="attempts after the first (3)",
        )  # fmt: skip

    parser = options.Parser(
        prog="controller_main.py", description="An ECHONET Lite controller over UDP."
    )
    controller_options(parser, suppress=False)
    # The same options are accepted after the command too; given there, they win.
    late = options.Parser(add_help=False)
    controller_options(late, suppress=True)

    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, what: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=what, parents=[late], allow_abbrev=False)

    host = {"type": options.ipv4, "metavar": "HOST"}
    target = {"type": eoj, "metavar": "EOJ"}

    sub = command("get", "one Get; prints the reply")
    sub.add_argument("host", **host)
    sub.add_argument("eoj", **target)
    sub.add_argument("epcs", type=epcs, metavar="EPCS")

    for name, what in (
        ("setc", "one SetC; prints the reply"),
        ("seti", "one SetI, sent once; prints the SetI_SNA, or esv null when none came"),
    ):
        sub = command(name, what)
        sub.add_argument("host", **host)
        sub.add_argument("eoj", **target)
        sub.add_argument("sets", type=sets, metavar="SETS")

    sub = command("setget", "one SetGet; prints the reply (set and get parts)")
    sub.add_argument("host", **host)
    sub.add_argument("eoj", **target)
    sub.add_argument("sets", type=sets, metavar="SETS")
    sub.add_argument("epcs", type=epcs, metavar="EPCS")

    sub = command("inf-req", "one INF_REQ; prints the INF or INF_SNA")
    sub.add_argument("host", **host)
    sub.add_argument("eoj", **target)
    sub.add_argument("epcs", type=epcs, metavar="EPCS")

    sub = command("discover", "multicast Get of 0xD6; prints every node that answered")
    sub.add_argument("--expect", type=options.integer(1, 1_000_000), metavar="N")
    sub.add_argument("--wait-ms", type=options.integer(0, 86_400_000), default=1000, metavar="MS")

    sub = command("bench", "the seed's loop: 12 properties of the node profile per iteration")
    sub.add_argument("host", **host)
    sub.add_argument("--mode", choices=("faithful", "batched"), required=True)
    sub.add_argument("--iterations", type=options.integer(0, 1 << 40), required=True, metavar="N")
    sub.add_argument("--warmup", type=options.integer(0, 1 << 40), default=0, metavar="N")
    return parser


def _properties(properties: list) -> list[dict[str, str]]:
    return [{"epc": f"{epc:02x}", "edt": edt.hex()} for epc, edt in properties]


def reply_json(host: str, tid: bytes, reply: Frame | None, attempts: int, ignored: int) -> dict:
    """SPEC §8's reply object; with no reply (a SetI that succeeded) esv and the EOJs are null."""
    out: dict = {"host": host, "tid": tid.hex()}
    if reply is None:
        out.update(seoj=None, deoj=None, esv=None, properties=[])
    else:
        out.update(seoj=reply.seoj.hex(), deoj=reply.deoj.hex(), esv=f"{reply.esv:02x}")
        if reply.get_properties is None:
            out["properties"] = _properties(reply.properties)
        else:
            out["set"] = _properties(reply.properties)
            out["get"] = _properties(reply.get_properties)
    out["attempts"] = attempts
    out["ignored"] = ignored
    return out


def _check_epcs(properties: list, expected: list[int], part: str = "") -> None:
    got = [epc for epc, _ in properties]
    if got != expected:
        shown = ",".join(f"{e:02x}" for e in got)
        asked = ",".join(f"{e:02x}" for e in expected)
        raise WrongReply(f"the reply's {part}EPCs are [{shown}], not the ones asked [{asked}]")


def run_request(ctl: Controller, args) -> dict:
    """get, setc, seti, setget, inf-req: one request, its reply as JSON."""
    esv = {
        "get": frame.GET, "setc": frame.SETC, "seti": frame.SETI, "setget": frame.SETGET,
        "inf-req": frame.INF_REQ,
    }[args.command]  # fmt: skip
    if esv in (frame.GET, frame.INF_REQ):
        first = [(epc, b"") for epc in args.epcs]
    else:
        first = args.sets
    second = [(epc, b"") for epc in args.epcs] if esv == frame.SETGET else None
    attempts = 1 if esv == frame.SETI else None  # SetI: sent once, success is silence
    tid = ctl.next_tid()
    try:
        datagram = frame.encode(tid, frame.CONTROLLER, args.eoj, esv, first, second)
    except ValueError as e:
        raise WrongReply(f"cannot send this request: {e}") from None
    reply, sent = ctl.exchange(datagram, args.host, frame.REPLY_ESVS[esv], attempts)
    if reply is None and esv != frame.SETI:
        raise NoReply(f"no reply from {args.host} after {sent} attempt(s)")
    if reply is not None:
        _check_epcs(reply.properties, [epc for epc, _ in first], "set " if second else "")
        if second is not None:
            _check_epcs(reply.get_properties, args.epcs, "get ")
    return reply_json(args.host, tid, reply, sent, ctl.ignored)


def run_discover(ctl: Controller, args) -> dict:
    try:
        found = ctl.discover(args.expect, args.wait_ms / 1000)
    except OSError as e:
        raise NoReply(f"cannot multicast to {frame.MULTICAST_GROUP}: {e.strerror or e}") from None
    if args.expect is not None and len(found.nodes) < args.expect:
        raise NoReply(
            f"{len(found.nodes)} of {args.expect} nodes answered after {found.attempts} attempts"
        )
    return {
        "nodes": [
            {"host": n.host, "eoj": n.eoj.hex(), "instances": [i.hex() for i in n.instances]}
            for n in found.nodes
        ],
        "elapsed_s": round(found.elapsed_s, 6),
        "attempts": found.attempts,
        "ignored": ctl.ignored,
    }


def run_bench(ctl: Controller, args) -> dict:
    """The seed's loop: per iteration the 12 node-profile properties, one Get each (faithful)
    or all in one Get (batched); every reply checked (Get_Res, the EPCs asked, in order)."""
    if args.mode == "faithful":
        asked = [[epc] for epc in BENCH_EPCS]
    else:
        asked = [list(BENCH_EPCS)]
    # Each request encoded once without its TID; a send is EHD + TID + this tail.
    no_tid = b"\x00\x00"
    tails = [
        (
            frame.encode(
                no_tid, frame.CONTROLLER, frame.NODE_PROFILE, frame.GET, [(e, b"") for e in epcs_]
            )[4:],
            epcs_,
        )
        for epcs_ in asked
    ]
    host = args.host
    accepted = frame.REPLY_ESVS[frame.GET]
    exchange = ctl.exchange
    next_tid = ctl.next_tid
    ehd = frame.EHD
    get_res = frame.GET_RES

    def run(iterations: int) -> None:
        for _ in range(iterations):
            for tail, expected in tails:
                reply = exchange(ehd + next_tid() + tail, host, accepted)[0]
                if reply is None:
                    raise NoReply(f"no reply from {host} after {1 + ctl.retries} attempt(s)")
                if reply.esv != get_res:
                    raise WrongReply(f"ESV {reply.esv:02x} instead of 72 from {host}")
                if [epc for epc, _ in reply.properties] != expected:
                    _check_epcs(reply.properties, expected)

    run(args.warmup)
    ctl.resent = ctl.ignored = 0
    start = time.perf_counter()
    run(args.iterations)
    elapsed = time.perf_counter() - start
    return {
        "mode": args.mode,
        "iterations": args.iterations,
        "requests": args.iterations * len(tails),
        "elapsed_s": round(elapsed, 6),
        "retries": ctl.resent,
        "ignored": ctl.ignored,
    }


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    ifaddr = args.ifaddr or args.bind
    try:
        sock = transport.open_socket(args.bind, args.port, ifaddr)
    except OSError as e:
        emit({"error": f"cannot open UDP {args.bind}:{args.port}: {e.strerror or e}"})
        return 1
    ctl = Controller(sock, args.port, args.timeout_ms / 1000, args.retries)
    run = {"discover": run_discover, "bench": run_bench}.get(args.command, run_request)
    try:
        result = run(ctl, args)
    except (NoReply, WrongReply) as e:
        emit({"error": str(e)})
        return 1
    except KeyboardInterrupt:
        emit({"error": "interrupted"})
        return 1
    finally:
        sock.close()
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
