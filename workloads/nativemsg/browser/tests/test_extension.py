"""The lab's extension: its fixed id matches the origin every host is given, and its bench
page is cross-origin isolated, which is what gives performance.now() 5 µs steps."""

from __future__ import annotations

import base64
import json

import pytest
from conftest import BROWSER_DIR
from nmbrowser import session

EXTENSION = BROWSER_DIR / "extension"


def test_manifest_key_is_the_labs_public_key():
    manifest = json.loads((EXTENSION / "manifest.json").read_text())
    key = (BROWSER_DIR / "extension-key.pub.b64").read_text().strip()
    assert manifest["key"] == key
    assert base64.b64decode(key)[:2] == b"\x30\x82"  # a DER SEQUENCE: a public key, not text


def test_extension_id_is_the_workload_origin():
    from msgbench import registry

    origin = registry.workload("nativemsg").template_values["origin"]
    assert session.origin() == origin == "chrome-extension://dbdfabaehflnngajmmlhhmbokhdlaifa/"


def test_manifest_asks_for_what_the_bench_needs():
    manifest = json.loads((EXTENSION / "manifest.json").read_text())
    assert manifest["manifest_version"] == 3
    assert manifest["permissions"] == ["nativeMessaging"]
    assert manifest["cross_origin_embedder_policy"] == {"value": "require-corp"}
    assert manifest["cross_origin_opener_policy"] == {"value": "same-origin"}
    assert (EXTENSION / session.PAGE).is_file() and (EXTENSION / "bench.js").is_file()


@pytest.mark.browser
@pytest.mark.timeout(60)
def test_bench_page_is_isolated_with_a_5_us_timer(browser):
    info = browser.bench("info", timeout=10)
    assert info["extensionId"] == session.extension_id()
    assert info["crossOriginIsolated"] is True
    # Not isolated, Chromium coarsens performance.now() to 100 µs; isolated, to 5 µs.
    assert info["timerStepUs"] == pytest.approx(5, abs=0.01)
