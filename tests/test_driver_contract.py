"""Every driver meets the driver contract (docs/driver-contract.md): its real output, run
against its workload's baseline implementation, validates against
docs/driver-output.schema.json, and so does its error document for a bad command line (exit 2)
and for an implementation that is missing (exit 1).

The drivers and the implementations are found through the registry, as the harness finds
them; a test skips, saying what to build, when one is not built."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from msgbench import paths, registry, topology

SCHEMA_PATH = paths.ROOT / "docs" / "driver-output.schema.json"
#: Bound of one driver run: a small trial takes seconds; a loaded machine may take many more.
RUN_TIMEOUT_S = 300
#: Tiny scenarios: enough work for every figure to be there, quick on a loaded machine.
NATIVEMSG_ARGS = ["--op", "ping", "--size", "0", "--iterations", "200", "--warmup", "20"]
COMM_ARGS = ["--mode", "rtt", "--clients", "1", "--size", "64", "--messages", "200"]
COMM_ARGS += ["--warmup", "20"]
REDIS_ARGS = ["--bench", "-n 2000 -t ping,set,get -P 4", "--count-keys"]
ECHONET_ARGS = ["--mode", "faithful", "--iterations", "50", "--warmup", "5"]
#: The echonet driver's own test node and controller (stdlib Python), used where the
#: workload's baseline (which has no controller) is not built.
ECHONET_TEST_PROGRAMS = paths.ROOT / "drivers" / "echonet" / "tests"
MISSING_IMPL = "/nonexistent/msgbench-impl"


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def assert_valid(validator, doc: dict) -> None:
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "; ".join(f"{list(e.path)}: {e.message}" for e in errors) + f"\n{doc}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def driver_argv(workload: str, driver: str | None = None) -> list[str]:
    w = registry.workload(workload)
    d = w.drivers[driver] if driver else next(iter(w.drivers.values()))
    missing = d.missing()
    if missing:
        pytest.skip(f"driver {workload}/{d.name} needs {', '.join(missing)} on PATH")
    argv = w.driver(driver)
    if d.build.get("system", "none") != "none" and not Path(argv[0]).exists():
        pytest.skip(f"driver {workload}/{d.name} not built: ./msgbench build {workload}")
    return argv


def baseline(workload: str) -> registry.Impl:
    w = registry.workload(workload)
    impl = w.impls[w.baseline]
    if not impl.built:
        pytest.skip(f"{workload}/{impl.id} not built: ./msgbench build {workload} --impl {impl.id}")
    return impl


def run(argv: list[str]) -> tuple[int, dict]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"stdout is not one JSON document: {done.stdout!r}; stderr {done.stderr!r}")
    return done.returncode, doc


def common(tmp_path: Path, impl_cpus: bool = True) -> list[str]:
    """The contract's common flags, as the runner passes them."""
    cpus = sorted(os.sched_getaffinity(0))
    flags = ["--driver-cpus", str(cpus[0])]
    if impl_cpus:
        flags += ["--impl-cpus", str(cpus[-1])]
    return [*flags, "--impl-stderr", str(tmp_path / "impl.stderr.log"), "--timeout-s", "120"]


def assert_report(validator, doc: dict, driver: str, clock: str) -> None:
    assert "error" not in doc, doc
    assert_valid(validator, doc)
    assert doc["driver"] == driver
    assert doc["impl"]["cpu_clock"] == clock
    assert doc["impl"]["cpu_s"] > 0 and doc["impl"]["cpu_us_per_op"] > 0
    assert isinstance(doc["impl"]["maxrss_kb"], int) and doc["impl"]["maxrss_kb"] > 0


def assert_error(validator, status: int, doc: dict, want_status: int, says: str) -> None:
    assert status == want_status, doc
    assert_valid(validator, doc)
    assert list(doc) == ["error"] and says in doc["error"], doc


# ---- the schema itself ---------------------------------------------------------------------


