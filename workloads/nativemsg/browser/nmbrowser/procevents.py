"""Linux process events (the netlink proc connector): every fork, exec and exit on the machine,
with exit statuses. Chromium, not the driver, reaps the hosts, often before /proc can show
their status; these events still carry it. Needs CAP_NET_ADMIN (root); without it the driver
falls back to /proc and says so.

Events queue in the socket while the trial runs and are only read afterwards, so reading them
costs the measured loop nothing; the kernel's own cost is one small message per process event.
"""

from __future__ import annotations

import errno
import select
import socket
import struct
import time
from dataclasses import dataclass, field

NETLINK_CONNECTOR = 11
CN_IDX_PROC = 1
CN_VAL_PROC = 1
PROC_CN_MCAST_LISTEN = 1
PROC_CN_MCAST_IGNORE = 2
NLMSG_DONE = 3
PROC_EVENT_FORK = 0x00000001
PROC_EVENT_EXEC = 0x00000002
PROC_EVENT_EXIT = 0x80000000
_NLMSGHDR = struct.Struct("=IHHII")  # len, type, flags, seq, pid
_CN_MSG = struct.Struct("=IIIIHH")  # idx, val, seq, ack, len, flags
_EVENT = struct.Struct("=IIQ")  # what, cpu, timestamp_ns
_FOUR = struct.Struct("=IIII")
SO_RCVBUFFORCE = 33  # <asm-generic/socket.h>; not exported by Python's socket module
#: Room for events of a whole trial (other processes of the machine included) until read.
RCVBUF = 32 << 20


class Unavailable(Exception):
    pass


@dataclass
class Children:
    """What one parent's child processes did, as far as the events have been read."""

    forked: set[int] = field(default_factory=set)
    execed: set[int] = field(default_factory=set)
    exits: dict[int, int] = field(default_factory=dict)  # pid -> wait status


class ProcEvents:
    def __init__(self, parent: int):
        """Follow the child processes of `parent` (a process id)."""
        self.parent = parent
        self.children = Children()
        self.lost = False  # the socket overflowed: some events are missing
        try:
            self._sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_CONNECTOR)
        except OSError as e:
            raise Unavailable(f"no proc connector: {e}") from None
        try:
            try:  # root may go past net.core.rmem_max; others get what rmem_max allows
                self._sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RCVBUF)
            except OSError:
                self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
            self._sock.bind((0, CN_IDX_PROC))
            self._control(PROC_CN_MCAST_LISTEN)
        except OSError as e:
            self._sock.close()
            raise Unavailable(f"cannot listen to process events: {e}") from None
        self._sock.setblocking(False)

    def close(self) -> None:
        try:
            self._control(PROC_CN_MCAST_IGNORE)
        except OSError:
            pass
        self._sock.close()

    def __enter__(self) -> ProcEvents:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _control(self, op: int) -> None:
        payload = struct.pack("=I", op)
        cn = _CN_MSG.pack(CN_IDX_PROC, CN_VAL_PROC, 0, 0, len(payload), 0) + payload
        self._sock.send(_NLMSGHDR.pack(_NLMSGHDR.size + len(cn), NLMSG_DONE, 0, 0, 0) + cn)

    def read(self) -> None:
        """Take in every event queued so far (never blocks)."""
        while True:
            try:
                data = self._sock.recv(65536)
            except BlockingIOError:
                return
            except OSError as e:
                if e.errno != errno.ENOBUFS:
                    raise
                self.lost = True  # the queue overflowed and events were dropped; read on
                continue
            self._parse(data)

    def wait_exit(self, pid: int, seconds: float) -> int | None:
        """The wait status of `pid` (a child of the parent), waiting up to `seconds` for it."""
        end = time.monotonic() + seconds
        while True:
            self.read()
            if pid in self.children.exits:
                return self.children.exits[pid]
            left = end - time.monotonic()
            if left <= 0:
                return None
            select.select([self._sock], [], [], min(left, 0.05))

    def _parse(self, data: bytes) -> None:
        offset = 0
        while offset + _NLMSGHDR.size <= len(data):
            length = _NLMSGHDR.unpack_from(data, offset)[0]
            if length < _NLMSGHDR.size:
                return
            body = offset + _NLMSGHDR.size + _CN_MSG.size
            if body + _EVENT.size <= offset + length:
                self._event(data, body)
            offset += (length + 3) & ~3  # NLMSG_ALIGN

    def _event(self, data: bytes, at: int) -> None:
        what = _EVENT.unpack_from(data, at)[0]
        at += _EVENT.size
        if what == PROC_EVENT_FORK:
            _, parent_tgid, child_pid, child_tgid = _FOUR.unpack_from(data, at)
            if parent_tgid == self.parent and child_pid == child_tgid:  # a process, not a thread
                self.children.forked.add(child_pid)
        elif what == PROC_EVENT_EXEC:
            pid, tgid = struct.unpack_from("=II", data, at)
            if pid == tgid and pid in self.children.forked:
                self.children.execed.add(pid)
        elif what == PROC_EVENT_EXIT:
            pid, tgid, exit_code, _ = _FOUR.unpack_from(data, at)
            if pid == tgid and pid in self.children.forked:
                self.children.exits[pid] = exit_code


def open_for(parent: int) -> tuple[ProcEvents | None, str | None]:
    """Events for `parent`'s children, or None and why they are unavailable."""
    try:
        return ProcEvents(parent), None
    except Unavailable as e:
        return None, str(e)
