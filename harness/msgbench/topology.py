"""Named hosts on one machine: each host a network namespace with an address of its own, all
joined by veth pairs to a bridge, so that traffic between them crosses a real network stack
(ARP, multicast, a qdisc, nftables) instead of the loopback shortcut.

Any workload can use it; the echonet trial kind and conformance suite do (ECHONET Lite needs UDP
port 3610 and the multicast group 224.0.23.0 on every host, so each node needs an address of its
own, and discovery needs multicast between them). The robustness and multi-machine work builds
its faults and hosts on the same interface: a host has a name, a namespace and an address; a
process runs on a host through `Host.wrap(argv)`.

Layout of one topology (`seq` numbers the topologies of this process):

    mb-<pid>-<seq>-sw        the switch: bridge br0 (multicast snooping off, so every port
                             sees every group without an IGMP querier), one port p<i> per host
    mb-<pid>-<seq>-<i>       host i: eth0 (the veth peer of p<i>) with 10.201.0.<i+2>/24,
                             lo up, the multicast route 224.0.0.0/4 dev eth0

Namespaces are separate network stacks, so every topology can use the same addresses. Faults:
`loss_percent` drops that share of UDP datagrams at random, in both directions, on the hosts
named `lossy` (nftables `numgen random`; this kernel has no netem), and `rate` limits their
egress with `tc tbf`. `loss_protocols=("udp", "tcp")` drops TCP segments too (the soak's
faults): those only on the host's link (eth0), so that its own loopback stays clean; UDP's rule
is unchanged (every interface), as echonet's scenarios were measured with it.

Nothing is left behind: `__exit__` deletes every namespace (a veth dies with its namespace);
SIGTERM during a topology's life raises KeyboardInterrupt so the `with` block unwinds (and
a run keeps what it measured, as after Ctrl-C); and every new
topology first deletes namespaces of this naming scheme whose process no longer exists (a
SIGKILLed run), so a crash costs at most one topology until the next run.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import threading
from dataclasses import dataclass

PREFIX = "mb"
SUBNET = "10.201.0"  # host i gets SUBNET.(i+2)/24; namespaces make every topology's net private
IFACE = "eth0"
MCAST_ROUTE = "224.0.0.0/4"
IP_TIMEOUT_S = 20
_NAME = re.compile(rf"^{PREFIX}-(\d+)-(\d+)-(sw|\d+)$")
_seq = itertools.count()
_live: set[Topology] = set()
_lock = threading.Lock()


class TopologyError(Exception):
    """A topology could not be made (the message says which command failed and why)."""


def unavailable_reason() -> str | None:
    """None when this process can make network namespaces; else why not (tests and scenarios
    that need them are skipped with this reason, never run on loopback instead)."""
    if os.geteuid() != 0:
        return "network namespaces need root (run as root, as the lab's CI does)"
    if shutil.which("ip") is None:
        return "`ip` (iproute2) is not installed: apt-get install iproute2"
    probe = f"{PREFIX}-{os.getpid()}-probe"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def loss_unavailable_reason() -> str | None:
    """None when random drops can be installed (nftables); else why not."""
    if shutil.which("nft") is None:
        return "`nft` (nftables) is not installed: apt-get install nftables"
    return None


def _ip(args: list[str], stdin: str | None = None) -> None:
    try:
        done = subprocess.run(
            ["ip", *args], input=stdin, capture_output=True, text=True, timeout=IP_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise TopologyError(f"`ip {' '.join(args)}` did not finish in {IP_TIMEOUT_S} s") from None
    if done.returncode != 0:
        what = " ".join(args) if stdin is None else f"{' '.join(args)} <<{stdin!r}"
        raise TopologyError(f"`ip {what}` failed: {done.stderr.strip()}")


def namespaces() -> list[str]:
    """Every network namespace of this naming scheme that exists now (any process's)."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    names = [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]
    return [n for n in names if _NAME.match(n)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale() -> list[str]:
    """Delete namespaces left by processes that no longer exist; return their names."""
    stale = [n for n in namespaces() if not _alive(int(_NAME.match(n).group(1)))]
    for name in stale:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return stale


@dataclass(frozen=True)
class Host:
    """One named host: a network namespace with one address on the topology's bridge."""

    name: str
    netns: str
    addr: str
    iface: str = IFACE

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` run on this host. `ip netns exec` enters the namespace and execs the program,
        so the process that starts is the program itself (its pid, CPU clock and exit status)."""
        if not self.netns:  # a loopback host: the machine's own namespace
            return list(argv)
        return ["ip", "netns", "exec", self.netns, *argv]


class Topology:
    """Hosts in network namespaces joined by a bridge; a context manager that always cleans up.

    with Topology(["ctl", "n0", "n1"], loss_percent=1.0, lossy=["n0", "n1"]) as topo:
        topo.host("n0").addr   # "10.201.0.3"
    """

    def __init__(
        self,
        hosts: list[str],
        loss_percent: float = 0.0,
        lossy: list[str] | None = None,
        rate: str | None = None,
        loss_protocols: tuple[str, ...] = ("udp",),
        p2p: bool = False,
    ):
        if not hosts:
            raise ValueError("a topology needs at least one host")
        if len(set(hosts)) != len(hosts):
            raise ValueError(f"host names must be unique: {hosts}")
        if len(hosts) > 250:
            raise ValueError("at most 250 hosts on one bridge")
        if not 0.0 <= loss_percent <= 100.0:
            raise ValueError(f"loss_percent must be within 0-100, not {loss_percent}")
        self.names = list(hosts)
        self.loss_percent = loss_percent
        self.lossy = list(hosts if lossy is None else lossy)
        unknown = set(self.lossy) - set(hosts)
        if unknown:
            raise ValueError(f"lossy hosts not in the topology: {sorted(unknown)}")
        self.rate = rate
        bad = set(loss_protocols) - {"udp", "tcp"}
        if bad or not loss_protocols:
            raise ValueError(f"loss_protocols: udp and/or tcp, not {sorted(loss_protocols)}")
        self.loss_protocols = tuple(loss_protocols)
        self.tag = f"{PREFIX}-{os.getpid()}-{next(_seq)}"
        self.hosts: dict[str, Host] = {
            name: Host(name, f"{self.tag}-{i}", f"{SUBNET}.{i + 2}") for i, name in enumerate(hosts)
        }
        if p2p and len(hosts) != 2:
            raise ValueError(f"a point-to-point topology joins exactly two hosts, not {hosts}")
        self.p2p = p2p
        self.switch = f"{self.tag}-sw"
        self._made: list[str] = []
        self._old_sigterm = None

    def host(self, name: str) -> Host:
        try:
            return self.hosts[name]
        except KeyError:
            raise KeyError(f"no host {name!r} in this topology ({', '.join(self.names)})") from None

    def describe(self) -> dict:
        """What a run records about where its trial ran."""
        return {
            "kind": "netns",
            "hosts": {h.name: {"netns": h.netns, "addr": h.addr} for h in self.hosts.values()},
            "bridge": "none: one veth pair (point to point)"
            if self.p2p
            else "br0 (mcast_snooping 0)",
            "loss_percent": self.loss_percent,
            "lossy": self.lossy if self.loss_percent else [],
            "loss_protocols": list(self.loss_protocols) if self.loss_percent else [],
            "rate": self.rate,
        }

    # -- life cycle ---------------------------------------------------------------------------

    def __enter__(self) -> Topology:
        with _lock:
            _live.add(self)
        self._trap_sigterm()
        try:
            sweep_stale()
            self._create()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Delete every namespace this topology made (idempotent)."""
        for name in reversed(self._made):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        self._made.clear()
        with _lock:
            _live.discard(self)
        self._restore_sigterm()

    def _trap_sigterm(self) -> None:
        """SIGTERM unwinds the `with` block (KeyboardInterrupt) instead of killing the process
        with its namespaces left behind. Only the main thread may install handlers."""
        if threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGTERM)
        if previous not in (signal.SIG_DFL, None):
            return  # someone already handles SIGTERM (the harness's runner): leave it be

        def unwind(signum, frame):
            raise KeyboardInterrupt(f"signal {signum}")  # what a run already treats as a stop

        self._old_sigterm = previous
        signal.signal(signal.SIGTERM, unwind)

    def _restore_sigterm(self) -> None:
        if self._old_sigterm is not None:
            with contextlib.suppress(ValueError):
                signal.signal(signal.SIGTERM, self._old_sigterm)
            self._old_sigterm = None

    def _create(self) -> None:
        all_ns = [*([] if self.p2p else [self.switch]), *(h.netns for h in self.hosts.values())]
        for name in all_ns:
            _ip(["netns", "add", name])
            self._made.append(name)
        if self.p2p:
            self._join_p2p()
        else:
            self._join_bridge()
        self._faults()

    def _join_p2p(self) -> None:
        """Two hosts, one veth pair between them: the wiring of two machines on one cable (and
        of msgbench.raycluster's two nodes), with no bridge forwarding in the path."""
        a, b = self.hosts.values()
        _ip(["-n", a.netns, "link", "add", IFACE, "type", "veth", "peer", "name", IFACE,
             "netns", b.netns])  # fmt: skip
        for h in (a, b):
            _ip(
                ["-n", h.netns, "-batch", "-"],
                f"link set lo up\naddr add {h.addr}/24 dev {IFACE}\nlink set {IFACE} up\n"
                f"route add {MCAST_ROUTE} dev {IFACE}\n",
            )

    def _join_bridge(self) -> None:
        switch = [
            "link add br0 type bridge mcast_snooping 0",
            "link set lo up",
            "link set br0 up",
        ]
        for i, h in enumerate(self.hosts.values()):
            switch.append(f"link add p{i} type veth peer name {IFACE} netns {h.netns}")
            switch.append(f"link set p{i} master br0 up")
        _ip(["-n", self.switch, "-batch", "-"], "\n".join(switch) + "\n")
        for h in self.hosts.values():
            _ip(
                ["-n", h.netns, "-batch", "-"],
                f"link set lo up\naddr add {h.addr}/24 dev {IFACE}\nlink set {IFACE} up\n"
                f"route add {MCAST_ROUTE} dev {IFACE}\n",
            )

    def _faults(self) -> None:
        if self.loss_percent > 0:
            reason = loss_unavailable_reason()
            if reason:
                raise TopologyError(reason)
            for name in self.lossy:
                self._install_loss(self.hosts[name])
        if self.rate:
            for name in self.lossy:
                h = self.hosts[name]
                self._run_in(
                    h,
                    [
                        "tc",
                        "qdisc",
                        "add",
                        "dev",
                        IFACE,
                        "root",
                        "tbf",
                        "rate",
                        self.rate,
                        "burst",
                        "32kbit",
                        "latency",
                        "50ms",
                    ],
                )

    def _install_loss(self, h: Host) -> None:
        """Drop `loss_percent` of UDP datagrams (and, with "tcp" in `loss_protocols`, of TCP
        segments on the host's link) into and out of this host, at random (resolution 0.01%):
        nftables' numgen random, the one loss this kernel offers (no netem)."""
        threshold = round(self.loss_percent * 100)
        rules = {"input": [], "output": []}
        if "udp" in self.loss_protocols:
            for chain in rules:
                rules[chain].append(f"meta l4proto udp numgen random mod 10000 < {threshold} drop")
        if "tcp" in self.loss_protocols:
            rules["input"].append(
                f'iifname "{h.iface}" meta l4proto tcp numgen random mod 10000 < {threshold} drop'
            )
            rules["output"].append(
                f'oifname "{h.iface}" meta l4proto tcp numgen random mod 10000 < {threshold} drop'
            )
        ruleset = (
            "table inet msgbench_loss {\n"
            "  chain input { type filter hook input priority 0; policy accept;\n"
            + "".join(f"    {r}\n" for r in rules["input"])
            + "  }\n"
            "  chain output { type filter hook output priority 0; policy accept;\n"
            + "".join(f"    {r}\n" for r in rules["output"])
            + "  }\n"
            "}\n"
        )
        self._run_in(h, ["nft", "-f", "-"], ruleset)

    def _run_in(self, h: Host, argv: list[str], stdin: str | None = None) -> None:
        done = subprocess.run(
            h.wrap(argv), input=stdin, capture_output=True, text=True, timeout=IP_TIMEOUT_S
        )
        if done.returncode != 0:
            raise TopologyError(f"`{' '.join(argv)}` in {h.netns} failed: {done.stderr.strip()}")


class Loopback:
    """Hosts without namespaces: each a distinct loopback address (127.0.0.0/8 is all `lo`), for
    unicast work that needs one address per program (ECHONET Lite's fixed port 3610). Addresses
    are drawn at random from 127.128.0.0/9 and each is checked free on `udp_ports`, so two runs
    or a test session beside a run do not collide. Nothing to tear down."""

    def __init__(self, hosts: list[str], udp_ports: tuple[int, ...] = (), seed: int | None = None):
        if len(set(hosts)) != len(hosts) or not hosts:
            raise ValueError(f"host names must be unique and at least one: {hosts}")
        self.names = list(hosts)
        self.udp_ports = udp_ports
        self._rng = random.Random(seed)
        self.hosts: dict[str, Host] = {}

    def _free(self, addr: str) -> bool:
        for port in self.udp_ports:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                try:
                    s.bind((addr, port))
                except OSError:
                    return False
        return True

    def __enter__(self) -> Loopback:
        taken: set[str] = set()
        for name in self.names:
            for _ in range(1000):
                addr = f"127.{self._rng.randint(128, 254)}.{self._rng.randint(0, 255)}" + (
                    f".{self._rng.randint(2, 254)}"
                )
                if addr not in taken and self._free(addr):
                    break
            else:
                raise TopologyError(f"no free loopback address for UDP ports {self.udp_ports}")
            taken.add(addr)
            self.hosts[name] = Host(name, "", addr, "lo")
        return self

    def __exit__(self, *exc) -> None:
        pass

    def host(self, name: str) -> Host:
        return self.hosts[name]

    def describe(self) -> dict:
        return {
            "kind": "loopback",
            "hosts": {h.name: {"netns": None, "addr": h.addr} for h in self.hosts.values()},
        }


def close_all() -> None:
    """Tear down every topology of this process still alive (called at exit)."""
    for topo in list(_live):
        topo.close()


import atexit  # noqa: E402  (registered once the module's names exist)

atexit.register(close_all)
