"""A two-node Ray cluster on this one machine, to prove the cluster runner here
(`msgbench cluster up|down`, the tests; docs/hosts.md).

The head runs in this machine's own network namespace at HEAD_ADDR; the worker in a network
namespace of its own at WORKER_ADDR, joined to the head by one veth pair, so the two nodes talk
across a real network stack, as two machines would. Both are started with `ray start` from the
lab's virtual environment, and pinned (taskset, inherited by every process Ray starts) to
`ray_cpus`: off the implementation's CPU, so Ray's own processes cannot take its time; the run
records what they cost anyway (msgbench.raysite).

Nothing of it is tied to this process: it lives until `down()` (or `msgbench cluster down`),
so one cluster serves several runs. `up()` writes two hosts files beside its state:
`roles.toml` (driver on the head, implementation on the worker) and `sweep.toml` (both nodes
measuring complete rounds in turn).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

from . import paths, topology

NETNS = "mbray-worker"  # not of topology's mb-<pid>- scheme: it outlives the process that made it
VETH_HOST, VETH_PEER = "mbray0", "eth0"
SUBNET = "10.203.0"
HEAD_ADDR, WORKER_ADDR = f"{SUBNET}.1", f"{SUBNET}.2"
GCS_PORT = 6390
START_TIMEOUT_S = 120
STATE = paths.ROOT / "build" / "cluster"


class ClusterError(Exception):
    """The cluster could not be started (the message says which step and why)."""


def unavailable_reason() -> str | None:
    """None when this machine can run the local cluster; else why not (tests skip with it)."""
    why = topology.unavailable_reason()
    if why:
        return why
    if not (paths.VENV_PYTHON.parent / "ray").exists():
        return "Ray is not installed in .venv (make setup-ray installs the optional extra)"
    if shutil.which("taskset") is None:
        return "taskset (util-linux) is not installed"
    return None


def _sh(
    argv: list[str], what: str, timeout: float = 60, env: dict | None = None, stdin: str = ""
) -> str:
    try:
        done = subprocess.run(
            argv,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
        )
    except subprocess.TimeoutExpired:
        raise ClusterError(f"{what}: did not finish within {timeout:.0f} s") from None
    if done.returncode != 0:
        raise ClusterError(f"{what}: {(done.stderr or done.stdout).strip()[-800:]}")
    return done.stdout


def _ray_env() -> dict[str, str]:
    """Ray without what a benchmark machine does not want: usage reports, the dashboard's
    metrics exporter."""
    return {"RAY_USAGE_STATS_ENABLED": "0", "RAY_DISABLE_DOCKER_CPU_WARNING": "1"}


def _ray_start(prefix: list[str], cpus: list[int], *args: str) -> None:
    ray = str(paths.VENV_PYTHON.parent / "ray")
    argv = [*prefix, "taskset", "-c", ",".join(map(str, cpus)), ray, "start", *args]
    argv += ["--num-cpus", "2", "--object-store-memory", "100000000"]
    if "--head" in args:  # the dashboard: not on a benchmark machine
        argv.append("--include-dashboard=false")
    _sh(argv, f"ray start {args[0]}", timeout=START_TIMEOUT_S, env=_ray_env())


def up(ray_cpus: list[int]) -> dict:
    """Starts the head and the worker; returns (and writes) the cluster's description."""
    why = unavailable_reason()
    if why:
        raise ClusterError(why)
    down()  # a previous cluster's leftovers, if any
    _sh(["ip", "netns", "add", NETNS], "making the worker's namespace")
    _sh(
        ["ip", "-batch", "-"],
        "linking it to this namespace",
        stdin=f"link add {VETH_HOST} type veth peer name {VETH_PEER} netns {NETNS}\n"
        f"addr add {HEAD_ADDR}/24 dev {VETH_HOST}\nlink set {VETH_HOST} up\n",
    )
    _sh(
        ["ip", "-n", NETNS, "-batch", "-"],
        "addressing the worker",
        stdin=f"link set lo up\naddr add {WORKER_ADDR}/24 dev {VETH_PEER}\n"
        f"link set {VETH_PEER} up\n",
    )
    _ray_start([], ray_cpus, "--head", "--node-ip-address", HEAD_ADDR, "--port", str(GCS_PORT))
    address = f"{HEAD_ADDR}:{GCS_PORT}"
    _ray_start(
        ["ip", "netns", "exec", NETNS],
        ray_cpus,
        "--address",
        address,
        "--node-ip-address",
        WORKER_ADDR,
    )
    described = {
        "address": address,
        "head": HEAD_ADDR,
        "worker": WORKER_ADDR,
        "worker_netns": NETNS,
        "ray_cpus": ray_cpus,
    }
    _wait_for_nodes(address, 2)
    STATE.mkdir(parents=True, exist_ok=True)
    (STATE / "cluster.json").write_text(json.dumps(described, indent=2) + "\n")
    (STATE / "roles.toml").write_text(hosts_toml(address, "roles"))
    (STATE / "sweep.toml").write_text(hosts_toml(address, "sweep"))
    return described


def hosts_toml(address: str, shape: str) -> str:
    """A hosts file for this cluster: `roles` (driver on the head, implementation on the
    worker) or `sweep` (both nodes, in turn)."""
    head = f'[hosts.head]\nkind = "ray"\nnode = "{HEAD_ADDR}"\n'
    worker = f'[hosts.worker]\nkind = "ray"\nnode = "{WORKER_ADDR}"\n'
    ray = f'[ray]\naddress = "{address}"\n'
    if shape == "roles":
        tail = '[roles]\ndriver = "head"\nimpl = "worker"\n'
    else:
        tail = '[sweep]\nnodes = ["head", "worker"]\nconcurrent = false\n'
    return f"# made by msgbench cluster up (msgbench.raycluster)\n{head}\n{worker}\n{ray}\n{tail}"


def _wait_for_nodes(address: str, count: int) -> None:
    """Until `count` nodes are alive (the worker registers a moment after its start)."""
    probe = (
        "import ray, sys\n"
        f"ray.init(address={address!r}, log_to_driver=False)\n"
        "print(sum(1 for n in ray.nodes() if n['Alive']))\n"
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    alive = 0
    while time.monotonic() < deadline:
        out = _sh([str(paths.VENV_PYTHON), "-c", probe], "asking the cluster for its nodes",
                  env=_ray_env())  # fmt: skip
        alive = int(out.strip().splitlines()[-1])
        if alive >= count:
            return
        time.sleep(1)
    raise ClusterError(f"{alive} of {count} nodes alive after {START_TIMEOUT_S} s")


def down() -> None:
    """Stops every Ray process of this machine (both nodes) and deletes the namespace."""
    ray = paths.VENV_PYTHON.parent / "ray"
    if ray.exists():
        subprocess.run([str(ray), "stop", "--force"], capture_output=True, timeout=120,
                       env={**os.environ, **_ray_env()})  # fmt: skip
    subprocess.run(["ip", "link", "del", VETH_HOST], capture_output=True)
    subprocess.run(["ip", "netns", "del", NETNS], capture_output=True)
    (STATE / "cluster.json").unlink(missing_ok=True)
