"""The nativemsg self-test's implementation: the correct host of host.py or, with --bug NAME, the
same host with ONE classic mistake. test_selftest.py checks that the suite catches every bug.

    impl.py [--bug NAME] BROWSER_ARGS...      (as a browser starts a host)
    impl.py --list-bugs

Each bug below replaces one function or constant of host.py; its docstring says what is wrong.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import sys

import host as h


def eight_byte_length() -> None:
    """Writes an 8-byte length (a usize/size_t written whole): the bug that started this lab."""
    h.encode_frame = lambda body: struct.pack("<Q", len(body)) + body


def big_endian_length() -> None:
    """Big-endian ("network order") lengths in both directions instead of native order."""

    def read_length(stream):
        prefix = h.read_exact(stream, 4)
        if not prefix:
            return None
        if len(prefix) < 4:
            raise h.BrokenStream("EOF inside a length prefix")
        return struct.unpack(">I", prefix)[0]

    h.read_length = read_length
    h.encode_frame = lambda body: struct.pack(">I", len(body)) + body


def char_count_length() -> None:
    """The length prefix counts characters (len of the decoded text), not bytes."""
    h.encode_frame = lambda body: struct.pack("<I", len(body.decode("utf-8"))) + body


def unflushed_stdout() -> None:
    """Replies sit in a buffered stdout, flushed only at exit (C stdio, Python on a pipe)."""
    h.write_frame = lambda out, body: out.write(h.encode_frame(body))  # stays in the buffer


def no_length_cap() -> None:
    """No cap on the length prefix: allocates and waits for whatever length it is told."""
    h.check_length = lambda n: None


def signed_length() -> None:
    """The length is read as a signed 32-bit int, so 2^31 and above are negative and pass
    `n > cap`; Python's read(-n) then reads until EOF (in C, a negative int becomes a huge
    size_t)."""

    def read_length(stream):
        prefix = h.read_exact(stream, 4)
        if not prefix:
            return None
        if len(prefix) < 4:
            raise h.BrokenStream("EOF inside a length prefix")
        return struct.unpack("<i", prefix)[0]

    h.read_length = read_length


def traceback_on_eof() -> None:
    """Unpacks the length without checking the read: any EOF ends in a struct.error traceback."""
    h.read_length = lambda stream: struct.unpack("<I", stream.read(4))[0]


def partial_frame_is_clean_eof() -> None:
    """EOF inside a header or body is treated like a clean EOF (exit 0, no message)."""

    def read_frame(stream):
        prefix = stream.read(4)
        if len(prefix) < 4:
            return None
        n = int.from_bytes(prefix, "little")
        h.check_length(n)
        body = stream.read(n)
        return body if len(body) == n else None

    h.read_frame = read_frame


def text_on_stdout() -> None:
    """Prints a start-up banner to stdout (logs belong on stderr)."""
    sys.stdout.buffer.write(b"native host ready\n")


def no_reply_cap() -> None:
    """No 1 MiB reply cap: sends echo replies and fills of any size (Chromium drops the port)."""
    h.MAX_REPLY = 1 << 40


def caps_off_by_one() -> None:
    """Caps compared with >= instead of >: refuses exactly 1 MiB replies and 64 MiB requests."""
    h.MAX_REPLY -= 1
    h.MAX_REQUEST -= 1


def one_read_one_frame() -> None:
    """Assumes one read() returns exactly one whole frame; the rest of the chunk is lost."""

    def read_frame(stream):
        chunk = os.read(0, 1 << 20)
        if not chunk:
            return None
        (n,) = struct.unpack("<I", chunk[:4].ljust(4, b"\0"))
        h.check_length(n)
        return chunk[4 : 4 + n]

    h.read_frame = read_frame


def quits_after_one_reply() -> None:
    """Serves one request and exits 0, as if every caller were sendNativeMessage."""

    def serve(stream, out):
        body = h.read_frame(stream)
        if body is not None:
            h.write_frame(out, h.respond(body))
        return 0

    h.serve = serve


def accepts_nan() -> None:
    """Python's json defaults: NaN/Infinity are accepted and written back (not JSON)."""
    h.decode_body = lambda body: json.loads(body.decode("utf-8"))
    h.serialise = lambda reply: json.dumps(reply, ensure_ascii=False).encode()