def test_the_schema_refuses_what_the_contract_rules_out(validator):
    good = {
        "driver": "x",
        "driver_cpus": [0],
        "impl_cpus": None,
        "impl": {
            "cpu_s": 0.5,
            "cpu_clock": "wait4-rusage",
            "cpu_us_per_op": 2.5,
            "maxrss_kb": None,
            "exit_status": [0],
            "processes": 3,
        },
        "latency_us": {"p50": 1.0},
    }
    assert_valid(validator, good)
    assert_valid(validator, {"error": "wrong reply"})
    old_style = {k: v for k, v in good.items() if k != "impl"} | {"host": good["impl"]}
    bad_docs = [
        old_style,
        {**good, "impl": {**good["impl"], "cpu_clock": "/proc ticks"}},
        {**good, "impl": {**good["impl"], "cpu_s": None}},
        {**good, "impl_cpus": ["1"]},
        {k: v for k, v in good.items() if k != "driver_cpus"},
        {"error": "x", "ops": 3},
        {"error": ""},
        {**good, "error": "both"},
    ]
    for doc in bad_docs:
        assert not validator.is_valid(doc), doc


# ---- nativemsg: the native driver ------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "clock"), [("persistent", "process-cpu-clock"), ("spawn", "wait4-rusage")]
)
def test_nativemsg_driver_report(validator, tmp_path, mode, clock):
    argv = driver_argv("nativemsg", "native")
    host = baseline("nativemsg")
    status, doc = run(
        [*argv, "--mode", mode, *NATIVEMSG_ARGS, *common(tmp_path), "--", *host.argv()]
    )
    assert status == 0, doc
    assert_report(validator, doc, "nativemsg", clock)
    assert doc["impl"]["exit_status"] == [0]
    assert doc["impl"]["cpu_us_per_op"] == pytest.approx(doc["impl"]["cpu_s"] * 1e6 / 220, rel=1e-3)


def test_nativemsg_driver_errors(validator, tmp_path):
    argv = driver_argv("nativemsg", "native")
    args = ["--mode", "persistent", *NATIVEMSG_ARGS]
    status, doc = run([*argv, *args, "--host-cpus", "0", "--", "h"])
    assert_error(validator, status, doc, 2, "bad command line")
    status, doc = run([*argv, *args, *common(tmp_path), "--", MISSING_IMPL, "origin"])
    assert_error(validator, status, doc, 1, MISSING_IMPL)


# ---- nativemsg: the browser driver -----------------------------------------------------------


def test_browser_driver_report(validator, tmp_path):
    argv = driver_argv("nativemsg", "browser")
    host = baseline("nativemsg")
    args = ["--mode", "persistent", *NATIVEMSG_ARGS, *common(tmp_path)]
    status, doc = run([*argv, *args, "--", *host.argv()])
    assert status == 0, doc
    assert_report(validator, doc, "nativemsg-browser", "process-cpu-clock")


def test_browser_driver_errors(validator, tmp_path):
    w = registry.workload("nativemsg")
    argv = w.driver("browser")  # an interpreted driver: a bad command line needs no browser
    args = ["--mode", "persistent", *NATIVEMSG_ARGS]
    status, doc = run([*argv, *args, "--host-stderr", "x", "--", "h"])
    assert_error(validator, status, doc, 2, "bad command line")
    argv = driver_argv("nativemsg", "browser")
    status, doc = run([*argv, *args, *common(tmp_path), "--", MISSING_IMPL, "origin"])
    assert_error(validator, status, doc, 1, MISSING_IMPL)


# ---- comm ------------------------------------------------------------------------------------


