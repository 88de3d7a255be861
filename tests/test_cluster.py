"""The lab on a Ray cluster (docs/hosts.md), proved on this machine: a two-node cluster (the head
here, a worker in a network namespace with an address of its own), a comm and a redis trial with
the driver on the head and the implementation on the worker, a sweep that spreads rounds over both
nodes, and what Ray's own processes cost where the implementation runs. Time-bounded; skipped with
the reason where namespaces cannot be made or Ray is not installed (`make setup-ray`)."""

from __future__ import annotations

import pytest

from msgbench import hostsfile, raycluster, registry, runner, sites

WHY = raycluster.unavailable_reason()
pytestmark = [pytest.mark.skipif(WHY is not None, reason=str(WHY)), pytest.mark.timeout(900)]

# Ray's processes on CPU 0, beside the driver; the implementation alone on the last CPU.
RAY_CPUS = [0]


@pytest.fixture(scope="module")
def cluster():
    described = raycluster.up(RAY_CPUS)
    yield described
    import ray

    ray.shutdown()
    raycluster.down()


def measure(tmp_path, workload, scenario, opened):
    w = registry.workload(workload)
    plan = [(w, [w.scenarios[scenario]], [w.impls["c"], w.impls["baseline"]])]
    return runner.measure(plan, "smoke", runner.placement("split"), tmp_path / "logs", seed=3,
                          sites=opened)  # fmt: skip


@pytest.mark.parametrize(("workload", "scenario"), [("comm", "test4"), ("redis", "setget-1k")])
def test_driver_on_the_head_implementation_on_the_worker(cluster, tmp_path, workload, scenario):
    hf = hostsfile.load(raycluster.STATE / "roles.toml")
    with sites.open_sites(hf) as opened:
        apart = measure(tmp_path, workload, scenario, opened)
        costs = opened.costs()
        described = opened.describe()
    here = measure(tmp_path, workload, scenario, None)
    assert not apart.failures and not here.failures, (apart.failures, here.failures)
    assert described["worker"]["addr"] == raycluster.WORKER_ADDR
    assert described["head"]["node_id"] != described["worker"]["node_id"]
    for impl in ("c", "baseline"):
        docs = apart.docs[(workload, scenario, impl)]
        assert len(docs) == len(here.docs[(workload, scenario, impl)]) == 2
        for doc in docs:
            assert doc["roles"] == {"driver": "head", "impl": "worker"}
            assert doc["impl"]["cpu_us_per_op"] > 0
            assert doc["impl"]["run_delay_us_per_op"] >= 0
    # Ray's own processes, on both nodes, were kept off the implementation's CPU.
    impl_cpu = runner.placement("split").impl_cpus[0]
    for node in ("head", "worker"):
        assert costs[node]["count"] > 0
        assert impl_cpu not in costs[node]["allowed_cpus"], costs[node]


def test_a_sweep_measures_complete_rounds_on_each_node(cluster, tmp_path):
    hf = hostsfile.load(raycluster.STATE / "sweep.toml")
    w = registry.workload("comm")
    plan = [(w, [w.scenarios["test4"]], [w.impls["c"], w.impls["baseline"]])]
    with sites.open_sites(hf) as opened:
        done = runner.measure(plan, "smoke", runner.placement("split"), tmp_path / "logs",
                              seed=5, sites=opened)  # fmt: skip
    assert not done.failures, done.failures
    for impl in ("c", "baseline"):
        docs = done.docs[("comm", "test4", impl)]
        by_node = {d["_node"]: d["_round"] for d in docs}
        assert by_node == {"head": 1, "worker": 2}, "round 1 on the head, round 2 on the worker"
        for d in docs:
            assert d["roles"] == {"driver": d["_node"], "impl": d["_node"]}
