"""The capnp benchmark program (SPEC §5) in Python with pycapnp:

    main.py CASE MODE REUSE COMPRESSION ITERS

The command line, the schema loading, the report's JSON and the exit statuses: 0 done, 1 a
failure at run time (one line on stderr), 2 a bad command line (the usage on stderr).
"""

import time

# SPEC §5: setup_s runs from the first statement of the script, so the imports below (pycapnp
# among them) and the schema loading count.
STARTED = time.perf_counter()

import json  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

PROGRAM = "capnp-python"
CASES = ("carsales", "catrank", "eval")
MODES = ("object", "bytes", "pipe", "client", "server")
REUSES = ("reuse", "no-reuse")
COMPRESSIONS = ("none", "packed")
MAX_ITERS = 1_000_000_000
USAGE = f"""usage: {PROGRAM} CASE MODE REUSE COMPRESSION ITERS
    CASE         carsales | catrank | eval
    MODE         object | bytes | pipe | client | server
    REUSE        reuse | no-reuse
    COMPRESSION  none | packed          (object: none only)
    ITERS        1 .. {MAX_ITERS}        (timed iterations)
"""
SCHEMA_DIR = Path(__file__).resolve().parent.parent.parent / "schema"


class Usage(Exception):
    """A bad command line: exit 2 with the usage."""


def parse(args: list[str]) -> tuple[str, str, str, str, int]:
    if len(args) != 5:
        raise Usage(f"expected 5 arguments, got {len(args)}")
    case, mode, reuse, compression, iters = args
    for value, allowed, what in ((case, CASES, "CASE"), (mode, MODES, "MODE"),
                                 (reuse, REUSES, "REUSE"),
                                 (compression, COMPRESSIONS, "COMPRESSION")):  # fmt: skip
        if value not in allowed:
            raise Usage(f"{what} {value!r} is not one of {', '.join(allowed)}")
    if mode == "object" and compression != "none":
        raise Usage("object mode serialises nothing: COMPRESSION must be none")
    # Plain decimal digits only: int() would also take signs, spaces and underscores.
    if not re.fullmatch(r"[0-9]+", iters) or not 1 <= int(iters) <= MAX_ITERS:
        raise Usage(f"ITERS {iters!r} is not a whole number from 1 to {MAX_ITERS}")
    return case, mode, reuse, compression, int(iters)


def describe(e: BaseException) -> str:
    """One line saying what went wrong (a KjException's text has libcapnp's stack after it)."""
    from failures import InvalidMessage, Mismatch

    capnp = sys.modules.get("capnp")  # no KjException can come before pycapnp is imported
    if isinstance(e, Mismatch):
        return f"wrong response: {e}"
    if isinstance(e, InvalidMessage):
        return str(e)
    if capnp is not None and isinstance(e, capnp.KjException):
        text = str(e).split("\nstack:")[0]
        return "invalid message: " + " ".join(text.split())
    if isinstance(e, UnicodeDecodeError):
        return f"invalid message: a Text is not UTF-8 (byte {e.start}: {e.reason})"
    if isinstance(e, BrokenPipeError):
        return "broken pipe: the peer closed its end"
    return f"{type(e).__name__}: " + " ".join(str(e).split())


def main(argv: list[str]) -> int:
    try:
        case_name, mode, reuse, compression, iters = parse(argv[1:])
    except Usage as e:
        sys.stderr.write(f"{PROGRAM}: {e}\n{USAGE}")
        return 2

    # Imported once the command line is known to be good: a bad one exits 2 at once.
    import capnp
    import modes
    from carsales import Carsales
    from catrank import Catrank
    from eval import Eval

    # Schemas are parsed at run time from the lab's .capnp files; the import hook (which would
    # search sys.path on `import x_capnp`) is not used.
    capnp.remove_import_hook()
    schema = capnp.load(str(SCHEMA_DIR / f"{case_name}.capnp"))
    case = {"carsales": Carsales, "catrank": Catrank, "eval": Eval}[case_name](schema)
    run = modes.Run(case, reuse == "reuse", compression == "packed")
    warmup = iters // 20
    server_cpu_s = None
    try:
        if mode == "server":
            served = modes.run_server(run, sys.stdin.buffer, modes.fd_writer(sys.stdout.fileno()))
            sys.stderr.write(json.dumps({"served": served}) + "\n")
            return 0
        if mode == "object":
            timing = modes.run_object(run, warmup, iters)
        elif mode == "bytes":
            timing = modes.run_bytes(run, warmup, iters)
        elif mode == "client":
            timing = modes.run_client(run, warmup, iters, sys.stdout.fileno(), sys.stdin.buffer)
        else:
            argv_server = modes.server_argv(case_name, reuse, compression, str(iters))
            timing, server_cpu_s = modes.run_pipe(run, warmup, iters, argv_server)
    except modes.Failure as f:
        sys.stderr.write(f"{PROGRAM} {case_name} {mode}: {f.where}: {describe(f.cause)}\n")
        return 1

    lib = capnp.version
    report = {
        "program": PROGRAM,
        "library": f"pycapnp {capnp.__version__} (libcapnp {lib.LIBCAPNP_VERSION_MAJOR}."
        f"{lib.LIBCAPNP_VERSION_MINOR}.{lib.LIBCAPNP_VERSION_MICRO})",
        "case": case_name,
        "mode": mode,
        "reuse": reuse,
        "compression": compression,
        "iterations": iters,
        "warmup": warmup,
        "setup_s": timing.warmup_started - STARTED,
        "warmup_s": timing.warmup_s,
        "elapsed_s": timing.elapsed_s,
        "cpu_s": timing.cpu_s,
        "request_bytes": timing.request_bytes,
        "response_bytes": timing.response_bytes,
        "checked": warmup + iters,
    }
    if server_cpu_s is not None:
        report["server_cpu_s"] = server_cpu_s
    # client: stdout carries the requests, so the report is the last line of stderr.
    out = sys.stderr if mode == "client" else sys.stdout
    out.write(json.dumps(report) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # anything unforeseen still ends as one line and status 1
        sys.stderr.write(f"{PROGRAM}: {describe(e)}\n")
        sys.exit(1)
