"""main: the program as the harness runs it: command line, exit statuses, the report's JSON,
client and server joined by two pipes, hostile input (SPEC §5, §6)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import pytest
from capnp_py.main import USAGE, Usage, parse
from conftest import IMPL_DIR, run_program


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["carsales", "bytes", "reuse", "none"],
        ["carsales", "bytes", "reuse", "none", "10", "x"],
        ["cats", "bytes", "reuse", "none", "10"],
        ["carsales", "mmap", "reuse", "none", "10"],
        ["carsales", "bytes", "always", "none", "10"],
        ["carsales", "bytes", "reuse", "zstd", "10"],
        ["carsales", "object", "reuse", "packed", "10"],
        ["carsales", "bytes", "reuse", "none", "0"],
        ["carsales", "bytes", "reuse", "none", "-3"],
        ["carsales", "bytes", "reuse", "none", "+3"],
        ["carsales", "bytes", "reuse", "none", "1_000"],
        ["carsales", "bytes", "reuse", "none", " 3"],
        ["carsales", "bytes", "reuse", "none", "1000000001"],
    ],
)
def test_bad_command_lines(args):
    with pytest.raises(Usage):
        parse(args)


def test_good_command_line():
    assert parse(["eval", "pipe", "no-reuse", "packed", "1000000000"]) == (
        "eval", "pipe", "no-reuse", "packed", 1_000_000_000)  # fmt: skip


def test_a_bad_command_line_exits_2_with_the_usage_and_nothing_on_stdout():
    e = run_program("carsales", "bytes", "reuse", "none", "ten")
    assert e.returncode == 2
    assert USAGE in e.stderr.decode() and "ITERS 'ten'" in e.stderr.decode()
    assert e.stdout == b""


@pytest.mark.parametrize(("mode", "compression"), [("bytes", "packed"), ("pipe", "none")])
def test_report_describes_the_run(mode, compression):
    e = run_program("carsales", mode, "reuse", compression, "40")
    assert e.returncode == 0, e.stderr
    report = json.loads(e.stdout)
    assert {k: report[k] for k in ("program", "case", "mode", "reuse", "compression",
                                   "iterations", "warmup", "checked")} == {
        "program": "capnp-python", "case": "carsales", "mode": mode, "reuse": "reuse",
        "compression": compression, "iterations": 40, "warmup": 2, "checked": 42,
    }  # fmt: skip
    assert report["library"].startswith("pycapnp 2.2.4 (libcapnp ")
    assert 0 < report["setup_s"] < 30 and report["elapsed_s"] > 0 and report["cpu_s"] > 0
    # A TotalValue is 3 words unpacked: segment table, root pointer, amount.
    assert report["request_bytes"] > 40 * 8
    assert 0 < report["response_bytes"] <= 40 * 24
    assert (report["response_bytes"] == 40 * 24) == (compression == "none")
    assert ("server_cpu_s" in report) == (mode == "pipe")
    if mode == "pipe":
        assert json.loads(e.stderr.decode().splitlines()[-1]) == {"served": 42}


def test_client_and_server_joined_by_two_pipes():
    """The client's requests on stdout, its report as the last line of stderr."""
    words = ["eval", "no-reuse", "packed", "50"]
    main = str(IMPL_DIR / "main.py")
    server = subprocess.Popen([sys.executable, "-E", main, words[0], "server", *words[1:]],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)  # fmt: skip
    client = subprocess.Popen([sys.executable, "-E", main, words[0], "client", *words[1:]],
                              stdin=server.stdout, stdout=server.stdin,
                              stderr=subprocess.PIPE)  # fmt: skip
    # The client holds the pipes now; ours would keep the server's input open.
    server.stdin.close()
    server.stdout.close()
    server.stdin = server.stdout = None
    _, client_err = client.communicate(timeout=60)
    _, server_err = server.communicate(timeout=60)
    assert client.returncode == 0 and server.returncode == 0, (client_err, server_err)
    report = json.loads(client_err.decode().splitlines()[-1])
    assert report["mode"] == "client" and report["checked"] == 52
    assert json.loads(server_err) == {"served": 52}


def test_server_at_clean_end_exits_0_having_served_nothing():
    e = run_program("catrank", "server", "no-reuse", "packed", "1")
    assert (e.returncode, e.stdout, json.loads(e.stderr)) == (0, b"", {"served": 0})


@pytest.mark.parametrize(
    ("case", "compression", "data", "message"),
    [
        ("carsales", "none", struct.pack("<II", 0, 1 << 30), "1073741824 words"),
        ("carsales", "none", struct.pack("<II", 0, 2) + bytes(8), "end of input inside a message"),
        # A root struct pointer (one data word) 1000 words beyond its one-word segment.
        ("eval", "none", struct.pack("<IIQ", 0, 1, 1000 << 2 | 1 << 32), "out-of-bounds"),
        ("carsales", "packed", bytes([0x10, 0x01, 0x00, 0xFF]), "past the end"),
        ("catrank", "none", b"\x00\x00", "inside a segment table"),
    ],
)
def test_hostile_input_exits_1_with_one_line(case, compression, data, message):
    e = run_program(case, "server", "no-reuse", compression, "1", stdin=data)
    assert e.returncode == 1
    lines = e.stderr.decode().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert lines[0].startswith(f"capnp-python {case} server: request 1: ")
    assert e.stdout == b""


def test_a_peer_that_answers_garbage_fails_the_client():
    e = run_program("eval", "client", "no-reuse", "none", "5", stdin=bytes(64))
    assert e.returncode == 1
    assert "iteration 1 of 5" in e.stderr.decode()


def test_a_closed_peer_is_one_line_not_a_trace():
    r, w = os.pipe()
    os.close(r)  # the client's stdout leads nowhere: its first write fails with EPIPE
    p = subprocess.run([sys.executable, "-E", str(IMPL_DIR / "main.py"), "eval", "client",
                        "no-reuse", "none", "5"], stdout=w, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, timeout=60)  # fmt: skip
    os.close(w)
    assert p.returncode == 1
    assert p.stderr.decode().count("\n") == 1 and "broken pipe" in p.stderr.decode()
