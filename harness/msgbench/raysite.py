"""Hosts on a Ray cluster (docs/hosts.md): a role's processes placed on a named node with hard
node affinity, the driver run there by a Ray task, the implementation's host agent kept there
by a Ray actor.

Ray is an optional extra (`pip install -e .[ray]`, `make setup-ray`): only a run whose hosts
file names `ray` hosts imports this module. Ray does the placing, starting, stopping and the
clean-up of what it placed (a killed actor takes its agent, whose closing stdin takes the
implementation); what runs on a node is the same program a local run starts, from the same
path: every node holds the repository at the runner's path, built there (docs/hosts.md says how).

Ray's own processes on a node (raylet, its workers, the GCS on the head) are measured like any
other neighbour of the implementation: their CPU time over the run, and the CPUs they may run
on, recorded per node (`ray_processes`), and the implementation's run delay in each trial.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import tempfile
from contextlib import ExitStack
from pathlib import Path

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from . import machine, paths
from .hostsfile import HostsFile
from .sites import (
    Ran,
    Site,
    SiteError,
    agent_argv,
    agent_free_port,
    file_hashes,
    spawn_agent,
    stop_agent,
)

CONNECT_TIMEOUT_S = 60
TASK_GRACE_S = 30  # beyond a command's own timeout: Ray's scheduling and the reply


# ------------------------------------------------------------------------- what runs on a node


@ray.remote(num_cpus=0)
def _run(argv: list[str], timeout_s: float, env: dict[str, str], runner_host: str) -> dict:
    """A command to its end, on the node this task was placed on. The implementation's log
    (--impl-stderr) is written there; on another machine than the runner's, its tail comes back
    with the outputs."""
    log = argv[argv.index("--impl-stderr") + 1] if "--impl-stderr" in argv else None
    if log:
        Path(log).parent.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout_s, env={**os.environ, **env}
        )
    except subprocess.TimeoutExpired:
        return {"timeout": True}
    back = None
    if log and socket.gethostname() != runner_host:
        with contextlib.suppress(OSError):
            back = (log, Path(log).read_bytes()[-65536:].decode(errors="replace"))
    return {
        "returncode": done.returncode,
        "stdout": done.stdout,
        "stderr": done.stderr,
        "log": back,
    }


@ray.remote(num_cpus=0)
def _hashes(files: list[str]) -> dict:
    return file_hashes(files)


@ray.remote(num_cpus=0)
def _describe() -> dict:
    """The node's fingerprint and where msgbench is on it."""
    return {
        "machine": machine.fingerprint(),
        "root": str(paths.ROOT),
        "ray_processes": ray_processes(),
    }


@ray.remote(num_cpus=0)
class _Agent:
    """Keeps the node's host agent alive; killing the actor ends the agent (its stdin closes)."""

    def __init__(self, addr: str, avoid_cpus: tuple[int, ...], token: str):
        self.log_dir = Path(tempfile.mkdtemp(prefix="msgbench-agent-"))
        self.proc, self.address = spawn_agent(
            agent_argv(addr, self.log_dir, avoid_cpus), token, addr
        )

    def where(self) -> str:
        return self.address

    def free_port(self, addr: str) -> int:
        return agent_free_port(self.proc, addr, addr)

    def logs(self) -> dict[str, str]:
        """The implementations' logs it kept (their tails), by file name."""
        out = {}
        for f in sorted(self.log_dir.iterdir()):
            with contextlib.suppress(OSError):
                out[f.name] = f.read_bytes()[-65536:].decode(errors="replace")
        return out

    def stop(self) -> None:
        stop_agent(self.proc)


def ray_processes() -> dict:
    """Ray's own processes on this node: their CPU seconds so far and the CPUs each may use.
    Only those in this task's network namespace: two nodes of one machine (msgbench.raycluster)
    see each other's processes, but each node has a namespace of its own."""
    tick = os.sysconf("SC_CLK_TCK")
    cpu_s, allowed = 0.0, set()
    count = 0
    here = os.readlink("/proc/self/ns/net")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/ns/net") != here:
                continue
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            if not any(m in cmd for m in (b"raylet", b"gcs_server", b"ray::", b"ray/")):
                continue
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu_s += (int(fields[11]) + int(fields[12])) / tick  # utime + stime
            allowed |= os.sched_getaffinity(int(pid))
            count += 1
        except (OSError, ValueError, IndexError):
            continue
    return {"count": count, "cpu_s": round(cpu_s, 2), "allowed_cpus": sorted(allowed)}


# ------------------------------------------------------------------------------- the runner side


