"""Roles on different hosts (docs/hosts.md): with a hosts file that puts the driver on one host
and the implementation on another (two network namespaces across a bridge; or two local hosts,
the same path on 127.0.0.1), comm and redis trials run with the implementation started and
measured by the host agent of its host, and give the same figures as a local run of the same
trials."""

from __future__ import annotations

import pytest

from msgbench import hostsfile, registry, runner, sites, topology

NETNS_WHY = topology.unavailable_reason()
KINDS = [
    "local",  # two hosts of this process tree: the agent's path, on 127.0.0.1
    pytest.param("netns", marks=pytest.mark.skipif(NETNS_WHY is not None, reason=str(NETNS_WHY))),
]
SCENARIOS = [("comm", "test4"), ("redis", "setget-1k")]


def roles(kind: str) -> dict:
    return {
        "hosts": {"a": {"kind": kind}, "b": {"kind": kind}},
        "roles": {"driver": "a", "impl": "b"},
    }


def measure(tmp_path, workload, scenario, opened):
    w = registry.workload(workload)
    plan = [(w, [w.scenarios[scenario]], [w.impls["c"], w.impls["baseline"]])]
    return runner.measure(plan, "smoke", runner.placement("split"), tmp_path / "logs", seed=7,
                          sites=opened)  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("workload", "scenario"), SCENARIOS)
def test_driver_and_implementation_on_two_hosts(tmp_path, kind, workload, scenario):
    hf = hostsfile.parse(roles(kind), "test")
    with sites.open_sites(hf) as opened:
        apart = measure(tmp_path, workload, scenario, opened)
        impl_addr = opened.role("impl").addr
    here = measure(tmp_path, workload, scenario, None)
    assert not apart.failures and not here.failures, (apart.failures, here.failures)
    for impl in ("c", "baseline"):
        remote = apart.docs[(workload, scenario, impl)]
        local = here.docs[(workload, scenario, impl)]
        assert len(remote) == len(local) == 2
        for doc in remote:
            assert doc["roles"] == {"driver": "a", "impl": "b"}
            assert doc["impl"]["host"]["cpus"], "the agent described the implementation's host"
            assert doc["impl"]["cpu_us_per_op"] > 0 and doc["impl"]["maxrss_kb"] > 0
            assert doc["impl"]["run_delay_us_per_op"] >= 0
        for doc in local:
            assert doc["roles"] == {"driver": "local", "impl": "local"}
            assert "host" not in doc["impl"]
            assert doc["impl"]["run_delay_us_per_op"] >= 0
        if workload == "comm":  # the same work, every reply checked, on both
            assert {d["replies_checked"] for d in remote} == {d["replies_checked"] for d in local}
        else:
            assert {d["requests"] for d in remote} == {d["requests"] for d in local}
            assert remote[0]["load_generator"]["argv"][2] == impl_addr  # redis-benchmark -h
    logs = {p.name for p in (tmp_path / "logs").iterdir()}
    assert f"{workload}-c.stderr.log" in logs, (
        "the agent kept the server's output in the run's logs"
    )


def test_a_kind_that_cannot_split_is_skipped_with_the_reason():
    hf = hostsfile.parse(roles("netns"), "test")
    w = registry.workload("nativemsg")
    planning = sites.Sites(hf, {}, "")
    chosen, skipped = runner.runnable(w, w.scenarios["pingpong"], [w.impls["c"]], planning)
    assert not chosen
    assert "cannot run on another host" in skipped["c"]


def test_a_sweep_over_two_hosts_reads_ratios_within_each(tmp_path):
    """Two local hosts take turns: round 1 on the first, round 2 on the second, each with its
    own warm-up; the result rows keep each node's samples, and the report's Nodes section reads
    the ratio to the floor within each node."""
    from msgbench import results
    from msgbench.report import inputs
    from msgbench.report.sections import nodes

    hf = hostsfile.parse(
        {
            "hosts": {"n1": {"kind": "local"}, "n2": {"kind": "local"}},
            "sweep": {"nodes": ["n1", "n2"]},
        },
        "test",
    )
    w = registry.workload("comm")
    s = w.scenarios["test4"]
    impls = [w.impls["c"], w.impls["baseline"]]
    with sites.open_sites(hf) as opened:
        done = runner.measure([(w, [s], impls)], "smoke", runner.placement("split"),
                              tmp_path / "logs", seed=2, sites=opened)  # fmt: skip
    assert not done.failures, done.failures
    rows = []
    for impl in impls:
        docs = done.docs[("comm", "test4", impl.id)]
        assert {(d["_node"], d["_round"]) for d in docs} == {("n1", 1), ("n2", 2)}
        assert all(d["roles"] == {"driver": d["_node"], "impl": d["_node"]} for d in docs)
        rows += results.result_rows(w, s, impl, done, None)
    primary = next(r for r in rows if r["impl"] == "c" and r["metric"] == s.primary)
    assert list(primary["nodes"]) == ["n1", "n2"]
    assert all(len(v) == 1 for v in primary["nodes"].values())
    wl = {
        "name": "comm",
        "baseline": "baseline",
        "scenarios": [{"name": "test4", "primary": s.primary}],
    }
    report_doc = {"results": rows, "impls": [{"workload": "comm", "impl": i.id} for i in impls]}
    blocks = nodes.nodes(wl, inputs.impl_infos(report_doc, wl), inputs.outcomes(report_doc, "comm"))
    table = blocks[-1]
    assert table.headers == ["implementation", "n1", "n2", "nodes"]
    assert [row[0].text for row in table.rows] == ["baseline (floor)", "c"]


def test_the_report_says_where_the_roles_ran():
    from msgbench.report.sections.environment import hosts_table

    hosts = {
        "file": {"path": "h.toml", "kind": "ray", "roles": {"driver": "a", "impl": "b"}},
        "hosts": {
            "a": {"kind": "ray", "addr": "10.0.0.1", "node_id": "ab" * 14, "machine": "m1"},
            "b": {"kind": "ray", "addr": "10.0.0.2", "node_id": "cd" * 14, "machine": "m1"},
        },
        "cluster_processes": {"b": {"count": 9, "cpu_s_during_run": 0.4, "allowed_cpus": [0]}},
        "binaries": {"files": {"/x": {"a": "1", "b": "2"}}, "identical": False},
    }
    table = hosts_table(hosts)
    assert [r[2].text for r in table.rows] == ["driver", "impl"]
    assert table.rows[1][6].text == "9 processes, 0.4 s of CPU over the run, allowed on CPUs 0"
    assert "DIFFER between hosts" in table.caption


def test_binaries_are_compared_across_hosts(tmp_path):
    prog = tmp_path / "prog"
    prog.write_bytes(b"same")
    hf = hostsfile.parse(roles("local"), "test")
    with sites.open_sites(hf) as opened:
        same = opened.binaries([str(prog), str(tmp_path / "missing")])
    assert same["files"][str(prog)]["a"] == same["files"][str(prog)]["b"]
    assert same["identical"] is False  # a program missing everywhere is not "the same"
