"""host + main as a process, started the way impl.toml starts it (`python -E -S main.py`):
exit statuses, stderr messages, and a reply written before the next read. Every test runs
against both hosts that share host.py: this one and python-orjson (its main.py, its name)."""

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

IMPLS = Path(__file__).resolve().parent.parent.parent
IMPL_DIR = ARGV = None  # the host under test's folder and command (set by the fixture below)


@pytest.fixture(autouse=True, params=["python", "python-orjson"])
def _host(request):
    global IMPL_DIR, ARGV
    IMPL_DIR = IMPLS / request.param
    ARGV = [sys.executable, "-E", "-S", str(IMPL_DIR / "main.py"), "chrome-extension://abc/"]


PING = struct.pack("<I", 13) + b'{"op":"ping"}'
PONG = struct.pack("<I", 13) + b'{"op":"pong"}'


def run(stdin: bytes, argv=None) -> subprocess.CompletedProcess:
    return subprocess.run(argv or ARGV, input=stdin, capture_output=True, cwd=IMPL_DIR, timeout=30)


def assert_clean_failure(proc, message):
    assert proc.returncode == 1
    lines = proc.stderr.decode().splitlines()
    assert (
        len(lines) == 1
        and lines[0].startswith(f"nativemsg-{IMPL_DIR.name}: ")
        and message in lines[0]
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
