"""The hosts of a hosts file, opened for a run: where a role's processes start (docs/hosts.md).

A `Site` is one host, made ready: it runs a command there and returns its output (the driver's
role), starts the host agent there once and gives its address (the implementation's role, when
it is on another host than the driver: msgbench.hostagent), and describes itself for the run's
record. Kinds:

- `LocalSite`: this machine's process tree, as a run without a hosts file;
- `NetnsSite`: a network namespace of this machine (msgbench.topology), reached at its own
  address across a bridge;
- `RaySite` (msgbench.raysite): a node of a Ray cluster.

`open_sites(hosts_file)` makes every host of the file and tears all of them down at the end,
whatever happened (the namespaces deleted, the agents stopped, the Ray actors killed).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import selectors
import subprocess
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from . import hostagent, machine, paths, topology
from .hostsfile import HostsFile

AGENT_START_TIMEOUT_S = 30


class SiteError(Exception):
    """A host could not be made ready (the message says which and why)."""


@dataclass
class Ran:
    """What a command run on a site left: its exit status and its two outputs."""

    returncode: int
    stdout: str
    stderr: str


class Site:
    """One host of the run. Subclasses set `kind` and implement `run`, `_start_agent`."""

    kind = ""

    def __init__(self, name: str, addr: str, cpus: tuple[int, ...], token: str):
        self.name = name
        self.addr = addr  # where the other hosts reach it (its servers listen there)
        self.cpus = cpus  # the CPUs its role is pinned to; () = the run's placement
        self.token = token
        self._agent: str | None = None
        self._proc: subprocess.Popen | None = None  # the agent, where this process started it

    def run(self, argv: list[str], timeout_s: float, env: dict[str, str]) -> Ran:
        """Runs argv there to its end; raises subprocess.TimeoutExpired past timeout_s."""
        raise NotImplementedError

    def agent(self, log_dir: Path, avoid_cpus: tuple[int, ...]) -> str:
        """The address (ADDR:PORT) of this host's agent, started on first use, pinned off
        `avoid_cpus` (the implementation's) where the host has other CPUs."""
        if self._agent is None:
            self._agent = self._start_agent(log_dir, avoid_cpus)
        return self._agent

    def _start_agent(self, log_dir: Path, avoid_cpus: tuple[int, ...]) -> str:
        raise NotImplementedError

    def free_port(self) -> int:
        """A TCP port free on this host's address (asked of its agent, over its control
        channel: the runner may not reach the host's address itself)."""
        if self._proc is None:
            raise SiteError(f"host {self.name}: its agent is not started")
        return agent_free_port(self._proc, self.addr, self.name)

    def describe(self) -> dict:
        return {"kind": self.kind, "addr": self.addr, "cpus": list(self.cpus) or None}

    def hashes(self, files: list[str]) -> dict[str, str | None]:
        """sha256 of each file as this host sees it (None: missing there)."""
        return file_hashes(files)

    def start_costs(self) -> None:
        """From now on, what the cluster's own processes cost here is the run's (Ray hosts)."""

    def cluster_cost(self) -> dict | None:
        """What the cluster's own processes cost here since start_costs(); None: no cluster."""
        return None

    def build(self, argv: list[str], timeout_s: float) -> Ran:
        """Builds what a run needs on this host (`msgbench build ...`); here: nothing to do,
        the runner's own build step has built it."""
        return Ran(0, "", "")

    def close(self) -> None:
        pass


def file_hashes(files: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for f in files:
        try:
            out[f] = hashlib.sha256(Path(f).read_bytes()).hexdigest()
        except OSError:
            out[f] = None
    return out


class LocalSite(Site):
    """This machine's own process tree: commands run as they are; an agent, where the roles are
    two local hosts, on 127.0.0.1 (the agent's path without a network between the roles)."""

    kind = "local"

    def wrap(self, argv: list[str]) -> list[str]:
        return list(argv)

    def run(self, argv: list[str], timeout_s: float, env: dict[str, str]) -> Ran:
        done = subprocess.run(
            self.wrap(argv),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env={**os.environ, **env},
        )
        return Ran(done.returncode, done.stdout, done.stderr)

    def _start_agent(self, log_dir: Path, avoid_cpus: tuple[int, ...]) -> str:
        self._proc, address = spawn_agent(
            self.wrap(agent_argv(self.addr, log_dir, avoid_cpus)), self.token, self.name
        )
        return address

    def describe(self) -> dict:
        return {**super().describe(), "machine": machine.fingerprint_id(machine.fingerprint())}

    def close(self) -> None:
        stop_agent(self._proc)
        self._proc = None


class NetnsSite(LocalSite):
    """A namespace of this machine: commands (the agent among them) run through `ip netns exec`,
    which execs them, so the process that starts is the program itself."""

    kind = "netns"

    def __init__(self, host: topology.Host, cpus: tuple[int, ...], token: str):
        super().__init__(host.name, host.addr, cpus, token)
        self.host = host

    def wrap(self, argv: list[str]) -> list[str]:
        return self.host.wrap(argv)

    def describe(self) -> dict:
        return {**super().describe(), "netns": self.host.netns}


def agent_argv(addr: str, log_dir: Path, avoid_cpus: tuple[int, ...]) -> list[str]:
    """The agent's command line: this interpreter's environment, pinned off `avoid_cpus`."""
    argv = [str(paths.VENV_PYTHON), "-m", "msgbench.hostagent", "--listen", addr]
    argv += ["--log-dir", str(log_dir)]
    others = sorted(set(machine.usable_cpus()) - set(avoid_cpus))
    if others and avoid_cpus:
        argv += ["--cpus", ",".join(map(str, others))]
    return argv


def spawn_agent(argv: list[str], token: str, name: str) -> tuple[subprocess.Popen, str]:
    """Starts an agent (argv from agent_argv, perhaps wrapped) with the run's token; returns it
    and the address it listens on. Its stdin is the control channel: closing it ends the agent."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, hostagent.TOKEN_ENV: token},
    )
    return proc, read_agent_address(proc, name)


def read_agent_address(proc: subprocess.Popen, name: str) -> str:
    """The agent's first line says where it listens; anything else is a failure to start."""
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        ready = sel.select(AGENT_START_TIMEOUT_S)
    line = proc.stdout.readline() if ready else b""
    try:
        said = json.loads(line)
        return str(said["address"])
    except (ValueError, KeyError, TypeError):
        stop_agent(proc)
        raise SiteError(
            f"host {name}: the host agent did not start (exit status {proc.poll()}, "
            f"said {line[:200]!r})"
        ) from None


_control_lock = threading.Lock()


def agent_free_port(proc: subprocess.Popen, addr: str, name: str) -> int:
    """Asks an agent this process started for a free port, on its control channel."""
    with _control_lock:
        try:
            proc.stdin.write(json.dumps({"op": "free_port", "addr": addr}).encode() + b"\n")
            proc.stdin.flush()
            reply = json.loads(proc.stdout.readline() or b"{}")
        except (OSError, ValueError) as e:
            raise SiteError(f"host {name}: its agent's control channel: {e}") from None
    if not reply.get("ok"):
        raise SiteError(f"host {name}: {reply.get('error', 'the agent has exited')}")
    return int(reply["port"])


def stop_agent(proc: subprocess.Popen | None) -> None:
    if proc is None:
        return
    try:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(10)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()


@dataclass
class Sites:
    """The opened hosts of a run, by name, and the file they come from."""

    file: HostsFile
    by_name: dict[str, Site]
    token: str

    def role(self, role: str) -> Site:
        return self.by_name[self.file.roles[role]]

    def on(self, node: str) -> Sites:
        """A sweep's node as a whole trial's host: driver and implementation both on it."""
        whole = replace(self.file, roles={"driver": node, "impl": node}, sweep=())
        return Sites(whole, self.by_name, self.token)

    def describe(self) -> dict:
        return {name: site.describe() for name, site in self.by_name.items()}

    def binaries(self, files: list[str]) -> dict:
        """Whether every host runs the same binaries: {"files": {file: {host: sha256}},
        "identical": bool} (docs/hosts.md)."""
        per_host = {name: site.hashes(files) for name, site in self.by_name.items()}
        table = {f: {name: per_host[name][f] for name in per_host} for f in files}
        same = all(len(set(h.values())) == 1 and None not in h.values() for h in table.values())
        return {"files": table, "identical": same}

    def start_costs(self) -> None:
        """From now on, what the cluster's processes cost is the run's (costs())."""
        for site in self.by_name.values():
            site.start_costs()

    def costs(self) -> dict:
        """What the cluster's own processes cost on each host over the run (Ray's: hosts.md)."""
        measured = {name: site.cluster_cost() for name, site in self.by_name.items()}
        return {name: cost for name, cost in measured.items() if cost is not None}


@contextmanager
def open_sites(hosts_file: HostsFile) -> Iterator[Sites]:
    """Makes every host of the file ready; always tears them down."""
    token = secrets.token_hex(16)
    with ExitStack() as stack:
        by_name: dict[str, Site] = {}
        kind = hosts_file.kind
        if kind == "netns":
            why = topology.unavailable_reason()
            if why:
                raise SiteError(f"netns hosts: {why}")
            names = list(hosts_file.hosts)
            try:
                # Two hosts: one veth pair, the local cluster's wiring (msgbench.raycluster),
                # so a netns run and a cluster run cross the same network path.
                topo = stack.enter_context(topology.Topology(names, p2p=len(names) == 2))
            except (topology.TopologyError, OSError) as e:
                raise SiteError(f"cannot make the netns hosts: {e}") from None
            for name, h in hosts_file.hosts.items():
                by_name[name] = NetnsSite(topo.host(name), h.cpus, token)
        elif kind == "ray":
            from . import raysite  # Ray is an optional extra: imported only when asked for

            by_name.update(raysite.open_nodes(hosts_file, token, stack))
        else:
            for name, h in hosts_file.hosts.items():
                by_name[name] = LocalSite(name, "127.0.0.1", h.cpus, token)
        for site in by_name.values():
            stack.callback(site.close)
        yield Sites(hosts_file, by_name, token)
