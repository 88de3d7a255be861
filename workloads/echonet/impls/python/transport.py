"""The UDP socket (SPEC §2): bind, multicast interface and group, the start INF, timeouts.

One socket per program, blocking: the node's loop and the controller's waits call its
recvfrom_into/sendto directly (bound methods held in locals), so nothing here sits on the per-
datagram path. Every multicast leaves on the interface of --ifaddr with TTL 1, so a program
bound to a loopback address multicasts on `lo` only and never onto a real network.
"""

from __future__ import annotations

import socket
import struct

import frame

ANY = "0.0.0.0"
_TIMEVAL = struct.Struct("@ll")  # struct timeval {time_t tv_sec; suseconds_t tv_usec;}


def open_socket(bind: str, port: int, ifaddr: str) -> socket.socket:
    """A UDP socket bound to bind:port that multicasts on ifaddr's interface, TTL 1, loop on.

    SO_REUSEADDR only on a wildcard bind (SPEC §2): there the host's other ECHONET Lite stacks
    share port 3610; on a unicast address a second program must fail to bind (EADDRINUSE)
    instead of silently sharing its datagrams.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        if bind == ANY:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((bind, port))
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(ifaddr))
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
    except BaseException:
        sock.close()
        raise
    return sock


def join_group(sock: socket.socket, ifaddr: str) -> None:
    """Join 224.0.23.0 on the interface of ifaddr (0.0.0.0: the one the routes pick)."""
    mreq = socket.inet_aton(frame.MULTICAST_GROUP) + socket.inet_aton(ifaddr)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)


def multicast(sock: socket.socket, datagram: bytes, port: int) -> None:
    """Send one datagram to the ECHONET Lite group; OSError if it cannot leave (no route)."""
    sock.sendto(datagram, (frame.MULTICAST_GROUP, port))


def set_receive_timeout(sock: socket.socket, seconds: float) -> None:
    """Make a blocking recv give up after `seconds` (> 0) with EAGAIN (BlockingIOError).

    SO_RCVTIMEO instead of socket.settimeout(): with a Python-level timeout every recv is a
    poll(2) and then a recvfrom(2); with the kernel's it is one recvfrom(2), so a round trip
    costs two system calls instead of three.
    """
    usec = max(1, round(seconds * 1_000_000))  # 0 would mean "wait forever"
    timeval = _TIMEVAL.pack(usec // 1_000_000, usec % 1_000_000)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeval)


def wake_receiver(sock: socket.socket) -> None:
    """Make a recv blocked on this socket return now (from a signal handler).

    shutdown(SHUT_RD) marks the socket shut for reading and wakes its waiters even though a UDP
    socket is never connected (Linux answers ENOTCONN but does both): a blocked recvfrom then
    returns 0 bytes and no address instead of sleeping on. Sending is unaffected.
    """
    try:
        sock.shutdown(socket.SHUT_RD)
    except OSError:
        pass
