"""msgbench.verify reads the conformance matrix from the JUnit properties the plugin records
(msgbench.conformance_plugin): never from test ids or skip messages."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from msgbench import paths, registry, verify

XML = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
 <testcase classname="test_framing" name="test_ping[c]"><properties>
   <property name="case" value="test_ping"/><property name="impl" value="c"/>
   <property name="applicable" value="yes"/></properties></testcase>
 <testcase classname="test_framing" name="test_echo[c-yajl]"><properties>
   <property name="case" value="test_echo[yajl]"/><property name="impl" value="c"/>
   <property name="applicable" value="yes"/></properties></testcase>
 <testcase classname="test_framing" name="test_echo[c-yajl-yajl]"><properties>
   <property name="case" value="test_echo[yajl]"/><property name="impl" value="c-yajl"/>
   <property name="applicable" value="yes"/></properties>
   <failure message="AssertionError: reply differs&#10;more">trace</failure></testcase>
 <testcase classname="test_framing" name="test_fill[c]"><properties>
   <property name="case" value="test_fill"/><property name="impl" value="c"/>
   <property name="applicable" value="n/a"/><property name="na_reason" value="json"/>
   </properties><skipped type="pytest.skip" message="skipped">skip</skipped></testcase>
 <testcase classname="test_framing" name="test_big[c-yajl]"><properties>
   <property name="case" value="test_big"/><property name="impl" value="c-yajl"/>
   <property name="applicable" value="yes"/></properties>
   <skipped type="pytest.skip" message="n/a for c-yajl">skip</skipped></testcase>
 <testcase classname="test_interop" name="test_pair[c-client=go]"><properties>
   <property name="case" value="test_pair[client=go]"/><property name="impl" value="c"/>
   <property name="client" value="go"/><property name="applicable" value="yes"/>
   </properties></testcase>
 <testcase classname="test_selftest" name="test_suite_catches_bug[c]"><properties>
   <property name="case" value="test_suite_catches_bug[c]"/></properties></testcase>
</testsuite></testsuites>
"""


def test_properties_become_a_matrix(tmp_path):
    xml = tmp_path / "r.xml"
    xml.write_text(XML)
    v = verify.parse_junit(xml, "toy", ["c", "c-yajl"])
    c, y = v["c"], v["c-yajl"]
    # The implementation is the property, whatever the id looks like (`c-yajl` is c's case).
    assert c.tests == {
        "test_ping": "pass",
        "test_echo[yajl]": "pass",
        "test_fill": "n/a",
        "test_pair[client=go]": "pass",
    }
    assert (c.passed, c.failed, c.skipped) == (3, 0, 1) and c.ok
    assert c.clients == {"test_pair[client=go]": "go"}
    # A skip whose message reads "n/a for" is still a skip: applicability is a property.
    assert y.tests == {"test_echo[yajl]": "FAIL", "test_big": "skip"}
    assert y.failures == [{"test": "test_echo[yajl]", "message": "AssertionError: reply differs"}]
    assert not y.ok
    assert c.as_json()["clients"] == {"test_pair[client=go]": "go"}


def test_an_implementation_with_no_test_run_is_not_ok(tmp_path):
    xml = tmp_path / "r.xml"
    xml.write_text(XML)
    assert not verify.parse_junit(xml, "toy", ["c", "go"])["go"].ok


CONFTEST = 'pytest_plugins = ["msgbench.conformance_plugin"]\n'

SUITE = """
import pytest


def test_runs(impl):
    assert impl.argv()


@pytest.mark.json
def test_parses_json(impl):
    pass


@pytest.mark.parametrize("variant", ["yajl"])
def test_variant(impl, variant):
    pass


def test_runtime_skip(impl):
    pytest.skip("n/a for everyone, says the message only")


def test_pair(impl, client):
    assert not (impl.id == "c-yajl" and client.id == "c"), "c's client cannot talk to c-yajl"


def test_own_client(client):
    assert client.client_argv()
"""


