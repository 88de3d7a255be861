"""transport: binding, the kernel receive timeout, the signal wake-up, multicast options."""

from __future__ import annotations

import errno
import socket
import struct
import threading
import time

import pytest
from conftest import NODE_ADDR, OTHER_ADDR
from echonet_py import transport


def test_socket_is_bound_with_multicast_on_its_interface_ttl_1(port):
    with transport.open_socket(NODE_ADDR, port, NODE_ADDR) as s:
        assert s.getsockname() == (NODE_ADDR, port)
        ifaddr = s.getsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, 4)
        assert socket.inet_ntoa(ifaddr) == NODE_ADDR
        assert s.getsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL) == 1
        assert s.getsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP) == 1
        assert s.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR) == 0


def test_an_address_in_use_fails_to_bind(port):
    with transport.open_socket(NODE_ADDR, port, NODE_ADDR):
        with pytest.raises(OSError) as e:
            transport.open_socket(NODE_ADDR, port, NODE_ADDR)
        assert e.value.errno == errno.EADDRINUSE


def test_receive_timeout_gives_eagain_without_a_python_timeout(port):
    with transport.open_socket(NODE_ADDR, port, NODE_ADDR) as s:
        transport.set_receive_timeout(s, 0.05)
        assert s.gettimeout() is None  # still a blocking socket: one recvfrom per receive
        sec, usec = struct.unpack("@ll", s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, 16))
        assert sec == 0 and 50_000 <= usec < 60_000  # the kernel rounds up to its tick
        start = time.monotonic()
        with pytest.raises(BlockingIOError):
            s.recvfrom_into(bytearray(16))
        assert 0.03 < time.monotonic() - start < 1.0
        transport.set_receive_timeout(s, 0.0)  # never 0, which would mean "wait forever"
        sec, usec = struct.unpack("@ll", s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, 16))
        assert (sec, usec) != (0, 0)


def test_wake_receiver_ends_a_blocked_receive_at_once(port):
    with transport.open_socket(NODE_ADDR, port, NODE_ADDR) as s:
        transport.set_receive_timeout(s, 5.0)
        result = []
        t = threading.Thread(target=lambda: result.append(s.recvfrom_into(bytearray(16))))
        t.start()
        time.sleep(0.1)
        start = time.monotonic()
        transport.wake_receiver(s)
        t.join(2)
        assert not t.is_alive() and time.monotonic() - start < 1.0
        assert result == [(0, None)]  # no datagram: zero bytes and no source address
        # Sending still works after the receive side was shut.
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as peer:
            peer.bind((OTHER_ADDR, 0))
            s.sendto(b"x", peer.getsockname())
            peer.settimeout(1)
            assert peer.recv(16) == b"x"


def test_multicast_from_a_loopback_address_does_not_raise_or_is_an_oserror(port):
    with transport.open_socket(NODE_ADDR, port, NODE_ADDR) as s:
        try:
            transport.multicast(s, b"\x10\x81\x00\x01", port)
        except OSError:
            pass  # a host without a multicast route on lo: the node counts it (send_errors)