def replaces_bad_utf8() -> None:
    """Invalid UTF-8 silently becomes U+FFFD (Go's encoding/json, errors="replace")."""
    h.decode_body = lambda body: json.loads(body.decode("utf-8", "replace"))


def crash_on_bad_json() -> None:
    """Parse errors are not handled (an unwrap): the first bad body ends in a traceback."""
    h.respond = lambda body: h.reply_cap(h.serialise(h.answer(h.decode_body(body))))


def ignores_write_errors() -> None:
    """Ignores failed writes (an unchecked write() with SIGPIPE ignored): when the reader is
    gone it keeps reading and never exits."""
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    checked = h.write_frame

    def write_frame(out, body):
        try:
            checked(out, body)
        except OSError:
            pass

    h.write_frame = write_frame


def stack_overflow() -> None:
    """Unbounded recursion on deep nesting overflows the C stack (SIGSEGV), like a recursive
    parser in C/C++/Rust without a depth limit."""
    decode_body = h.decode_body

    def unbounded_decode_body(body):
        try:
            return decode_body(body)
        except RecursionError:  # newer Pythons stop before the C stack ends: crash the same way
            os.kill(os.getpid(), signal.SIGSEGV)

    sys.setrecursionlimit(1 << 30)  # Python 3.11's C json scanner then runs off the C stack
    h.decode_body = unbounded_decode_body


def strict_argv() -> None:
    """Insists on Chromium's argv (exactly one argument, an origin); Firefox's argv fails."""
    if len(sys.argv) != 2 or not sys.argv[1].startswith("chrome-extension://"):
        sys.exit(f"usage: {sys.argv[0]} chrome-extension://<id>/")


def c_string_op() -> None:
    """Compares op as a C string, so "ping\\u0000..." is taken for "ping"."""
    answer = h.answer

    def c_string_answer(request):
        if isinstance(request, dict) and isinstance(request.get("op"), str):
            request = {**request, "op": request["op"].split("\0")[0]}
        return answer(request)

    h.answer = c_string_answer


def sloppy_fill() -> None:
    """Coerces fill's `bytes` to a 32-bit unsigned int: "1000" and 100.5 are accepted, and
    2^32 + 23 wraps to a valid 23."""
    answer = h.answer

    def sloppy_answer(request):
        if isinstance(request, dict) and request.get("op") == "fill":
            try:
                n = int(request.get("bytes")) & 0xFFFFFFFF
            except (TypeError, ValueError, OverflowError):
                return h.error("bad bytes")
            request = {**request, "bytes": n}
        return answer(request)

    h.answer = sloppy_answer


BUGS = {
    f.__name__.replace("_", "-"): f
    for f in (
        eight_byte_length, big_endian_length, char_count_length, unflushed_stdout,
        no_length_cap, signed_length, traceback_on_eof, partial_frame_is_clean_eof,
        text_on_stdout, no_reply_cap, caps_off_by_one, one_read_one_frame,
        quits_after_one_reply, accepts_nan, replaces_bad_utf8, crash_on_bad_json,
        ignores_write_errors, stack_overflow, strict_argv, c_string_op, sloppy_fill,
    )
}  # fmt: skip


def main() -> None:
    if sys.argv[1:] == ["--list-bugs"]:
        print("\n".join(BUGS))
        return
    if "--bug" in sys.argv:
        # Taken out of argv before anything looks at it: the rest is what a browser passes.
        i = sys.argv.index("--bug")
        name = sys.argv[i + 1] if i + 1 < len(sys.argv) else ""
        del sys.argv[i : i + 2]
        if name not in BUGS:
            sys.exit(f"--bug: one of {', '.join(BUGS)}")  # exit status 1: not a host
        BUGS[name]()
    h.main()


if __name__ == "__main__":
    main()
