"""uEcho's own sockets, bound where the lab says, and a receive loop that survives bad input.

uecho 1.0.3 keeps its sockets in a frame.Manager: per interface address one UnicastServer
(bound to that address) and one MulticastServer (bound to 0.0.0.0, joined to 224.0.23.0 on that
interface), each a threading.Thread reading its socket. Three things keep it from being used
as it is here, and this module changes exactly those:

- Where it binds: LocalNode.start() calls Manager.start() without the addresses it was given
  (it drops its `ifaddrs` argument), so the Manager asks netifaces for every IPv4 address of
  the host except 127.0.0.1 and binds all of them. `attach()` fills the node's Manager with
  servers for the lab's address instead, and creates the MulticastServer only where the lab
  wants multicast (bind 0.0.0.0): its 0.0.0.0:3610 socket would otherwise sit beside every
  other stack on loopback. The port is uecho's class constant Server.PORT (and Node.PORT):
  set from --port. Multicasts leave on --ifaddr with TTL 1 (uecho sets neither).
- How much it reads: Server.run reads 1024 bytes; a longer datagram is cut short. Here 65,536.
- What ends it: Server.run wraps its loop in a bare `except: break`, so the first datagram its
  parser rejects (format 2, a short frame, a PDC past the end), or the first send that fails
  (nftables dropping a reply gives EPERM), ends the thread and the node is deaf for good.
  `_Loop.run` reads the same socket with uecho's own parser and dispatch (Message.parse_bytes,
  Subject.notify -> LocalNode.message_received) and only counts what uecho rejects.

Everything else on the message path (parsing, which object answers, the reply) is uecho's.
"""

from __future__ import annotations

import errno
import socket
import sys
import threading

from uecho.frame.multicast_server import MulticastServer
from uecho.frame.server import Server
from uecho.frame.unicast_server import UnicastServer
from uecho.node import Node
from uecho.protocol.message import Message

ANY = "0.0.0.0"
RECV_SIZE = 65536
# Linux's IP_MULTICAST_ALL (linux/in.h); Python's socket module does not name it.
IP_MULTICAST_ALL = getattr(socket, "IP_MULTICAST_ALL", 49)


class Counters:
    """SPEC §7's counters, shared by the server threads (one lock: two threads at most)."""

    FIELDS = (
        "received",
        "requests",
        "replies",
        "ignored",
        "dropped_malformed",
        "dropped_format2",
        "send_errors",
    )

    def __init__(self) -> None:
        self._lock = threading.Lock()
        for name in self.FIELDS:
            setattr(self, name, 0)

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + n)

    def as_dict(self) -> dict[str, int]:
        with self._lock:
            return {name: getattr(self, name) for name in self.FIELDS}


class _Loop:
    """Server.run without its `except: break`: one datagram at a time, read whole, handed to
    uecho's parser and observers; what uecho cannot parse is counted and dropped."""

    counters: Counters
    classify = None  # set by attach(): (Message) -> "requests" | "ignored"; None: not counted
    _stopping = False

    def run(self) -> None:
        sock = self.sock
        while sock is not None and not self._stopping:
            try:
                data, addr = sock.recvfrom(RECV_SIZE)
            except OSError:
                if self._stopping:
                    break
                continue  # EINTR, ECONNREFUSED from an earlier send: never the end
            if self._stopping:
                break
            self.counters.add("received")
            msg = Message()
            try:
                msg.parse_bytes(data)
            except Exception:  # uecho raises ParserError, IndexError, ... for a bad frame
                kind = "dropped_format2" if data[:2] == b"\x10\x82" else "dropped_malformed"
                self.counters.add(kind)
                continue
            msg.from_addr = addr
            if self.classify is not None:
                self.counters.add(self.classify(msg))
            try:
                self.notify(msg)
            except Exception as e:  # a bug in the handler must not end the loop either
                print(f"uecho: handling {data.hex()}: {e!r}", file=sys.stderr, flush=True)

    def stop(self):
        self._stopping = True
        return super().stop()


class LabUnicastServer(_Loop, UnicastServer):
    pass


class LabMulticastServer(_Loop, MulticastServer):
    pass


def attach(
    node, manager, bind: str, ifaddr: str, port: int, counters: Counters, classify, multicast: bool
) -> None:
    """Bind uecho's servers for the lab's addresses into `manager` (the node's own Manager) and
    register `node` as their observer, as LocalNode.start() would; the threads start later
    (start()). Raises OSError when an address cannot be bound."""
    Server.PORT = port  # uecho's one port: where it binds, and where announcements go
    Node.PORT = port  # the port uecho's Controller sends to

    # uecho binds its unicast socket to the interface address; bound to 0.0.0.0 with no
    # interface named, that is 0.0.0.0.
    unicast_addr = bind if bind != ANY else ifaddr
    unicast = LabUnicastServer()
    servers = [unicast]
    if multicast and bind == ANY:
        servers.append(LabMulticastServer())
    try:
        for server in servers:
            server.port = port
            server.bind(unicast_addr if server is unicast else ifaddr)
        s = unicast.sock
        # Multicasts (the INF at start, discovery) leave on --ifaddr, one hop only.
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(ifaddr))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
        # A 0.0.0.0 socket would otherwise also get every group joined on the host: the
        # MulticastServer's requests twice.
        s.setsockopt(socket.IPPROTO_IP, IP_MULTICAST_ALL, 0)
    except OSError:
        for server in servers:
            if server.sock is not None:
                server.sock.close()
                server.sock = None  # so that uecho's Server.stop (run by __del__) does nothing
        raise
    for server in servers:
        server.counters = counters
        server.classify = classify
        server.daemon = True  # never keeps the process alive after main has answered SIGTERM
    manager.servers.extend(servers)
    manager.add_observer(node)
    node.set_address((manager.ifaddr, manager.port))


def start(manager) -> None:
    for server in manager.servers:
        server.start()


def address_taken(bind: str, port: int) -> bool:
    """uecho sets SO_REUSEADDR and SO_REUSEPORT on every socket, so a second uecho process binds
    the same address without error and shares its datagrams. SPEC §7 wants "address in use":
    a probe bind without either option finds any socket already there. (Other bind errors are
    left to uecho's own bind, which reports them.)"""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.bind((bind, port))
    except OSError as e:
        return e.errno == errno.EADDRINUSE
    finally:
        probe.close()
    return False
