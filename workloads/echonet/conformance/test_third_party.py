"""A third-party controller against every node: pychonet, the library behind Home Assistant's
ECHONET Lite integration (third_party.py drives it as the integration does).

- On loopback: pychonet discovers the node by address, reads its instance list, then each
  object's property maps and every property its get map names, one Get each; everything it
  decoded must be SPEC §5's, byte for byte.
- In network namespaces (msgbench.topology): pychonet's multicast discovery finds two nodes,
  each with its air conditioner.

pychonet runs as a program of its own (it binds port 3610 of the address it is given, and in a
namespace it must run inside it), always on an address apart from the node's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import echonet_procs as P
import echonet_spec as S
import pytest

from msgbench import topology

THIRD_PARTY = Path(__file__).with_name("third_party.py")
RUN_TIMEOUT_S = 25.0
NODE_HOSTS = ["n0", "n1"]

# The floor answers only the node profile's precomputed Gets: pychonet's discovery asks more.
pytestmark = pytest.mark.semantics


def pychonet(args: list[str], wrap=None) -> dict:
    """Run third_party.py (pychonet) with `args`; its JSON."""
    argv = [sys.executable, str(THIRD_PARTY), "--timeout-s", "1", *args]
    argv = wrap(argv) if wrap else argv
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"pychonet did not finish in {RUN_TIMEOUT_S} s: {argv}") from e
    assert proc.returncode == 0, f"pychonet failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout)


def hexmap(values: dict[int, bytes]) -> dict[str, str]:
    return {f"{epc:02x}": edt.hex() for epc, edt in values.items()}


def test_pychonet_discovers_and_reads_every_property(node, record_property):
    record_property("client", "pychonet")  # a row of the report's interoperability matrix
    out = pychonet(["--bind", P.fresh_addr(), "--read", node.addr])
    assert list(out["nodes"]) == [node.addr]
    found = out["nodes"][node.addr]
    assert found["instances"] == ["013001"], "pychonet's view of the instance list (0xD6)"
    for eoj, spec in S.objects(node.addr).items():
        name = f"{eoj:06x}"
        assert name in found["objects"], f"pychonet did not read object {name}"
        got = found["objects"][name]
        for epc in (0x9D, 0x9E, 0x9F):
            decoded = got["maps"][f"{epc:02x}"]
            assert decoded is not None, f"{name}: pychonet got no {epc:02X} map"
            assert sorted(decoded) == [f"{c:02x}" for c in S.propmap_epcs(spec[epc])], (
                f"{name}: the {epc:02X} map as pychonet decodes it"
            )
        assert got["values"] == hexmap(spec), f"{name}: every property as pychonet read it"
        assert set(got["esv"].values()) == {"72"}, f"{name}: a Get one of them was refused"


@pytest.mark.netns
def test_pychonet_finds_nodes_by_multicast(impl, record_property):
    record_property("client", "pychonet")
    reason = topology.unavailable_reason()
    if reason is not None:
        pytest.skip(f"no network namespaces: {reason}")
    with topology.Topology(["ctl", *NODE_HOSTS]) as topo:
        nodes = []
        try:
            for name in NODE_HOSTS:
                h = topo.host(name)
                args = ["--bind", "0.0.0.0", "--ifaddr", h.addr, "--port", str(S.PORT)]
                nodes.append(P.Node(impl.argv(), impl.cwd(), addr=h.addr, args=args, wrap=h.wrap))
            ctl = topo.host("ctl")
            out = pychonet(["--bind", ctl.addr, "--discover", str(len(nodes))], wrap=ctl.wrap)
        finally:
            for n in nodes:
                n.kill()
    want = {topo.host(name).addr: {"instances": ["013001"], "objects": {}} for name in NODE_HOSTS}
    assert out["nodes"] == want, "the nodes pychonet found by multicast, with their instances"
