"""controller_main: the command line and every command of SPEC §8 against the node program."""

from __future__ import annotations

import argparse
import json
import subprocess

import pytest
from conftest import CONTROLLER_ADDR, IMPL_DIR, NODE_ADDR
from echonet_py import controller_main


def test_argument_types():
    assert controller_main.eoj("0EF001") == bytes.fromhex("0ef001")
    assert controller_main.epcs("80,D6,9f") == [0x80, 0xD6, 0x9F]
    assert controller_main.sets("80=30,B3=19,81=") == [
        (0x80, b"\x30"),
        (0xB3, b"\x19"),
        (0x81, b""),
    ]
    assert controller_main.sets("83=0A0b0C") == [(0x83, b"\x0a\x0b\x0c")]
    for bad in ("0ef01", "0ef0011", "0eg001", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            controller_main.eoj(bad)
    for bad in ("8", "800", "80,", ",80", "80 ,82", "zz", "", ",".join(["80"] * 256)):
        with pytest.raises(argparse.ArgumentTypeError):
            controller_main.epcs(bad)
    for bad in ("80", "80=3", "80=3g", "=30", "8=30", "80=30,", "80=" + "00" * 256):
        with pytest.raises(argparse.ArgumentTypeError):
            controller_main.sets(bad)


def test_options_may_come_before_or_after_the_command():
    parse = controller_main.build_parser().parse_args
    a = parse(["--bind", CONTROLLER_ADDR, "--port", "4000", "get", NODE_ADDR, "0ef001", "80"])
    assert (a.bind, a.port, a.timeout_ms, a.retries) == (CONTROLLER_ADDR, 4000, 500, 3)
    a = parse(["--retries", "1", "get", NODE_ADDR, "0ef001", "80", "--timeout-ms", "20"])
    assert (a.bind, a.port, a.timeout_ms, a.retries) == ("0.0.0.0", 3610, 20, 1)
    a = parse(["bench", NODE_ADDR, "--mode", "batched", "--iterations", "5"])
    assert (a.mode, a.iterations, a.warmup) == ("batched", 5, 0)
    a = parse(["discover"])
    assert (a.expect, a.wait_ms) == (None, 1000)


class Run:
    def __init__(self, interpreter, port):
        self.base = [*interpreter, "controller_main.py", "--bind", CONTROLLER_ADDR,
                     "--port", str(port)]  # fmt: skip

    def __call__(self, *args: str) -> tuple[int, dict | None, str]:
        p = subprocess.run(
            [*self.base, *args], cwd=IMPL_DIR, capture_output=True, text=True, timeout=60
        )
        out = json.loads(p.stdout) if p.stdout else None
        assert p.stdout.count("\n") == (1 if out is not None else 0)
        return p.returncode, out, p.stderr


@pytest.fixture
def run(interpreter, port):
    return Run(interpreter, port)


def test_every_command_against_the_node(start_node, port, run):
    node = start_node(port)
    status, out, err = run("get", NODE_ADDR, "0EF001", "80,82")
    assert status == 0 and err == ""
    assert out == {
        "host": NODE_ADDR, "tid": "0001", "seoj": "0ef001", "deoj": "05ff01", "esv": "72",
        "properties": [{"epc": "80", "edt": "30"}, {"epc": "82", "edt": "010e0100"}],
        "attempts": 1, "ignored": 0,
    }  # fmt: skip

    status, out, _ = run("get", NODE_ADDR, "013001", "80,f0")
    assert status == 0 and out["esv"] == "52"  # a refusal is a reply
    assert out["properties"] == [{"epc": "80", "edt": "31"}, {"epc": "f0", "edt": ""}]

    status, out, _ = run("setc", NODE_ADDR, "013001", "80=30,B3=19,b3=FF")
    assert status == 0 and out["esv"] == "51" and out["seoj"] == "013001"
    assert out["properties"] == [
        {"epc": "80", "edt": ""}, {"epc": "b3", "edt": ""}, {"epc": "b3", "edt": "ff"},
    ]  # fmt: skip

    status, out, _ = run("seti", NODE_ADDR, "013001", "b0=42", "--timeout-ms", "100")
    assert status == 0 and out == {
        "host": NODE_ADDR, "tid": "0001", "seoj": None, "deoj": None, "esv": None,
        "properties": [], "attempts": 1, "ignored": 0,
    }  # fmt: skip
    status, out, _ = run("seti", NODE_ADDR, "013001", "b0=50")
    assert status == 0 and out["esv"] == "50"
    assert out["properties"] == [{"epc": "b0", "edt": "50"}]

    status, out, _ = run("setget", NODE_ADDR, "013001", "a0=38", "80,a0,b0,b3")
    assert status == 0 and out["esv"] == "7e" and "properties" not in out
    assert out["set"] == [{"epc": "a0", "edt": ""}]
    assert out["get"] == [
        {"epc": "80", "edt": "30"}, {"epc": "a0", "edt": "38"}, {"epc": "b0", "edt": "42"},
        {"epc": "b3", "edt": "19"},
    ]  # fmt: skip

    status, out, _ = run("inf-req", NODE_ADDR, "0ef001", "d5")
    assert status == 0 and out["esv"] == "73"
    assert out["properties"] == [{"epc": "d5", "edt": "01013001"}]

    status, out, _ = run("bench", NODE_ADDR, "--mode", "faithful", "--iterations", "20",
                         "--warmup", "2")  # fmt: skip
    assert status == 0
    assert out["mode"] == "faithful" and out["iterations"] == 20 and out["requests"] == 240
    assert (out["retries"], out["ignored"]) == (0, 0) and out["elapsed_s"] > 0
    status, out, _ = run("bench", NODE_ADDR, "--mode", "batched", "--iterations", "20")
    assert status == 0 and out["requests"] == 20 and out["mode"] == "batched"

    status, out, err = node.stop()
    assert status == 0 and err == ""
    c = json.loads(out)
    assert c["requests"] == 2 + 1 + 2 + 1 + 1 + 22 * 12 + 20 and c["ignored"] == 0


def test_an_unanswered_request_is_exit_1_with_an_error(start_node, port, run):
    status, out, err = run("--timeout-ms", "30", "--retries", "2", "get", NODE_ADDR, "0ef001", "80")
    assert status == 1 and list(out) == ["error"] and "3 attempt" in out["error"]
    start_node(port)
    # A DEOJ the node does not have: ignored by the node, so unanswered here.
    status, out, _ = run("--timeout-ms", "30", "--retries", "0", "get", NODE_ADDR, "0ef002", "80")
    assert status == 1 and "error" in out


@pytest.mark.parametrize(
    "args",
    [
        [], ["get"], ["get", NODE_ADDR, "0ef001"], ["get", "x", "0ef001", "80"],
        ["get", NODE_ADDR, "0ef0011", "80"], ["get", NODE_ADDR, "0ef001", "8"],
        ["setc", NODE_ADDR, "013001", "80"], ["frobnicate"], ["--timeout-ms", "0", "discover"],
        ["--retries", "-1", "discover"], ["--port", "0", "discover"], ["bench", NODE_ADDR],
        ["bench", NODE_ADDR, "--mode", "fast", "--iterations", "1"],
        ["discover", "--expect", "0"], ["get", NODE_ADDR, "0ef001", "80", "extra"],
    ],
)  # fmt: skip
def test_a_bad_command_line_is_exit_2(run, args):
    status, out, err = run(*args)
    assert status == 2 and out is None and err


def test_help_is_usage_on_stdout(interpreter):
    p = subprocess.run(
        [*interpreter, "controller_main.py", "--help"], cwd=IMPL_DIR, capture_output=True,
        text=True, timeout=30,
    )  # fmt: skip
    assert p.returncode == 0 and "bench" in p.stdout and "--timeout-ms" in p.stdout
