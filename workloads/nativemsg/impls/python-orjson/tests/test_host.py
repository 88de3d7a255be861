"""host + main as a process, started the way impl.toml starts it (`python -E -S main.py`, orjson
found through main.py's own sys.path entry): exit statuses, stderr messages, a reply written
before the next read, and the allocator tuning on the first large frame."""

import os
import struct
import subprocess
import sys
from pathlib import Path

import host
import pytest

IMPL_DIR = Path(__file__).resolve().parent.parent
ARGV = [sys.executable, "-E", "-S", str(IMPL_DIR / "main.py"), "chrome-extension://abc/"]
PING = struct.pack("<I", 13) + b'{"op":"ping"}'
PONG = struct.pack("<I", 13) + b'{"op":"pong"}'


def run(stdin: bytes, argv=ARGV) -> subprocess.CompletedProcess:
    return subprocess.run(argv, input=stdin, capture_output=True, cwd=IMPL_DIR, timeout=30)


def assert_clean_failure(proc, message):
    assert proc.returncode == 1
    lines = proc.stderr.decode().splitlines()
    assert (
        len(lines) == 1 and lines[0].startswith("nativemsg-python-orjson: ") and message in lines[0]
    )


def test_eof_before_any_frame_exits_0_silently():
    proc = run(b"")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_replies_then_exits_0_at_a_frame_boundary():
    proc = run(PING * 3)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, PONG * 3, b"")


def test_firefox_arguments_are_ignored():
    argv = [*ARGV[:-1], "/path/to/manifest.json", "ext@example.org"]
    assert run(PING, argv).stdout == PONG


@pytest.mark.parametrize(
    ("tail", "message"),
    [(b"\x0d\x00", "EOF inside a frame header"), (PING[:10], "EOF inside a frame body")],
)
def test_eof_inside_a_frame_exits_1_with_one_line(tail, message):
    proc = run(PING + tail)
    assert proc.stdout == PONG
    assert_clean_failure(proc, message)


def test_oversized_length_exits_at_once_while_stdin_stays_open():
    proc = subprocess.Popen(
        ARGV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=IMPL_DIR
    )
    try:
        proc.stdin.write(struct.pack("<I", 64 * 1024 * 1024 + 1))
        proc.stdin.flush()
        status = proc.wait(timeout=10)  # stdin is still open: the host must not wait for a body
        stderr = proc.stderr.read()
    finally:
        proc.kill()
        proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()
    assert_clean_failure(subprocess.CompletedProcess(ARGV, status, b"", stderr), "exceeds")


def test_each_reply_is_flushed_before_the_next_read():
    proc = subprocess.Popen(ARGV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=IMPL_DIR)
    try:
        for _ in range(3):
            os.write(proc.stdin.fileno(), PING)
            assert os.read(proc.stdout.fileno(), 100) == PONG  # would hang if unflushed
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.stdout.close()


def test_reader_gone_is_a_clean_failure():
    r, w = os.pipe()
    os.close(r)  # nobody reads stdout: the write fails with EPIPE
    try:
        proc = subprocess.run(
            ARGV, input=PING, stdout=w, stderr=subprocess.PIPE, cwd=IMPL_DIR, timeout=30
        )
    finally:
        os.close(w)
    assert_clean_failure(proc, "cannot write stdout")


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
    frames = [echo_frame(100), echo_frame(host.LARGE_FRAME), echo_frame(600_000), echo_frame(100)]
    proc = run(b"".join(frames) + PING)
    assert (proc.returncode, proc.stderr) == (0, b"")
    assert proc.stdout == b"".join(frames) + PONG  # an echo of a string is the request itself


def test_keep_heap_sets_glibcs_thresholds():
    assert host.keep_heap() is True  # glibc on every machine of this lab


def test_serve_tunes_the_allocator_once_and_only_for_a_large_frame(monkeypatch):
    from framing import FrameReader

    calls = []
    monkeypatch.setattr(host, "keep_heap", lambda: calls.append(1))
    data = PING * 3 + echo_frame(host.LARGE_FRAME - 1)
    host.serve(FrameReader(iter_reads(data)), lambda b: len(b))
    assert calls == []
    data += echo_frame(host.LARGE_FRAME) * 2
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
