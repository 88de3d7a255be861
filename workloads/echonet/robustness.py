"""The echonet node's part in the hostile-client suite (msgbench.robustness): how to start a
node on a loopback address of its own, a well-behaved controller, and the datagrams of a flood
(SPEC §3, §6 "Hostile input")."""

from __future__ import annotations

import contextlib
import random
import sys
import time
from pathlib import Path

from msgbench.robustness import probes
from msgbench.robustness.hostile import Endpoint

sys.path.insert(0, str(Path(__file__).resolve().parent / "conformance"))

import echonet_procs as P  # noqa: E402
import echonet_spec as S  # noqa: E402

TRANSPORT = "udp"


@contextlib.contextmanager
def server(impl, cpu: int):
    node = P.Node(["taskset", "-c", str(cpu), *impl.argv()], impl.cwd())
    try:
        yield Endpoint(node.addr, S.PORT, node.proc.pid, node.alive)
    finally:
        node.stop()


class Client:
    """A controller on an address of its own: Get 0x80 of the node profile, one at a time; the
    reply must be the Get_Res with the request's TID. UDP may drop a datagram (a flood fills the
    node's receive buffer), so the client does what a controller does: asks again, up to TRIES
    times; a request fails only when every try goes unanswered. `retries` counts the re-asks."""

    TRIES = 4
    WAIT_S = 0.5

    def __init__(self, ep: Endpoint) -> None:
        self.ep = ep
        self.sock = P.bind_udp(port=0)
        self.tid = random.randrange(1 << 16)
        self.retries = 0

    def exchange(self) -> None:
        self.tid = (self.tid + 1) & 0xFFFF
        request = S.get_request(self.tid, S.NODE_PROFILE, [0x80])
        for attempt in range(self.TRIES):
            self.retries += attempt > 0
            self.sock.sendto(request, (self.ep.host, S.PORT))
            reply = self._reply(time.monotonic() + self.WAIT_S)
            if reply is not None:
                if reply.esv != S.GET_RES:
                    raise ValueError(f"ESV {reply.esv:#x}, not Get_Res")
                return
        raise TimeoutError(f"no reply to {self.TRIES} tries of {self.WAIT_S} s")

    def _reply(self, deadline: float):
        """The reply with this request's TID before `deadline` (older replies are skipped)."""
        while (left := deadline - time.monotonic()) > 0:
            self.sock.settimeout(left)
            try:
                data, _ = self.sock.recvfrom(65536)
            except TimeoutError:
                return None
            reply = S.decode(data)
            if reply.tid == self.tid:
                return reply
        return None

    def close(self) -> None:
        self.sock.close()


def target(ep: Endpoint, w) -> probes.Target:
    get = S.get_request(7, S.NODE_PROFILE, S.NODE_PROFILE_EPCS)
    return probes.Target(
        transport=TRANSPORT, host=ep.host, port=ep.port, request=get, partial=get[:7], huge={},
        flood=get, extra={"attacker_addr": P.fresh_addr()},
    )  # fmt: skip
