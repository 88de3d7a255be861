"""Where a scenario's trials run: named hosts, set up by the runner once per scenario and torn
down after its last trial (docs/decisions.md, "Hosts").

A scenario declares them in workload.toml:

    hosts = { topology = "netns", impls = 8, loss_percent = 5.0 }

- `topology`: `loopback` (one distinct 127.x.y.z per host, no set-up) or `netns` (one network
  namespace per host joined by a bridge: msgbench.topology);
- `impls`: how many implementation hosts (default 1), named `impl` (one) or `impl0`, `impl1`, …;
  the driver's host is always `driver`;
- `loss_percent` (netns only): random drops, both directions, on every implementation host;
- `rate` (netns only): a `tc tbf` egress rate on every implementation host, e.g. "10mbit";
- `udp_ports` (loopback): ports that must be free on each chosen address (default: none).

A kind reads `ctx.hosts` (a TrialHosts): `driver` and `impls` (msgbench.topology.Host: name,
netns, addr, `wrap(argv)`). Today hosts are namespaces or addresses of one machine; the runner
interface is the same for machines of a cluster later (a host list, not a lab change).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from . import topology
from .topology import Host

TOPOLOGIES = ("loopback", "netns")
LOOPBACK = "127.0.0.1"  # where a server listens unless its trial's hosts say otherwise


class HostsError(ValueError):
    """A `hosts` table of a scenario is invalid (the message says which field)."""


@dataclass(frozen=True)
class HostsSpec:
    topology: str
    impls: int = 1
    loss_percent: float = 0.0
    rate: str = ""
    udp_ports: tuple[int, ...] = field(default_factory=tuple)

    def impl_names(self) -> list[str]:
        return ["impl"] if self.impls == 1 else [f"impl{i}" for i in range(self.impls)]

    def names(self) -> list[str]:
        return ["driver", *self.impl_names()]

    def unavailable_reason(self) -> str | None:
        """None when this machine can make these hosts; else why the scenario is skipped."""
        if self.topology == "netns":
            why = _netns_reason()
            if why is None and self.loss_percent > 0:
                why = topology.loss_unavailable_reason()
            return why
        return None

    @contextmanager
    def open(self) -> Iterator[TrialHosts]:
        if self.topology == "netns":
            made = topology.Topology(
                self.names(), self.loss_percent, self.impl_names(), self.rate or None
            )
        else:
            made = topology.Loopback(self.names(), self.udp_ports)
        with made as topo:
            yield TrialHosts(
                self,
                topo.host("driver"),
                [topo.host(n) for n in self.impl_names()],
                topo.describe(),
            )


@dataclass(frozen=True)
class TrialHosts:
    """The hosts of one scenario's trials, as a trial kind sees them."""

    spec: HostsSpec
    driver: Host
    impls: list[Host]
    description: dict

    @property
    def netns(self) -> bool:
        return self.spec.topology == "netns"


@functools.cache
def _netns_reason() -> str | None:
    return topology.unavailable_reason()


def parse(table: dict | None, where: str) -> HostsSpec | None:
    """A scenario's `hosts` table, checked; None when the scenario has none."""
    if table is None:
        return None
    if not isinstance(table, dict):
        raise HostsError(f"{where}: hosts must be a table")
    unknown = set(table) - {"topology", "impls", "loss_percent", "rate", "udp_ports"}
    if unknown:
        raise HostsError(f"{where}: hosts: unknown field(s) {', '.join(sorted(unknown))}")
    kind = table.get("topology")
    if kind not in TOPOLOGIES:
        raise HostsError(f"{where}: hosts.topology must be one of {', '.join(TOPOLOGIES)}")
    impls = table.get("impls", 1)
    if not isinstance(impls, int) or not 1 <= impls <= 200:
        raise HostsError(f"{where}: hosts.impls must be an integer within 1-200")
    loss = table.get("loss_percent", 0.0)
    if not isinstance(loss, int | float) or not 0 <= loss <= 100:
        raise HostsError(f"{where}: hosts.loss_percent must be a number within 0-100")
    rate = table.get("rate", "")
    if kind == "loopback" and (loss or rate):
        raise HostsError(f'{where}: loss and rate need topology = "netns" (loopback has no qdisc)')
    ports = table.get("udp_ports", [])
    if not isinstance(ports, list) or not all(isinstance(p, int) and 0 < p < 65536 for p in ports):
        raise HostsError(f"{where}: hosts.udp_ports must be a list of ports")
    return HostsSpec(kind, impls, float(loss), str(rate), tuple(ports))
