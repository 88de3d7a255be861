"""The server: the state every connection shares (the keyspace, the clients, the counters) and
the active expire cycle. main.py listens and hands each accepted socket to `new_client`."""

from __future__ import annotations

import asyncio
import time

from commands import COMMANDS
from commands.keys import ScanCursors
from connection import Client
from store import Store

EXPIRE_PERIOD_S = 0.1  # redis's hz 10
EXPIRE_BUDGET = 20_000  # keys deleted per cycle at most, so a cycle stays short


class Server:
    """State shared by all connections: the keyspace, the clients, counters."""

    def __init__(self, port: int, max_clients: int = 10000, host: str = "127.0.0.1") -> None:
        self.port = port
        self.host = host  # the listening address, for CLIENT LIST's laddr
        self.max_clients = max_clients
        self.store = Store()
        self.commands = COMMANDS
        self.scans = ScanCursors()
        self.clients: dict[int, Client] = {}
        self.started = time.time()
        self.connections_received = 0
        self.commands_processed = 0
        self.expired_keys = 0
        self._next_id = 1
        self._expire_handle: asyncio.TimerHandle | None = None

    def new_client(self) -> Client:
        """The protocol factory for loop.create_server."""
        return Client(self)

    def register(self, client: Client) -> int:
        client_id = self._next_id
        self._next_id += 1
        self.clients[client_id] = client
        self.connections_received += 1
        return client_id

    def start_expiry(self, loop: asyncio.AbstractEventLoop) -> None:
        """The active expire cycle: delete keys whose deadline passed, ten times a second."""

        def cycle() -> None:
            self.expired_keys += self.store.expire_cycle(EXPIRE_BUDGET)
            self._expire_handle = loop.call_later(EXPIRE_PERIOD_S, cycle)

        self._expire_handle = loop.call_later(EXPIRE_PERIOD_S, cycle)

    def close_all(self) -> None:
        if self._expire_handle is not None:
            self._expire_handle.cancel()
        for client in list(self.clients.values()):
            client.abort()
