"""The echo payload is the native driver's, byte for byte, and Chromium delivers it to the host
unchanged: browser and native figures measure the same bytes (SPEC §5)."""

from __future__ import annotations

import hashlib
import json
import subprocess

import pytest
from conftest import fixture_argv
from nmbrowser import payload

NATIVE_DRIVER = "nativemsg-driver"
SPECIALS = ('"', "\\", "\n", "é", "€", "😀")


@pytest.mark.parametrize("size", [payload.MIN_ECHO_SIZE, 100, 1024, 65536, 524288, 1 << 20])
def test_echo_body_has_the_exact_size_and_walks_every_path(size):
    body = payload.echo_body(size)
    assert len(body) == size
    value = json.loads(body)
    assert list(value) == ["op", "data"] and list(value["data"]) == ["seq", "text"]
    assert value["data"]["seq"] == 100000
    if size >= 1024:
        text = value["data"]["text"]
        assert all(c in text for c in SPECIALS)
        assert text.count("😀") >= size // 400  # every few hundred bytes, not once


def test_echo_sizes_out_of_range_are_refused():
    with pytest.raises(ValueError):
        payload.echo_body(payload.MIN_ECHO_SIZE - 1)
    with pytest.raises(ValueError):
        payload.echo_body(payload.MAX_REQUEST_BODY + 1)


def test_echo_text_reserialises_to_the_body():
    text = payload.echo_text(4096)
    compact = json.dumps(
        {"op": "echo", "data": {"seq": 100000, "text": text}},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert compact.encode() == payload.echo_body(4096)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("size", [1024, 65536])
def test_same_bytes_as_the_native_driver(tmp_path, size):
    from msgbench import paths

    driver = paths.CARGO_BIN / NATIVE_DRIVER
    if not driver.exists():
        pytest.skip(f"{NATIVE_DRIVER} not built: run msgbench build nativemsg")
    log = tmp_path / "record.jsonl"
    argv = [str(driver), "--mode", "persistent", "--op", "echo", "--size", str(size)]
    argv += ["--iterations", "1", "--warmup", "0", "--timeout-s", "30", "--"]
    subprocess.run(
        [*argv, *fixture_argv("record", str(log))],
        check=True,
        timeout=45,
        stdout=subprocess.DEVNULL,
    )
    (seen,) = [json.loads(line) for line in log.read_text().splitlines()]
    body = payload.echo_body(size)
    assert seen == {"len": size, "sha256": hashlib.sha256(body).hexdigest()}


@pytest.mark.browser
@pytest.mark.timeout(60)
@pytest.mark.parametrize("size", [1024, 65536, 524288])
def test_chromium_delivers_the_payload_unchanged(browser, tmp_path, size):
    log = tmp_path / "record.jsonl"
    name = browser.register(f"fixture.record{size}", fixture_argv("record", str(log))).name
    browser.bench("open", name, timeout=10)
    try:
        config = {
            "op": "echo",
            "text": payload.echo_text(size),
            "warmup": 0,
            "iterations": 3,
            "checkFull": 3,
            "timeoutMs": 20_000,
        }
        got = browser.bench("runPort", config, timeout=30)
    finally:
        browser.bench("close", timeout=10)
    assert got["checked"]["full"] == 3
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    want = [payload.echo_body(size, seq) for seq in (100000, 100001, 100002)]
    assert seen == [{"len": size, "sha256": hashlib.sha256(b).hexdigest()} for b in want]
