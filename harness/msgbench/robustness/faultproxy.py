"""The soak's user-space fault proxy: what this kernel's missing netem would do, and more.

    python -m msgbench.robustness.faultproxy tcp --upstream ADDR:PORT --log FILE --seed S
    python -m msgbench.robustness.faultproxy udp --upstream ADDR:PORT --log FILE --seed S

It listens on 127.0.0.1 (of the namespace it runs in: the soak's client host), prints
`READY <port>` on stdout, and forwards to the server, injecting faults:

- **tcp**: each chunk read in either direction is held for a random delay (order kept: TCP is a
  stream), **re-chunked** — split at random byte boundaries into separate writes, or coalesced
  with what follows within a few milliseconds — and each connection is **reset** at a random
  moment (exponential lifetime): a random prefix of the chunk in hand is forwarded, then both
  sides get an RST (SO_LINGER 0). A FIN from either side is passed on as a FIN after the data
  before it; an RST from the server is passed to the client as a FIN (so the client can tell
  the proxy's resets, the only RSTs it ever sees, from the server's closes).
- **udp**: each datagram, either way, is delayed at random (so datagrams are **reordered**) and
  sometimes **duplicated**; each client address has its own upstream socket. The proxy holds a
  datagram at most `--max-delay` and records how late its timer fired (its own lag).

Every reset is logged as one JSON line (`{"reset": client_port, ...}`) before it happens, so
that the soak can check that every reset a client saw was one of the proxy's. On SIGTERM the
proxy writes its counters (`{"summary": ...}`) and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import struct
import time

TCP_MEAN_LIFE_S = 4.0  # mean connection lifetime before the proxy resets it
TCP_DELAY_P = 0.25  # share of chunks held before they are written
TCP_MAX_DELAY_S = 0.02
TCP_COALESCE_P = 0.3  # share of reads that wait for more before writing
TCP_COALESCE_S = 0.003
UDP_DELAY_P = 0.5
UDP_MAX_DELAY_S = 0.03
UDP_DUP_P = 0.05


class Log:
    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write(self, **rec) -> None:
        os.write(self.fd, (json.dumps(rec) + "\n").encode())


def _rst(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()


class TcpProxy:
    def __init__(self, upstream: tuple[str, int], log: Log, rng: random.Random,
                 mean_life: float) -> None:  # fmt: skip
        self.upstream = upstream
        self.log = log
        self.rng = rng
        self.mean_life = mean_life
        self.stats = {"connections": 0, "connect_failures": 0, "resets": 0, "bytes_c2s": 0,
                      "bytes_s2c": 0, "writes": 0, "delays": 0, "coalesced": 0,
                      "server_resets": 0}  # fmt: skip

    async def handle(self, cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        self.stats["connections"] += 1
        port = cw.get_extra_info("peername")[1]
        try:
            ur, uw = await asyncio.open_connection(*self.upstream)
        except OSError as e:
            self.stats["connect_failures"] += 1
            self.log.write(connect_failed=port, error=str(e), t=time.monotonic())
            cw.close()
            return
        for w in (cw, uw):
            s = w.get_extra_info("socket")
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = {"deadline": time.monotonic() + self.rng.expovariate(1 / self.mean_life),
                "reset": False, "port": port, "cw": cw, "uw": uw}  # fmt: skip
        await asyncio.gather(
            self.pump(cr, uw, conn, "bytes_c2s", from_client=True),
            self.pump(ur, cw, conn, "bytes_s2c", from_client=False),
        )
        for w in (cw, uw):
            if not w.transport.is_closing():
                w.close()

    def reset(self, conn: dict, why: str) -> None:
        if conn["reset"]:
            return
        conn["reset"] = True
        self.stats["resets"] += 1
        self.log.write(reset=conn["port"], why=why, t=time.monotonic())
        _rst(conn["cw"])
        _rst(conn["uw"])

    async def pump(self, reader, writer, conn: dict, counter: str, from_client: bool) -> None:
        rng = self.rng
        while not conn["reset"]:
            try:
                data = await reader.read(65536)
            except (ConnectionError, OSError):
                if conn["reset"]:
                    return
                # The client vanished (a killed worker): reset the server's side as a dead
                # client would. The server reset: close the client's side with a FIN.
                if from_client:
                    _rst(conn["uw"])
                else:
                    self.stats["server_resets"] += 1
                    self.log.write(server_reset=conn["port"], t=time.monotonic())
                    conn["cw"].close()
                return
            if conn["reset"]:
                return
            if not data:
                try:
                    await writer.drain()
                    if writer.can_write_eof():
                        writer.write_eof()
                except (ConnectionError, OSError):
                    pass
                return
            if rng.random() < TCP_COALESCE_P:
                try:
                    more = await asyncio.wait_for(reader.read(65536), TCP_COALESCE_S)
                except (TimeoutError, ConnectionError, OSError):
                    more = b""
                if more:
                    self.stats["coalesced"] += 1
                    data += more
                # An EOF or error seen here is seen again by the next read.
            if time.monotonic() >= conn["deadline"]:
                cut = rng.randrange(len(data))
                if cut:
                    writer.write(data[:cut])
                self.reset(conn, "fault")
                return
            self.stats[counter] += len(data)
            for piece in self._split(data):
                if rng.random() < TCP_DELAY_P:
                    self.stats["delays"] += 1
                    await asyncio.sleep(rng.uniform(0, TCP_MAX_DELAY_S))
                    if conn["reset"]:
                        return
                try:
                    writer.write(piece)
                    self.stats["writes"] += 1
                    await writer.drain()
                except (ConnectionError, OSError):
                    return

    def _split(self, data: bytes) -> list[bytes]:
        n = self.rng.choice((1, 1, 1, 2, 3, 5, 9))
        if n == 1 or len(data) < 2:
            return [data]
        cuts = sorted(self.rng.sample(range(1, len(data)), min(n - 1, len(data) - 1)))
        return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


class UdpProxy:
    """Client datagrams arrive on one socket; each client address gets an upstream socket of
    its own (so replies find their way back)."""

    def __init__(self, loop, upstream: tuple[str, int], log: Log, rng: random.Random) -> None:
        self.loop = loop
        self.upstream = upstream
        self.log = log
        self.rng = rng
        self.front: asyncio.DatagramTransport | None = None
        self.ups: dict[tuple, asyncio.DatagramTransport] = {}
        self.stats = {"datagrams_c2s": 0, "datagrams_s2c": 0, "delayed": 0, "duplicated": 0,
                      "max_late_ms": 0.0}  # fmt: skip

    def schedule(self, send, data: bytes) -> None:
        copies = 2 if self.rng.random() < UDP_DUP_P else 1
        self.stats["duplicated"] += copies - 1
        for _ in range(copies):
            if self.rng.random() < UDP_DELAY_P:
                self.stats["delayed"] += 1
                delay = self.rng.uniform(0, UDP_MAX_DELAY_S)
                due = self.loop.time() + delay
                self.loop.call_later(delay, self._fire, send, data, due)
            else:
                send(data)

    def _fire(self, send, data: bytes, due: float) -> None:
        late = (self.loop.time() - due) * 1e3
        if late > self.stats["max_late_ms"]:
            self.stats["max_late_ms"] = round(late, 3)
        send(data)

    async def upstream_for(self, client: tuple) -> asyncio.DatagramTransport:
        if client in self.ups:
            return self.ups[client]
        proxy = self

        class Up(asyncio.DatagramProtocol):
            def datagram_received(self, data, addr):
                proxy.stats["datagrams_s2c"] += 1
                proxy.schedule(lambda d: proxy.front.sendto(d, client), data)

            def error_received(self, exc):
                pass

        transport, _ = await self.loop.create_datagram_endpoint(Up, remote_addr=self.upstream)
        self.ups[client] = transport
        return transport

    def from_client(self, data: bytes, client: tuple) -> None:
        self.stats["datagrams_c2s"] += 1

        async def go() -> None:
            up = await self.upstream_for(client)
            self.schedule(lambda d: up.sendto(d), data)

        self.loop.create_task(go())


async def main_async(args) -> None:
    loop = asyncio.get_running_loop()
    log = Log(args.log)
    rng = random.Random(args.seed)
    host, port = args.upstream.rsplit(":", 1)
    upstream = (host, int(port))
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if args.kind == "tcp":
        proxy = TcpProxy(upstream, log, rng, args.mean_life)
        server = await asyncio.start_server(proxy.handle, "127.0.0.1", 0, backlog=1024)
        listen_port = server.sockets[0].getsockname()[1]
    else:
        proxy = UdpProxy(loop, upstream, log, rng)

        class Front(asyncio.DatagramProtocol):
            def datagram_received(self, data, addr):
                proxy.from_client(data, addr)

            def error_received(self, exc):
                pass

        proxy.front, _ = await loop.create_datagram_endpoint(Front, local_addr=("127.0.0.1", 0))
        listen_port = proxy.front.get_extra_info("sockname")[1]
    print(f"READY {listen_port}", flush=True)
    await stop.wait()
    log.write(summary=proxy.stats)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kind", choices=["tcp", "udp"])
    p.add_argument("--upstream", required=True, help="ADDR:PORT of the server")
    p.add_argument("--log", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--mean-life", type=float, default=TCP_MEAN_LIFE_S,
                   help="mean seconds before a connection is reset")  # fmt: skip
    args = p.parse_args()
    asyncio.run(main_async(args))
    os._exit(0)  # connections still open are not waited for


if __name__ == "__main__":
    main()
