"""Reading the conformance matrix out of pytest's JUnit XML."""

from __future__ import annotations

from msgbench import verify

XML = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
 <testcase classname="test_framing" name="test_ping[c]"/>
 <testcase classname="test_framing" name="test_ping[py-thon]"/>
 <testcase classname="test_framing" name="test_echo[c-nested]"/>
 <testcase classname="test_framing" name="test_echo[nested-py-thon]">
   <failure message="AssertionError: reply differs">trace</failure></testcase>
 <testcase classname="test_framing" name="test_fill[c]">
   <skipped type="pytest.skip" message="n/a for c">skip</skipped></testcase>
 <testcase classname="test_framing" name="test_big[py-thon]">
   <skipped type="pytest.skip" message="not built">skip</skipped></testcase>
 <testcase classname="test_framing" name="test_unrelated"/>
</testsuite></testsuites>
"""


def test_junit_becomes_a_matrix(tmp_path):
    xml = tmp_path / "r.xml"
    xml.write_text(XML)
    v = verify.parse_junit(xml, "toy", ["c", "py-thon"])
    c, p = v["c"], v["py-thon"]
    assert (c.passed, c.failed, c.skipped) == (2, 0, 1)
    assert c.tests == {"test_ping": "pass", "test_echo[nested]": "pass", "test_fill": "n/a"}
    assert c.ok
    assert (p.passed, p.failed, p.skipped) == (1, 1, 1)
    assert p.tests["test_echo[nested]"] == "FAIL"
    assert p.tests["test_big"] == "skip"
    assert p.failures == [{"test": "test_echo[nested]", "message": "AssertionError: reply differs"}]
    assert not p.ok


def test_an_implementation_with_no_test_run_is_not_ok(tmp_path):
    xml = tmp_path / "r.xml"
    xml.write_text(XML)
    assert not verify.parse_junit(xml, "toy", ["c", "py-thon", "go"])["go"].ok
