"""Reaching into a topology's network namespaces from the harness's own process (the soak).

`call_in(host, fn)` runs `fn` on a thread that has entered the host's network namespace
(setns(2) changes only the calling thread's namespace); a socket made there belongs to that
namespace for its whole life, whichever thread uses it later. `expose_loopback` makes a server
that listens on 127.0.0.1 only (every SPEC of the lab says so) reachable at the host's address:
a DNAT rule to 127.0.0.1 in the host's own namespace, with route_localnet on, and an SNAT rule so
that the server sees its clients come from 127.0.0.1 too (no user-space hop: nothing between the
server and the network but the kernel).
"""

from __future__ import annotations

import ctypes
import os
import socket
import subprocess
import threading

from ..topology import Host, TopologyError

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def call_in(host: Host, fn, *args):
    """fn(*args) inside the network namespace of `host` (its own thread); its result."""
    if not host.netns:
        return fn(*args)
    box: dict = {}

    def run() -> None:
        try:
            fd = os.open(f"/var/run/netns/{host.netns}", os.O_RDONLY)
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"setns {host.netns}: {os.strerror(err)}")
            finally:
                os.close(fd)
            box["value"] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = e

    t = threading.Thread(target=run, name=f"netns-{host.name}", daemon=True)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def connect(host: Host, addr: str, port: int, timeout: float = 5.0) -> socket.socket:
    """A TCP connection made from inside `host`'s namespace."""

    def make() -> socket.socket:
        s = socket.create_connection((addr, port), timeout=timeout)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s

    return call_in(host, make)


def udp_socket(host: Host) -> socket.socket:
    """A UDP socket bound to any port of `host`'s namespace."""

    def make() -> socket.socket:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", 0))
        return s

    return call_in(host, make)


def _run(host: Host, argv: list[str], stdin: str | None = None) -> None:
    done = subprocess.run(host.wrap(argv), input=stdin, capture_output=True, text=True,
                          timeout=20)  # fmt: skip
    if done.returncode != 0:
        raise TopologyError(f"`{' '.join(argv)}` in {host.netns} failed: {done.stderr.strip()}")


def expose_loopback(host: Host, port: int, proto: str = "tcp") -> None:
    """Connections (datagrams) to host.addr:port reach 127.0.0.1:port of that host."""
    _run(host, ["sysctl", "-qw", "net.ipv4.conf.all.route_localnet=1",
                f"net.ipv4.conf.{host.iface}.route_localnet=1"])  # fmt: skip
    ruleset = (
        "table ip msgbench_expose {\n"
        "  chain prerouting { type nat hook prerouting priority -100;\n"
        f'    iifname "{host.iface}" {proto} dport {port} dnat to 127.0.0.1:{port}\n'
        "  }\n"
        # ...and from 127.0.0.1: the server sees a local client, as its SPEC's loopback-only
        # contract expects (redis-server's protected mode refuses other sources).
        "  chain input { type nat hook input priority 100;\n"
        f'    iifname "{host.iface}" ip daddr 127.0.0.1 {proto} dport {port} snat to 127.0.0.1\n'
        "  }\n}\n"
    )
    _run(host, ["nft", "-f", "-"], ruleset)
