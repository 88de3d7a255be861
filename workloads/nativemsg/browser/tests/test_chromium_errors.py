"""What the extension sees when a host breaks the protocol: Chromium's own error messages
(SPEC §1 and the "Real browser facts" of the workload's spec), with a host that misbehaves
on purpose (fixture_host.py). These are facts about the browser the lab's hosts must live with;
they also prove the bench page reports a broken host as an error instead of hanging on it.
"""

from __future__ import annotations

import pytest
from conftest import fixture_argv

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

COMMUNICATION_ERROR = "Error when communicating with the native messaging host."
HOST_EXITED = "Native host has exited."
PING = {"op": "ping"}
PONG = {"op": "pong"}
MAX_REPLY = 1024 * 1024
FILL_ENVELOPE = len('{"op":"fill","data":""}')
#: Long enough for Chromium to act on a bad frame; the page times out after PROBE_TIMEOUT_MS.
LINGER_MS = 500
PROBE_TIMEOUT_MS = 10_000


@pytest.fixture(scope="module")
def hosts(browser):
    """Host name by fixture mode, registered once in the module's browser."""
    modes = ("text", "len8", "over", "exact", "exit", "badjson")
    return {m: browser.register(f"fixture.{m}", fixture_argv(m)).name for m in modes}


def probe(browser, host: str, messages: list, expect: int) -> dict:
    return browser.bench(
        "probePort",
        host,
        messages,
        {"expect": expect, "lingerMs": LINGER_MS, "timeoutMs": PROBE_TIMEOUT_MS},
        timeout=PROBE_TIMEOUT_MS / 1000 + 5,
    )


def test_text_on_stdout_breaks_the_connection(browser, hosts):
    got = probe(browser, hosts["text"], [PING], expect=1)
    assert got == {"replies": [], "error": COMMUNICATION_ERROR, "timedOut": False}


def test_eight_byte_length_breaks_the_connection(browser, hosts):
    # Chromium reads 4 bytes of length, then a body that starts with the other 4 (zeros): not
    # JSON, dropped; what is left of the frame is read as a length far over 1 MiB.
    got = probe(browser, hosts["len8"], [PING], expect=1)
    assert got == {"replies": [], "error": COMMUNICATION_ERROR, "timedOut": False}


def test_reply_one_byte_over_1_mib_breaks_the_connection(browser, hosts):
    got = probe(browser, hosts["over"], [PING], expect=1)
    assert got == {"replies": [], "error": COMMUNICATION_ERROR, "timedOut": False}


def test_host_exiting_mid_session_closes_the_port(browser, hosts):
    # Two requests: the first is answered, then the host exits with the port still open.
    got = probe(browser, hosts["exit"], [PING, PING], expect=2)
    assert got == {"replies": [PONG], "error": HOST_EXITED, "timedOut": False}


def test_invalid_json_reply_is_ignored_and_the_port_stays_open(browser, hosts):
    # Each request gets a valid frame of invalid JSON, then the real reply: only the replies
    # arrive, and the port is still open LINGER_MS after the last one.
    got = probe(browser, hosts["badjson"], [PING, PING, PING], expect=3)
    assert got == {"replies": [PONG, PONG, PONG], "error": None, "timedOut": False}


def test_exactly_1_mib_reply_is_delivered_intact(browser, hosts):
    got = browser.bench("probeFill", hosts["exact"], MAX_REPLY, PROBE_TIMEOUT_MS, timeout=20)
    assert got["error"] is None and not got["timedOut"]
    assert got["replies"] == [
        {
            "keys": ["data", "op"],
            "op": "fill",
            "dataLength": MAX_REPLY - FILL_ENVELOPE,
            "onlyX": True,
        }
    ]


def test_send_native_message_reports_chromium_errors(browser, hosts):
    """sendNativeMessage surfaces the same errors through chrome.runtime.lastError."""
    assert browser.bench("probeSend", hosts["text"], PING, PROBE_TIMEOUT_MS, timeout=15) == {
        "error": COMMUNICATION_ERROR
    }
    assert browser.bench("probeSend", hosts["exit"], PING, PROBE_TIMEOUT_MS, timeout=15) == {
        "reply": PONG
    }


def test_unregistered_host_is_refused(browser):
    got = browser.bench("probeSend", "fixture.nosuchhost", PING, PROBE_TIMEOUT_MS, timeout=15)
    assert got == {"error": "Specified native messaging host not found."}
