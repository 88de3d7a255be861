"""Every host of the lab, driven by real Chromium: 1,000 connectNative round trips and 100
sendNativeMessage calls with every reply checked in full, and the largest reply Chromium
accepts (1 MiB, through `fill`). A host that passes the stdio conformance suite but trips on
something only a browser does (argv, cwd, the launcher, timing) fails here.
"""

from __future__ import annotations

import pytest
from conftest import lab_impls
from nmbrowser import payload

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

ROUND_TRIPS = 1000
SPAWNS = 100
ECHO_SIZE = 1024
MAX_REPLY = 1024 * 1024
#: Bounds of the page's loops (the Python host spawns in ~30-60 ms under Chromium).
LOOP_TIMEOUT_MS = 90_000


def _params():
    out = []
    for impl in lab_impls():
        marks = [] if impl.built else [pytest.mark.skip(reason="not built: run msgbench build")]
        out.append(pytest.param(impl, id=impl.id, marks=marks))
    return out


@pytest.fixture(scope="module")
def registered(browser):
    """Registers each host on first use; returns its host name."""
    names = {}

    def name_of(impl) -> str:
        if impl.id not in names:
            name = "lab." + impl.id.replace("-", "_")
            names[impl.id] = browser.register(name, impl.argv(), cwd=impl.cwd()).name
        return names[impl.id]

    return name_of


def _loop(size: int, warmup: int, iterations: int) -> dict:
    # checkFull = every operation: each reply is compared in full as JSON with its request.
    return {
        "op": "echo" if size else "ping",
        "text": payload.echo_text(size) if size else "",
        "warmup": warmup,
        "iterations": iterations,
        "checkFull": iterations,
        "timeoutMs": LOOP_TIMEOUT_MS,
    }


@pytest.mark.parametrize("impl", _params())
def test_connect_native_round_trips(browser, registered, impl):
    host = registered(impl)
    assert browser.bench("open", host, timeout=10) is True
    try:
        got = browser.bench("runPort", _loop(ECHO_SIZE, 0, ROUND_TRIPS), timeout=100)
    finally:
        closed = browser.bench("close", timeout=10)
    assert got["checked"] == {"full": ROUND_TRIPS, "light": 0}
    assert len(got["latenciesUs"]) == ROUND_TRIPS
    assert all(v > 0 for v in got["latenciesUs"])
    assert closed == {"wasOpen": True, "error": None}  # the host never dropped the port


@pytest.mark.parametrize("impl", _params())
def test_send_native_message_calls(browser, registered, impl):
    got = browser.bench("runSend", registered(impl), _loop(0, 0, SPAWNS), timeout=100)
    assert got["checked"] == {"full": SPAWNS, "light": 0}
    assert len(got["latenciesUs"]) == SPAWNS


@pytest.mark.parametrize("impl", _params())
def test_largest_reply_is_delivered_intact(browser, registered, impl):
    if "json" in impl.skip_markers:
        pytest.skip(f"n/a for {impl.id}: fill needs a host that parses JSON")
    got = browser.bench("probeFill", registered(impl), MAX_REPLY, 30_000, timeout=40)
    assert got["error"] is None and not got["timedOut"]
    (reply,) = got["replies"]
    # The host's serialiser decides the envelope (compact or not); the body is exactly 1 MiB,
    # so the string is 1 MiB less that envelope, and Chromium delivered all of it.
    assert reply["keys"] == ["data", "op"] and reply["op"] == "fill" and reply["onlyX"]
    assert MAX_REPLY - 40 <= reply["dataLength"] <= MAX_REPLY - len('{"op":"fill","data":""}')