class RaySite(Site):
    kind = "ray"

    def __init__(self, name: str, node: dict, cpus: tuple[int, ...], token: str):
        super().__init__(name, node["NodeManagerAddress"], cpus, token)
        self.node_id = node["NodeID"]
        self.strategy = NodeAffinitySchedulingStrategy(node_id=self.node_id, soft=False)
        self._actor = None
        self._log_dir: Path | None = None
        self.facts = ray.get(_describe.options(scheduling_strategy=self.strategy).remote())
        self.began = self.facts["ray_processes"]  # until start_costs(): as the node was found
        if self.facts["root"] != str(paths.ROOT):
            raise SiteError(
                f"host {name}: msgbench is at {self.facts['root']} on node {self.addr}, at "
                f"{paths.ROOT} here; every node holds it at the same path (docs/hosts.md)"
            )

    def run(self, argv: list[str], timeout_s: float, env: dict[str, str]) -> Ran:
        ref = _run.options(scheduling_strategy=self.strategy).remote(
            argv, timeout_s, env, socket.gethostname()
        )
        try:
            done = ray.get(ref, timeout=timeout_s + TASK_GRACE_S)
        except ray.exceptions.GetTimeoutError:
            ray.cancel(ref, force=True)
            raise subprocess.TimeoutExpired(argv, timeout_s) from None
        except ray.exceptions.RayError as e:  # the task or its node failed: the trial fails
            raise OSError(f"the Ray task on node {self.addr} failed: {e}") from None
        if done.get("timeout"):
            raise subprocess.TimeoutExpired(argv, timeout_s)
        if done["log"]:  # the implementation's output, from another machine
            path, text = done["log"]
            with open(path, "a") as f:
                f.write(text)
        return Ran(done["returncode"], done["stdout"], done["stderr"])

    def _start_agent(self, log_dir: Path, avoid_cpus: tuple[int, ...]) -> str:
        self._log_dir = log_dir
        self._actor = _Agent.options(scheduling_strategy=self.strategy).remote(
            self.addr, tuple(avoid_cpus), self.token
        )
        try:
            return ray.get(self._actor.where.remote(), timeout=CONNECT_TIMEOUT_S)
        except ray.exceptions.RayError as e:
            raise SiteError(f"host {self.name}: the host agent did not start: {e}") from None

    def free_port(self) -> int:
        if self._actor is None:
            raise SiteError(f"host {self.name}: its agent is not started")
        try:
            return ray.get(self._actor.free_port.remote(self.addr), timeout=CONNECT_TIMEOUT_S)
        except ray.exceptions.RayError as e:
            raise SiteError(f"host {self.name}: {e}") from None

    def hashes(self, files: list[str]) -> dict[str, str | None]:
        return ray.get(_hashes.options(scheduling_strategy=self.strategy).remote(files))

    def build(self, argv: list[str], timeout_s: float) -> Ran:
        """`msgbench build ...` on this node, with its own toolchains and profiles.toml."""
        return self.run(argv, timeout_s, {})

    def describe(self) -> dict:
        facts = self.facts
        return {
            **super().describe(),
            "node_id": self.node_id,
            "machine": machine.fingerprint_id(facts["machine"]),
            "fingerprint": facts["machine"],
        }

    def start_costs(self) -> None:
        """Ray's processes on this node as the trials begin (after the node's build)."""
        self.began = self._ray_processes()

    def cluster_cost(self) -> dict:
        """Ray's processes on this node now, beside what they were when the trials began."""
        now, began = self._ray_processes(), self.began
        return {
            "count": now["count"],
            "cpu_s_during_run": round(now["cpu_s"] - began["cpu_s"], 2),
            "allowed_cpus": now["allowed_cpus"],
        }

    def _ray_processes(self) -> dict:
        facts = ray.get(_describe.options(scheduling_strategy=self.strategy).remote())
        return facts["ray_processes"]

    def close(self) -> None:
        if self._actor is None:
            return
        with contextlib.suppress(ray.exceptions.RayError):
            logs = ray.get(self._actor.logs.remote(), timeout=CONNECT_TIMEOUT_S)
            if self._log_dir is not None:  # the implementations' output, beside the run's
                for name, text in logs.items():
                    (self._log_dir / name).write_text(text)
            ray.get(self._actor.stop.remote(), timeout=CONNECT_TIMEOUT_S)
        with contextlib.suppress(ray.exceptions.RayError):
            ray.kill(self._actor)
        self._actor = None


def connect(address: str) -> None:
    """Joins the cluster (once per process)."""
    if ray.is_initialized():
        return
    try:
        ray.init(address=address, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise SiteError(f"cannot join the Ray cluster at {address}: {e}") from None


def open_nodes(hosts_file: HostsFile, token: str, stack: ExitStack) -> dict[str, RaySite]:
    """A RaySite per host of the file, each on its named, live node."""
    connect(hosts_file.ray_address)
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    out: dict[str, RaySite] = {}
    for name, h in hosts_file.hosts.items():
        match = [n for n in nodes if h.node in (n["NodeManagerAddress"], n["NodeID"])]
        if len(match) != 1:
            live = ", ".join(n["NodeManagerAddress"] for n in nodes) or "none"
            raise SiteError(
                f"host {name}: node {h.node!r} is not one live node of the cluster "
                f"(live nodes: {live})"
            )
        out[name] = RaySite(name, match[0], h.cpus, token)
    return out