def test_comm_driver_report(validator, tmp_path):
    argv = driver_argv("comm")
    server = baseline("comm")
    port = free_port()
    args = [*COMM_ARGS, "--port", str(port), *common(tmp_path)]
    status, doc = run([*argv, *args, "--", *server.argv(port=port)])
    assert status == 0, doc
    assert_report(validator, doc, "comm", "process-cpu-clock")
    assert doc["impl"]["exit_status"] == 0
    assert set(doc["latency_us"]) == {"p50", "p90", "p99", "p999", "max", "min", "mean", "stdev"}


def test_comm_driver_errors(validator, tmp_path):
    argv = driver_argv("comm")
    status, doc = run([*argv, *COMM_ARGS, "--port", "7", "--host-cwd", "/", "--", "s"])
    assert_error(validator, status, doc, 2, "bad command line")
    args = [*COMM_ARGS, "--port", str(free_port()), *common(tmp_path)]
    status, doc = run([*argv, *args, "--", MISSING_IMPL])
    assert_error(validator, status, doc, 1, MISSING_IMPL)


# ---- redis -----------------------------------------------------------------------------------


def test_redisbench_driver_report(validator, tmp_path):
    argv = driver_argv("redis")
    if shutil.which("redis-benchmark") is None:
        pytest.skip("redis-benchmark is not installed (make setup)")
    server = baseline("redis")
    port = free_port()
    args = [*REDIS_ARGS, "--port", str(port), *common(tmp_path)]
    status, doc = run([*argv, *args, "--", *server.argv(port=port)])
    assert status == 0, doc
    assert_report(validator, doc, "redisbench", "process-cpu-clock")
    assert doc["impl"]["exit_status"] == 0
    assert doc["load_generator"]["cpu_clock"] == "wait4-rusage"
    assert doc["impl"]["cpu_us_per_op"] == pytest.approx(
        doc["impl"]["cpu_s"] * 1e6 / doc["requests"], rel=1e-6
    )


def test_redisbench_driver_errors(validator, tmp_path):
    argv = driver_argv("redis")
    status, doc = run([*argv, *REDIS_ARGS, "--port", "7", "--host-cpus", "1", "--", "s"])
    assert_error(validator, status, doc, 2, "bad command line")
    args = [*REDIS_ARGS, "--port", str(free_port()), *common(tmp_path)]
    status, doc = run([*argv, *args, "--", MISSING_IMPL])
    assert_error(validator, status, doc, 1, MISSING_IMPL)


# ---- echonet ---------------------------------------------------------------------------------


def echonet_programs() -> tuple[list[str], list[str]]:
    """The node and controller argv: the workload's baseline node when it is built (it has no
    controller), else the driver's own test node; the driver's own test controller."""
    w = registry.workload("echonet")
    fake = [sys.executable, str(ECHONET_TEST_PROGRAMS / "fake_node.py")]
    controller = [sys.executable, str(ECHONET_TEST_PROGRAMS / "fake_controller.py")]
    impl = w.impls.get(w.baseline)
    node = impl.argv() if impl is not None and impl.built else fake
    return node, controller


def echonet_hosts(hosts: topology.Loopback) -> list[str]:
    """The options the trial kind gives the driver: a loopback address each, port 3610."""
    node, ctl = hosts.host("node").addr, hosts.host("ctl").addr
    return ["--port", "3610", "--node-addrs", node, "--ctl-addr", ctl]


