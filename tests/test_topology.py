"""Named hosts (msgbench.hosts, msgbench.topology): namespaces that carry unicast, multicast and
loss for real, and are always removed — after success, an exception, SIGTERM, or (by the next
topology's sweep) SIGKILL."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from msgbench import hosts, topology

NETNS = topology.unavailable_reason()
needs_netns = pytest.mark.skipif(NETNS is not None, reason=f"no network namespaces: {NETNS}")
needs_nft = pytest.mark.skipif(
    topology.loss_unavailable_reason() is not None, reason=str(topology.loss_unavailable_reason())
)

# A receiver run inside a namespace: binds port 3610 (joining the group when asked), prints
# READY, then counts datagrams until it has been quiet for `quiet` seconds.
RECEIVER = textwrap.dedent(
    """
    import socket, sys
    addr, group, quiet = sys.argv[1], sys.argv[2], float(sys.argv[3])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 3610))
    if group != "-":
        mreq = socket.inet_aton(group) + socket.inet_aton(addr)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
    print("READY", flush=True)
    s.settimeout(5.0)
    n = 0
    try:
        while True:
            s.recvfrom(2048)
            n += 1
            s.settimeout(quiet)
    except socket.timeout:
        pass
    print(n, flush=True)
    """
)

SENDER = textwrap.dedent(
    """
    import socket, sys, time
    addr, dest, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(addr))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    s.bind((addr, 3610))
    for i in range(count):
        s.sendto(b"datagram %d" % i, (dest, 3610))
        if i % 50 == 49:
            time.sleep(0.002)  # stay far below any queue limit: only the rules may drop
    """
)


def start_receiver(h: topology.Host, group: str = "-", quiet: float = 0.5) -> subprocess.Popen:
    p = subprocess.Popen(
        h.wrap([sys.executable, "-c", RECEIVER, h.addr, group, str(quiet)]),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert p.stdout.readline().strip() == "READY"
    return p


def send(h: topology.Host, dest: str, count: int) -> None:
    subprocess.run(h.wrap([sys.executable, "-c", SENDER, h.addr, dest, str(count)]), check=True)


def received(p: subprocess.Popen) -> int:
    out, _ = p.communicate(timeout=30)
    return int(out.strip())


def ours(topo: topology.Topology) -> set[str]:
    return {n for n in topology.namespaces() if n.startswith(topo.tag + "-")}


@needs_netns
def test_unicast_and_multicast_cross_the_bridge_and_nothing_is_left():
    with topology.Topology(["ctl", "n0", "n1"]) as topo:
        made = ours(topo)
        assert made == {f"{topo.tag}-{i}" for i in range(3)} | {f"{topo.tag}-sw"}
        addrs = [topo.host(n).addr for n in ("ctl", "n0", "n1")]
        assert len(set(addrs)) == 3
        ctl, n0, n1 = (topo.host(n) for n in ("ctl", "n0", "n1"))
        r0 = start_receiver(n0, "224.0.23.0")
        r1 = start_receiver(n1, "224.0.23.0")
        send(ctl, "224.0.23.0", 20)  # one multicast reaches every member on the bridge
        assert received(r0) == 20 and received(r1) == 20
        r0 = start_receiver(n0)
        send(ctl, n0.addr, 30)
        assert received(r0) == 30
    assert not ours(topo)


@needs_netns
def test_an_exception_inside_the_block_still_removes_every_namespace():
    with pytest.raises(RuntimeError), topology.Topology(["a", "b"]) as topo:
        assert len(ours(topo)) == 3
        raise RuntimeError("trial failed")
    assert not ours(topo)


# Python's own SIGINT handler, set explicitly: a job started in the background by a
# non-interactive shell (make under CI) inherits SIGINT ignored, and Python keeps it so.
HOLDER = textwrap.dedent(
    """
    import signal, sys, time
    from msgbench import topology
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with topology.Topology(["a", "b"]) as topo:
        print(topo.tag, flush=True)
        time.sleep(60)
    """
)


@needs_netns
@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT"])
def test_a_signal_to_the_owner_removes_its_namespaces(how):
    p = subprocess.Popen([sys.executable, "-c", HOLDER], stdout=subprocess.PIPE, text=True)
    tag = p.stdout.readline().strip()
    assert any(n.startswith(tag + "-") for n in topology.namespaces())
    p.send_signal(getattr(signal, how))
    p.wait(timeout=20)
    assert not any(n.startswith(tag + "-") for n in topology.namespaces())


@needs_netns
def test_namespaces_of_a_killed_owner_are_swept_by_the_next_topology():
    p = subprocess.Popen([sys.executable, "-c", HOLDER], stdout=subprocess.PIPE, text=True)
    tag = p.stdout.readline().strip()
    p.kill()  # SIGKILL: no handler runs, the namespaces stay behind
    p.wait(timeout=10)
    assert any(n.startswith(tag + "-") for n in topology.namespaces())
    with topology.Topology(["x"]):
        pass
    assert not any(n.startswith(tag + "-") for n in topology.namespaces())


@needs_netns
@needs_nft
def test_loss_drops_about_the_declared_share_on_the_lossy_host_only():
    with topology.Topology(["ctl", "lossy", "clean"], loss_percent=50.0, lossy=["lossy"]) as topo:
        ctl, lossy, clean = (topo.host(n) for n in ("ctl", "lossy", "clean"))
        r_lossy = start_receiver(lossy, quiet=0.7)
        r_clean = start_receiver(clean, quiet=0.7)
        send(ctl, lossy.addr, 400)
        send(ctl, clean.addr, 400)
        got_lossy, got_clean = received(r_lossy), received(r_clean)
    # Binomial(400, 0.5): mean 200, sd 10; the bounds are 8 sd away, so this never flakes.
    assert 120 <= got_lossy <= 280, got_lossy
    assert got_clean == 400


def test_loopback_hosts_are_distinct_free_addresses_on_lo():
    with topology.Loopback(["driver", "impl0", "impl1"], udp_ports=(3610,)) as lo:
        addrs = [lo.host(n).addr for n in ("driver", "impl0", "impl1")]
        assert len(set(addrs)) == 3
        assert all(a.startswith("127.") for a in addrs)
        assert lo.host("impl0").wrap(["prog", "-x"]) == ["prog", "-x"]
        assert lo.describe()["kind"] == "loopback"


@pytest.mark.parametrize(
    "table, message",
    [
        ({"impls": 2}, "hosts.topology"),
        ({"topology": "cluster"}, "hosts.topology"),
        ({"topology": "netns", "impls": 0}, "hosts.impls"),
        ({"topology": "netns", "loss_percent": 120}, "loss_percent"),
        ({"topology": "loopback", "loss_percent": 1}, "need topology"),
        ({"topology": "netns", "nodes": 3}, "unknown field"),
        ({"topology": "loopback", "udp_ports": [0]}, "udp_ports"),
    ],
)
def test_a_bad_hosts_table_is_a_clear_manifest_error(table, message):
    with pytest.raises(hosts.HostsError, match=message):
        hosts.parse(table, "w.toml: scenario s")


def test_hosts_names_say_which_side_is_which():
    spec = hosts.parse({"topology": "netns", "impls": 3, "loss_percent": 5}, "here")
    assert spec.names() == ["driver", "impl0", "impl1", "impl2"]
    assert hosts.parse({"topology": "loopback"}, "here").names() == ["driver", "impl"]
    assert hosts.parse(None, "here") is None


@needs_netns
def test_trial_hosts_from_a_spec_are_torn_down_after_use():
    spec = hosts.parse({"topology": "netns", "impls": 2}, "here")
    with spec.open() as th:
        assert (
            th.netns
            and th.driver.name == "driver"
            and [h.name for h in th.impls]
            == [
                "impl0",
                "impl1",
            ]
        )
        tag = th.driver.netns.rsplit("-", 1)[0]
        assert any(n.startswith(tag) for n in topology.namespaces())
    assert not any(n.startswith(tag + "-") for n in topology.namespaces())
