"""python-orjson as a process, where it differs from the python host (whose tests/test_host.py
runs the shared host.py checks against this host's main.py too): orjson missing, and the
allocator tuning on the first large frame (protocol.keep_heap)."""

import struct
import subprocess
import sys
from pathlib import Path

import host
import protocol

IMPL_DIR = Path(__file__).resolve().parent.parent
PING = struct.pack("<I", 13) + b'{"op":"ping"}'
PONG = struct.pack("<I", 13) + b'{"op":"pong"}'


def run(stdin: bytes, argv) -> subprocess.CompletedProcess:
    return subprocess.run(argv, input=stdin, capture_output=True, cwd=IMPL_DIR, timeout=30)


def assert_clean_failure(proc, message):
    assert proc.returncode == 1
    lines = proc.stderr.decode().splitlines()
    assert lines == [lines[0]] and lines[0].startswith("nativemsg-python-orjson: ")
    assert message in lines[0]


def echo_frame(size: int) -> bytes:
    body = b'{"op":"echo","data":"' + b"y" * (size - 23) + b'"}'
    return struct.pack("<I", len(body)) + body


def test_without_orjson_it_fails_cleanly():
    """orjson not importable (sys.modules entry None): one line on stderr, status 1."""
    code = (
        "import sys, runpy; sys.modules['orjson'] = None; sys.path.insert(0, '.');"
        " runpy.run_path('main.py', run_name='__main__')"
    )
    proc = run(PING, [sys.executable, "-E", "-S", "-c", code])
    assert proc.stdout == b""
    assert_clean_failure(proc, "cannot start: import of orjson halted")


def test_large_echoes_after_the_allocator_is_tuned():
    frames = [
        echo_frame(100),
        echo_frame(protocol.LARGE_FRAME),
        echo_frame(600_000),
        echo_frame(100),
    ]
    proc = run(b"".join(frames) + PING, [sys.executable, "-E", "-S", "main.py"])
    assert (proc.returncode, proc.stderr) == (0, b"")
    assert proc.stdout == b"".join(frames) + PONG  # an echo of a string is the request itself


def test_keep_heap_sets_glibcs_thresholds():
    assert protocol.keep_heap() is True  # glibc on every machine of this lab


def test_serve_tunes_the_allocator_once_and_only_for_a_large_frame(monkeypatch):
    from framing import FrameReader

    calls = []
    monkeypatch.setattr(protocol, "keep_heap", lambda: calls.append(1))
    monkeypatch.setattr(protocol, "_small", True)
    data = PING * 3 + echo_frame(protocol.LARGE_FRAME - 1)
    host.serve(FrameReader(iter_reads(data)), lambda b: len(b))
    assert calls == []
    data += echo_frame(protocol.LARGE_FRAME) * 2
    host.serve(FrameReader(iter_reads(data)), lambda b: len(b))
    assert calls == [1]


def iter_reads(data: bytes):
    """A readinto over `data` (then EOF)."""
    pos = 0

    def readinto(view):
        nonlocal pos
        got = data[pos : pos + len(view)]
        view[: len(got)] = got
        pos += len(got)
        return len(got)

    return readinto