def _toy_suite(fake_lab):
    """Two implementations whose ids a prefix match confuses (c, c-yajl), both with a client;
    c-yajl's impl.toml lists the skip marker json; `ghost` is not built."""
    suite = fake_lab.conformance_dir
    suite.mkdir()
    (suite / "conftest.py").write_text(CONFTEST)
    (suite / "test_toy.py").write_text(SUITE)
    for impl_id, skip in (("c", []), ("c-yajl", ["json"]), ("ghost", [])):
        d = fake_lab.dir / "impls" / impl_id
        d.mkdir()
        if impl_id != "ghost":
            for prog in ("run.sh", "client.sh"):
                (d / prog).write_text("#!/bin/sh\n")
        (d / "impl.toml").write_text(
            textwrap.dedent(f"""
            id = "{impl_id}"
            language = "c"
            [build]
            system = "none"
            [run]
            argv = ["{{impl_dir}}/run.sh"]
            client_argv = ["{{impl_dir}}/client.sh"]
            [conformance]
            skip_markers = {skip!r}
            """).replace("'", '"')
        )
    registry.load.cache_clear()
    return registry.workload(fake_lab.name)


def test_verify_runs_the_suite_and_reads_the_plugins_properties(fake_lab, tmp_path):
    w = _toy_suite(fake_lab)
    v = verify.run(w, [w.impls["c"], w.impls["c-yajl"], w.impls["ghost"]], tmp_path / "logs")
    c, y, ghost = v["c"], v["c-yajl"], v["ghost"]
    assert c.tests == {
        "test_runs": "pass",
        "test_parses_json": "pass",
        "test_variant[yajl]": "pass",
        "test_runtime_skip": "skip",
        "test_pair[client=c]": "pass",
        "test_pair[client=c-yajl]": "pass",
        "test_pair[client=ghost]": "skip",  # that client is not built
        "test_own_client[client=c]": "pass",
    }, (tmp_path / "logs" / f"verify-{w.name}.log").read_text()
    assert c.ok and (c.passed, c.failed, c.skipped) == (6, 0, 2)
    assert y.tests["test_parses_json"] == "n/a"
    assert y.tests["test_pair[client=c]"] == "FAIL"
    assert "cannot talk to c-yajl" in y.failures[0]["message"]
    assert y.clients == {
        "test_pair[client=c]": "c",
        "test_pair[client=c-yajl]": "c-yajl",
        "test_pair[client=ghost]": "ghost",
        "test_own_client[client=c-yajl]": "c-yajl",
    }
    assert not y.ok
    assert "./msgbench build" in ghost.error and not ghost.tests