@pytest.mark.parametrize(
    ("mode", "generator_clock"),
    [("faithful", "process-cpu-clock"), ("own", "wait4-rusage")],
)
def test_echonet_driver_report(validator, tmp_path, mode, generator_clock):
    argv = driver_argv("echonet")
    node, controller = echonet_programs()
    args = ECHONET_ARGS if mode == "faithful" else ["--mode", "own", "--iterations", "50"]
    with topology.Loopback(["node", "ctl"], udp_ports=(3610,)) as hosts:
        options = [*args, *echonet_hosts(hosts), *common(tmp_path)]
        if mode == "own":
            options += ["--client-json", json.dumps(controller)]
        status, doc = run([*argv, *options, "--", *node])
    assert status == 0, doc
    assert_report(validator, doc, "echonet", "process-cpu-clock")
    assert doc["impl"]["exit_status"] == 0
    assert doc["load_generator"]["cpu_clock"] == generator_clock
    assert doc["requests"] == 600
    served = 12 * (55 if mode == "faithful" else 50)
    assert doc["impl"]["node"]["requests"] == served
    assert doc["impl"]["cpu_us_per_op"] == pytest.approx(
        doc["impl"]["cpu_s"] * 1e6 / served, rel=1e-3
    )
    if mode == "faithful":
        latency = {"p50", "p90", "p99", "p999", "max", "min", "mean", "stdev"}
        assert set(doc["latency_us"]) == latency
    else:
        assert doc["wall_s"] > 0 and doc["controller_report"]["iterations"] == 50


def test_echonet_driver_errors(validator, tmp_path):
    argv = driver_argv("echonet")
    status, doc = run([*argv, *ECHONET_ARGS, "--host-stderr", "x", "--", "n"])
    assert_error(validator, status, doc, 2, "bad command line")
    with topology.Loopback(["node", "ctl"], udp_ports=(3610,)) as hosts:
        args = [*ECHONET_ARGS, *echonet_hosts(hosts), *common(tmp_path)]
        status, doc = run([*argv, *args, "--", MISSING_IMPL])
    assert_error(validator, status, doc, 1, MISSING_IMPL)


# ---- capnp -----------------------------------------------------------------------------------

#: The capnp suite's small correct program (pycapnp), so these tests need no implementation.
CAPNP_PROGRAM = paths.ROOT / "workloads" / "capnp" / "conformance" / "selftest" / "impl.py"


def capnp_program(bug: str | None = None) -> list[str]:
    if not paths.VENV_PYTHON.exists():
        pytest.skip("no .venv (pycapnp): make setup")
    return [str(paths.VENV_PYTHON), str(CAPNP_PROGRAM), *(["--bug", bug] if bug else [])]


@pytest.mark.parametrize(("mode", "clock"), [("bytes", "self-reported"), ("pipe", "wait4-rusage")])
def test_capnp_driver_report(validator, tmp_path, mode, clock):
    argv = driver_argv("capnp")
    args = ["--case", "eval", "--mode", mode, "--iterations", "60", *common(tmp_path)]
    status, doc = run([*argv, *args, "--", *capnp_program()])
    assert status == 0, doc
    assert_report(validator, doc, "capnp", clock)
    assert (doc["iterations"], doc["warmup"]) == (60, 3)
    assert doc["us_per_iteration"] > 0 and doc["cpu_us_per_iteration"] > 0
    assert doc["mb_per_s"] > 0 and doc["program"]["checked"] == 63
    if mode == "pipe":
        assert doc["impl"]["served"] == 63 and doc["load_generator"]["kind"] == "client"
        # The server's whole-life CPU per request counts in the figure per iteration.
        assert doc["cpu_us_per_iteration"] > doc["program"]["cpu_s"] * 1e6 / 60


def test_capnp_driver_errors(validator, tmp_path):
    argv = driver_argv("capnp")
    bad = ["--case", "eval", "--mode", "object", "--compression", "packed", "--iterations", "5"]
    status, doc = run([*argv, *bad, "--", "x"])
    assert_error(validator, status, doc, 2, "bad command line")
    args = ["--case", "eval", "--mode", "pipe", "--iterations", "40", *common(tmp_path)]
    status, doc = run([*argv, *args, "--", MISSING_IMPL])
    assert_error(validator, status, doc, 1, MISSING_IMPL)
    # A server that answers wrongly: its client fails, and the error says which and why.
    status, doc = run([*argv, *args, "--", *capnp_program("div-zero-zero")])
    assert_error(validator, status, doc, 1, "the client exited with status 1")
    assert "expected" in doc["error"], doc
