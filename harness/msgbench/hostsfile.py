"""hosts.toml: which host each role of a trial runs on (docs/hosts.md).

Without a hosts file nothing changes: every trial runs in this machine's process tree, the
driver and the implementation pinned to CPUs by `--placement` (the `local` kind). A hosts file
names hosts and gives the trial's roles to them:

    [hosts.a]
    kind = "netns"            # local | netns | ray
    [hosts.b]
    kind = "netns"
    cpus = [1]                # optional: the CPUs of that host its role is pinned to

    [roles]
    driver = "a"              # the load generator (and whatever runs on its side)
    impl = "b"                # the implementation

    # or, instead of [roles]: each node measures complete rounds on its own (docs/hosts.md)
    [sweep]
    nodes = ["a", "b"]
    concurrent = false        # true: the nodes measure at the same time (separate machines)

    [ray]
    address = "auto"          # what ray.init() is given: "auto", or "HEAD_IP:PORT"

Kinds:
- `local`: this machine's process tree (the default); the placement's CPUs.
- `netns`: a network namespace of this machine with an address of its own, joined to the other
  namespace hosts by a bridge (msgbench.topology): a real network stack between the roles.
- `ray`: a node of a Ray cluster, named by `node` (its IP address as Ray reports it, or its node
  id); the roles' processes are placed there with hard node affinity.

The hosts of one file are all of one kind, or `local` and nothing else: roles on a namespace and
on a cluster node cannot reach each other.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

KINDS = ("local", "netns", "ray")
ROLES = ("driver", "impl")


class HostsFileError(ValueError):
    """The hosts file is invalid; the message names the file and the field."""


@dataclass(frozen=True)
class HostDef:
    name: str
    kind: str
    node: str = ""  # ray: the node's IP address or node id
    cpus: tuple[int, ...] = ()  # the CPUs its role is pinned to there; () = the placement's


@dataclass(frozen=True)
class HostsFile:
    path: str
    hosts: dict[str, HostDef]
    roles: dict[str, str] = field(default_factory=dict)  # role -> host name
    sweep: tuple[str, ...] = ()  # hosts that each measure complete rounds
    concurrent: bool = False
    ray_address: str = "auto"

    @property
    def kind(self) -> str:
        """The kind of its hosts (`local` when every host is local)."""
        kinds = {h.kind for h in self.hosts.values()} - {"local"}
        return kinds.pop() if kinds else "local"

    @property
    def split(self) -> bool:
        """Whether the driver and the implementation run on different hosts."""
        return bool(self.roles) and self.roles["driver"] != self.roles["impl"]

    def as_json(self) -> dict:
        """What a run records of it."""
        return {
            "path": self.path,
            "kind": self.kind,
            "hosts": {
                n: {"kind": h.kind, "node": h.node or None, "cpus": list(h.cpus) or None}
                for n, h in self.hosts.items()
            },
            "roles": self.roles or None,
            "sweep": {"nodes": list(self.sweep), "concurrent": self.concurrent}
            if self.sweep
            else None,
            "ray_address": self.ray_address if self.kind == "ray" else None,
        }


def load(path: Path) -> HostsFile:
    """Reads and checks a hosts file."""
    try:
        data = tomllib.loads(path.read_text())
    except OSError as e:
        raise HostsFileError(f"{path}: cannot read it: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise HostsFileError(f"{path}: not valid TOML: {e}") from None
    return parse(data, str(path))


def parse(data: dict, where: str) -> HostsFile:
    unknown = set(data) - {"hosts", "roles", "sweep", "ray"}
    if unknown:
        raise HostsFileError(f"{where}: unknown table(s) {', '.join(sorted(unknown))}")
    hosts_table = data.get("hosts")
    if not isinstance(hosts_table, dict) or not hosts_table:
        raise HostsFileError(f"{where}: [hosts.NAME] tables are missing")
    hosts = {name: _host(name, table, where) for name, table in hosts_table.items()}
    kinds = {h.kind for h in hosts.values()}
    if len(kinds - {"local"}) > 1 or ("local" in kinds and len(kinds) > 1):
        raise HostsFileError(
            f"{where}: hosts of kinds {', '.join(sorted(kinds))} cannot reach each other; "
            "use one kind per file"
        )

    roles = data.get("roles", {})
    sweep = data.get("sweep")
    if not isinstance(roles, dict):
        raise HostsFileError(f"{where}: [roles] must be a table")
    if roles and sweep is not None:
        raise HostsFileError(f"{where}: [roles] and [sweep] exclude each other")
    if not roles and sweep is None:
        raise HostsFileError(f"{where}: give [roles] (driver, impl) or [sweep] (nodes)")
    if roles:
        if set(roles) != set(ROLES):
            raise HostsFileError(f"{where}: [roles] must name exactly {', '.join(ROLES)}")
        for role, host in roles.items():
            if host not in hosts:
                raise HostsFileError(f"{where}: roles.{role} = {host!r} is not a [hosts] name")

    nodes: tuple[str, ...] = ()
    concurrent = False
    if sweep is not None:
        if not isinstance(sweep, dict) or set(sweep) - {"nodes", "concurrent"}:
            raise HostsFileError(f"{where}: [sweep] takes nodes and concurrent")
        raw = sweep.get("nodes")
        if not (isinstance(raw, list) and len(raw) >= 2 and len(set(raw)) == len(raw)):
            raise HostsFileError(f"{where}: sweep.nodes must list two or more distinct hosts")
        for n in raw:
            if n not in hosts:
                raise HostsFileError(f"{where}: sweep.nodes: {n!r} is not a [hosts] name")
        nodes = tuple(raw)
        concurrent = sweep.get("concurrent", False)
        if not isinstance(concurrent, bool):
            raise HostsFileError(f"{where}: sweep.concurrent must be true or false")

    ray = data.get("ray", {})
    if not isinstance(ray, dict) or set(ray) - {"address"}:
        raise HostsFileError(f"{where}: [ray] takes address")
    address = ray.get("address", "auto")
    if not isinstance(address, str) or not address:
        raise HostsFileError(f"{where}: ray.address must be a string")
    return HostsFile(where, hosts, dict(roles), nodes, concurrent, address)


def _host(name: str, table: object, where: str) -> HostDef:
    at = f"{where}: hosts.{name}"
    if not isinstance(table, dict):
        raise HostsFileError(f"{at} must be a table")
    unknown = set(table) - {"kind", "node", "cpus"}
    if unknown:
        raise HostsFileError(f"{at}: unknown field(s) {', '.join(sorted(unknown))}")
    kind = table.get("kind")
    if kind not in KINDS:
        raise HostsFileError(f"{at}.kind must be one of {', '.join(KINDS)}")
    node = table.get("node", "")
    if kind == "ray" and not (isinstance(node, str) and node):
        raise HostsFileError(f"{at}.node must name the Ray node (its IP address or node id)")
    if kind != "ray" and node:
        raise HostsFileError(f'{at}.node is for kind = "ray" only')
    cpus = table.get("cpus", [])
    if not (isinstance(cpus, list) and all(isinstance(c, int) and c >= 0 for c in cpus)):
        raise HostsFileError(f"{at}.cpus must be a list of CPU numbers")
    return HostDef(name, kind, node, tuple(cpus))