def _pytest(suite, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MSGBENCH_WORKLOADS": str(paths.WORKLOADS)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(suite), "-p", "no:cacheprovider", "-rs", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_an_absent_implementation_is_not_applicable_not_failed(fake_lab, tmp_path):
    """verify records it with the reason and runs nothing for it; the plugin leaves it out of
    the suite's parameters (its tests and its clients) and refuses to test it by name."""
    w = _toy_suite(fake_lab)
    d = fake_lab.dir / "impls" / "py"
    d.mkdir()
    (d / "impl.toml").write_text(
        'id = "py"\nlanguage = "python"\nabsent = "no library"\n'
        '[build]\nsystem = "none"\n[run]\nargv = []\n'
    )
    registry.load.cache_clear()
    w = registry.workload(fake_lab.name)
    v = verify.run(w, [w.impls["c"], w.impls["py"]], tmp_path / "logs")
    assert v["py"].absent == "no library" and v["py"].ok and not v["py"].error
    assert "py" not in v["c"].clients.values()  # not a client of any pair either
    assert not (tmp_path / "logs" / f"verify-{w.name}-py.xml").exists()
    out = _pytest(w.conformance_dir, "--impl", "py")
    assert out.returncode == 4 and "'py' is absent: no library" in out.stderr


def test_a_subset_system_is_held_only_to_its_marked_tests(fake_lab, tmp_path):
    """impl.toml [conformance] only_markers (a seed's own server, mini-redis): the tests with
    the marker run, every other one is n/a with the reason, and it is verified ok."""
    w = _toy_suite(fake_lab)
    d = fake_lab.dir / "impls" / "seedsys"
    d.mkdir()
    (d / "run.sh").write_text("#!/bin/sh\n")
    (d / "impl.toml").write_text(
        'id = "seedsys"\nlanguage = "rust"\n[build]\nsystem = "none"\n[run]\n'
        'argv = ["{impl_dir}/run.sh"]\n[conformance]\nonly_markers = ["json"]\n'
        'only_why = "JSON only"\n'
    )
    registry.load.cache_clear()
    w = registry.workload(fake_lab.name)
    v = verify.run(w, [w.impls["seedsys"]], tmp_path / "logs")["seedsys"]
    assert v.tests["test_parses_json"] == "pass"
    assert v.tests["test_runs"] == v.tests["test_variant[yajl]"] == "n/a"
    assert v.ok and v.passed == 1
    out = _pytest(w.conformance_dir, "--impl", "seedsys", "-k", "test_runs")
    assert "it implements a subset (JSON only); only tests marked json apply" in out.stdout


def test_the_plugin_says_how_to_build_and_rejects_unknown_ids(fake_lab):
    w = _toy_suite(fake_lab)
    out = _pytest(w.conformance_dir, "--impl", "ghost", "-k", "test_runs")
    assert f"ghost is not built: run `./msgbench build {w.name} --impl ghost`" in out.stdout
    out = _pytest(w.conformance_dir, "--impl", "cobol")
    assert out.returncode == 4  # a usage error
    assert "unknown" in out.stderr and "cobol" in out.stderr and "c-yajl" in out.stderr


DEVIATION_SUITE = """
def test_common(impl):
    pass


def test_ref_lacks_it(impl):
    assert impl.id != "ref", "ref does not answer this"


def test_listed_but_met(impl):
    pass
"""


def test_known_deviations_of_a_reference_are_reported_and_must_still_fail(fake_lab, tmp_path):
    """[conformance.deviations]: a declared deviation that fails is a deviation (the reference
    is still verified, so measured); one that passes fails (strict), so the list cannot rot."""
    suite = fake_lab.conformance_dir
    suite.mkdir()
    (suite / "conftest.py").write_text(CONFTEST)
    (suite / "test_dev.py").write_text(DEVIATION_SUITE)
    d = fake_lab.dir / "impls" / "ref"
    d.mkdir()
    (d / "run.sh").write_text("#!/bin/sh\n")
    (d / "impl.toml").write_text(
        textwrap.dedent("""
        id = "ref"
        language = "python"
        [build]
        system = "none"
        [run]
        argv = ["{impl_dir}/run.sh"]
        [conformance.deviations]
        test_ref_lacks_it = "the reference has no such service"
        """)
    )
    registry.load.cache_clear()
    w = registry.workload(fake_lab.name)
    v = verify.run(w, [w.impls["ref"]], tmp_path / "logs")["ref"]
    assert v.tests["test_common"] == "pass"
    assert v.tests["test_ref_lacks_it"] == "deviation"
    assert v.deviation_reasons == {"test_ref_lacks_it": "the reference has no such service"}
    assert v.ok and v.deviations == 1 and v.failed == 0

    (d / "impl.toml").write_text(
        (d / "impl.toml").read_text() + 'test_listed_but_met = "claimed, but it holds"\n'
    )
    registry.load.cache_clear()
    w = registry.workload(fake_lab.name)
    v = verify.run(w, [w.impls["ref"]], tmp_path / "logs2")["ref"]
    assert v.tests["test_listed_but_met"] == "FAIL" and not v.ok
