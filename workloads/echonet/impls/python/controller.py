"""The controller's side of the protocol (SPEC §8): requests matched to replies, retries, discovery.

A reply matches a request when its TID is the request's, it comes from the address asked, and
its ESV answers the request's ESV. Everything else that arrives while waiting (late replies,
duplicates, other sources or TIDs, malformed datagrams) is counted in `ignored` and the wait
goes on until the attempt's deadline. An attempt that times out resends the same datagram
(same TID), at most `retries` times.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import frame
import transport
from frame import Frame, FrameError

DISCOVERY_EPC = 0xD6  # self-node instance list S


class NoReply(Exception):
    """A request stayed unanswered after all its attempts."""


class WrongReply(Exception):
    """A reply matched its request but does not say what was asked."""


@dataclass
class DiscoveredNode:
    host: str
    eoj: bytes
    instances: list[bytes]


@dataclass
class Discovery:
    nodes: list[DiscoveredNode] = field(default_factory=list)
    elapsed_s: float = 0.0
    attempts: int = 0


def instance_list(edt: bytes) -> list[bytes]:
    """The EOJs of an instance list (count, then 3 bytes each): as many as the EDT holds."""
    if not edt:
        return []
    count = min(edt[0], (len(edt) - 1) // 3)
    return [bytes(edt[1 + 3 * i : 4 + 3 * i]) for i in range(count)]


class Controller:
    """Requests over one bound socket; `ignored` and `resent` count over its whole life."""

    def __init__(self, sock: socket.socket, port: int, timeout_s: float, retries: int) -> None:
        self.sock = sock
        self.port = port
        self.timeout_s = timeout_s
        self.retries = retries
        self.ignored = 0
        self.resent = 0  # sends after the first of each request
        self._tid = 0
        self._buf = bytearray(frame.RECV_SIZE)
        self._view = memoryview(self._buf)
        self._armed = 0.0  # the kernel receive timeout in force (seconds)
        self._arm(timeout_s)

    def _arm(self, seconds: float) -> None:
        # One setsockopt when the wait changes length, none per request in the usual case.
        if seconds != self._armed:
            transport.set_receive_timeout(self.sock, seconds)
            self._armed = seconds

    def next_tid(self) -> bytes:
        """1, 2, ..., 0xFFFF, then 1 again: 0 is skipped when the counter wraps."""
        self._tid = self._tid % 0xFFFF + 1
        return self._tid.to_bytes(2, "big")

    def request(
        self,
        host: str,
        deoj: bytes,
        esv: int,
        properties: Sequence[tuple[int, bytes]],
        get_properties: Sequence[tuple[int, bytes]] | None = None,
        attempts: int | None = None,
    ) -> tuple[Frame | None, int]:
        """Send one request and wait for its reply: (reply or None, sends it took)."""
        tid = self.next_tid()
        datagram = frame.encode(tid, frame.CONTROLLER, deoj, esv, properties, get_properties)
        return self.exchange(datagram, host, frame.REPLY_ESVS[esv], attempts)

    def exchange(
        self, datagram: bytes, host: str, accepted: frozenset[int], attempts: int | None = None
    ) -> tuple[Frame | None, int]:
        """Send an encoded request (TID at bytes 2-3) to host until a reply matches it, at most
        `attempts` times (default 1 + retries): (reply or None, sends it took).

        The bench loop's path: a plain tuple, the timeout re-armed only when it changed.
        """
        tid = datagram[2:4]
        tries = 1 + self.retries if attempts is None else attempts
        address = (host, self.port)
        timeout_s = self.timeout_s
        sendto = self.sock.sendto
        for attempt in range(1, tries + 1):
            if attempt > 1:
                self.resent += 1
            if self._armed != timeout_s:
                self._arm(timeout_s)
            deadline = time.monotonic() + timeout_s
            try:
                sendto(datagram, address)
            except OSError:
                # No route, a full buffer: this attempt is lost like a dropped datagram.
                time.sleep(timeout_s)
                continue
            got = self._wait(tid, host, accepted, deadline)
            if got is not None:
                return got[0], attempt
        return None, tries

    def _wait(
        self, tid: bytes, host: str | None, accepted: frozenset[int], deadline: float
    ) -> tuple[Frame, str] | None:
        """The first datagram until `deadline` that answers the request (its TID, an accepted
        ESV, from `host` or from anyone when host is None), with its source address; None when
        the deadline passed. Expects the receive timeout armed to at most the time left."""
        buf, view = self._buf, self._view
        recv = self.sock.recvfrom_into
        while True:
            try:
                n, addr = recv(buf)
            except BlockingIOError:
                return None  # the receive timeout, armed to the deadline, expired
            except OSError:
                n = -1  # an error queued by an earlier send (ICMP): not a datagram, wait on
            # Cheap rejections on the raw bytes first; decode only what may be the reply.
            if (
                n >= frame.HEADER_SIZE
                and buf[10] in accepted
                and buf[2:4] == tid
                and (host is None or addr[0] == host)
            ):
                try:
                    return frame.decode(view[:n].tobytes()), addr[0]
                except FrameError:
                    pass
            if n >= 0:
                self.ignored += 1
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self._arm(remaining)

    def discover(self, expect: int | None, wait_s: float) -> Discovery:
        """Multicast a Get of 0xD6 to the node profile and collect the nodes that answer.

        With `expect`: until that many distinct nodes answered, resending every timeout, at
        most `retries` times. Without: one send, then wait `wait_s` for whoever answers.
        Raises OSError when the multicast cannot be sent (no route).
        """
        tid = self.next_tid()
        datagram = frame.encode(
            tid, frame.CONTROLLER, frame.NODE_PROFILE, frame.GET, [(DISCOVERY_EPC, b"")]
        )
        accepted = frame.REPLY_ESVS[frame.GET]
        found: dict[str, DiscoveredNode] = {}
        result = Discovery()
        tries = 1 + self.retries if expect is not None else 1
        window = self.timeout_s if expect is not None else wait_s
        start = time.perf_counter()
        while result.attempts < tries and (expect is None or len(found) < expect):
            transport.multicast(self.sock, datagram, self.port)
            result.attempts += 1
            deadline = time.monotonic() + window
            self._arm(max(window, 1e-6))
            while expect is None or len(found) < expect:
                got = self._wait(tid, None, accepted, deadline)
                if got is None:
                    break
                reply, host = got
                if host in found:
                    self.ignored += 1  # the same node again, answering an earlier send
                    continue
                edt = next((d for e, d in reply.properties if e == DISCOVERY_EPC), b"")
                found[host] = DiscoveredNode(host, reply.seoj, instance_list(edt))
                result.elapsed_s = time.perf_counter() - start
        if not found:
            result.elapsed_s = time.perf_counter() - start
        # Sorted by address in numeric order (10.0.0.9 before 10.0.0.10).
        result.nodes = sorted(found.values(), key=lambda n: socket.inet_aton(n.host))
        return result
