"""Connections: one asyncio Protocol per client, on one event loop (uvloop).

Why a Protocol and not streams: `data_received` hands over each read as one bytes object, and
everything it holds is parsed and executed in one go, the replies gathered into a list and
written with a single `transport.write` (one send() on loopback). Streams would add a task
switch, a buffer copy and an await per request.

The loop keeps redis's promises:

* Fairness: a read may hold thousands of pipelined requests. At most REQUESTS_PER_TURN are
  run per loop turn; then the client stops being read and is resumed by `call_soon`, after
  the other ready clients have had their turn (as redis caps the work per client per event).
* Output cap: a client that sends requests but never reads its replies is disconnected once
  more than OUTPUT_LIMIT bytes are waiting for it (redis: client-output-buffer-limit normal
  64mb), counting the batch being built, so no single client can pile up memory. Others go on.
* Protocol errors: the requests before the bad bytes are answered, then the error, then the
  connection is closed once the replies are flushed.
"""

from __future__ import annotations

import asyncio
import socket
import time
from typing import TYPE_CHECKING

from commands import (
    DISPATCH,
    CloseAfterReply,
    CommandError,
    StartTransaction,
    resolve,
)
from protocol import NULL3, NULL_ARRAY, NULL_BULK, OK, RequestParser

if TYPE_CHECKING:
    from server import Server

QUEUED = b"+QUEUED\r\n"
REQUESTS_PER_TURN = 4096  # also bounds the lines the fast parser walks per turn
OUTPUT_LIMIT = 64 * 1024 * 1024


class Client(asyncio.Protocol):
    """One connection: its parser, its selected database, its name."""

    __slots__ = (
        "server",
        "db",
        "id",
        "name",
        "resp",
        "null",
        "null_array",
        "queued",
        "queue_failed",
        "transport",
        "parser",
        "addr",
        "created",
        "_closing",
        "_paused",
        "_loop",
    )

    def __init__(self, server: Server) -> None:
        self.server = server
        self.db = server.store.dbs[0]
        self.id = 0
        self.name: bytes | None = None
        self.resp = 2  # protocol version, 3 after HELLO 3
        self.null = NULL_BULK  # the null reply of this protocol version
        self.null_array = NULL_ARRAY
        self.queued: list | None = None  # requests of an open MULTI, else None
        self.queue_failed = False  # a request was refused while queueing: EXEC aborts
        self.transport: asyncio.Transport | None = None
        self.parser = RequestParser()
        self.addr = b"?"
        self.created = time.time()
        self._closing = False
        self._paused = False
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- asyncio callbacks -----------------------------------------------------------------

    def connection_made(self, transport) -> None:
        self.transport = transport
        self._loop = asyncio.get_running_loop()
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        peer = transport.get_extra_info("peername")
        if peer:
            self.addr = b"%s:%d" % (peer[0].encode(), peer[1])
        self.id = self.server.register(self)

    def connection_lost(self, exc) -> None:
        self._closing = True
        self.server.clients.pop(self.id, None)

    def data_received(self, data: bytes) -> None:
        if self._closing:
            return
        self._serve(self.parser.feed(data, REQUESTS_PER_TURN))

    # --- serving ---------------------------------------------------------------------------

    def _serve(self, requests: list[list[bytes]]) -> None:
        """Run a batch, write its replies, then deal with what the parser has left."""
        transport = self.transport
        if requests:
            self.server.commands_processed += len(requests)
            budget = OUTPUT_LIMIT - transport.get_write_buffer_size()
            replies = self._execute(requests, budget)
            if replies is None:  # over the output cap
                self.abort()
                return
            transport.write(b"".join(replies))
            if self._closing:  # QUIT
                transport.close()
                return
            if transport.get_write_buffer_size() > OUTPUT_LIMIT:
                self.abort()
                return
        parser = self.parser
        if parser.error is not None:
            self._closing = True
            transport.write(parser.error.reply)
            transport.close()
        elif parser.ready:
            # More requests are buffered: let the other clients run first.
            if not self._paused:
                self._paused = True
                transport.pause_reading()
            self._loop.call_soon(self._continue)
        elif self._paused:
            self._paused = False
            transport.resume_reading()

    def _continue(self) -> None:
        if not self._closing:
            self._serve(self.parser.feed(b"", REQUESTS_PER_TURN))

    def _execute(self, requests: list[list[bytes]], budget: int) -> list[bytes] | None:
        """Run each request; the list of replies, or None once they exceed `budget` bytes."""
        if self.queued is not None:
            return self._queue(requests, budget)
        replies: list[bytes] = []
        append = replies.append
        dispatch = DISPATCH
        widest = len(dispatch) - 1
        size = 0
        for argv in requests:
            n = len(argv)
            handler = dispatch[n if n <= widest else 0].get(argv[0])
            if handler is None:
                handler = resolve(argv)
                if type(handler) is bytes:  # unknown command or wrong arity: the error
                    append(handler)
                    continue
            try:
                reply = handler(self, argv)
            except CommandError as e:
                reply = e.reply
            except CloseAfterReply as e:
                append(e.reply)
                self._closing = True
                break
            except StartTransaction:
                # MULTI: every request before it has one reply, so the rest starts there.
                rest = requests[len(replies) + 1 :]
                self.queued = []
                self.queue_failed = False
                append(OK)
                more = self._queue(rest, budget - size - len(OK))
                if more is None:
                    return None
                replies += more
                break
            size += len(reply)
            if size > budget:
                return None
            append(reply)
        return replies

    def _queue(self, requests: list[list[bytes]], budget: int) -> list[bytes] | None:
        """Inside MULTI (redis's processCommand with CLIENT_MULTI): refuse unknown commands
        and arity errors at once (EXEC will abort), queue the rest, run them on EXEC."""
        replies: list[bytes] = []
        size = 0
        for index, argv in enumerate(requests):
            if self.queued is None:  # EXEC or DISCARD ended it: back to normal
                more = self._execute(requests[index:], budget - size)
                if more is None:
                    return None
                return replies + more
            name = argv[0].lower()
            if name == b"exec" and len(argv) == 1:
                reply = self._exec(budget - size)
                if reply is None:
                    return None
            elif name == b"discard" and len(argv) == 1:
                self.queued = None
                reply = OK
            elif name == b"multi" and len(argv) == 1:
                reply = b"-ERR MULTI calls can not be nested\r\n"
            elif name == b"quit":
                replies.append(OK)
                self._closing = True
                break
            else:
                handler = resolve(argv)
                if type(handler) is bytes:
                    self.queue_failed = True
                    reply = handler
                    if name == b"exec":  # EXEC with arguments: the transaction is discarded
                        self.queued = None
                else:
                    self.queued.append(argv)
                    reply = QUEUED
            size += len(reply)
            if size > budget:
                return None
            replies.append(reply)
        return replies

    def _exec(self, budget: int) -> bytes | None:
        queued, failed = self.queued, self.queue_failed
        self.queued = None
        if failed:
            return b"-EXECABORT Transaction discarded because of previous errors.\r\n"
        replies = self._execute(queued, budget)
        if replies is None:
            return None
        return b"*%d\r\n%s" % (len(replies), b"".join(replies))

    def set_protocol(self, version: int) -> None:
        self.resp = version
        self.null = NULL3 if version == 3 else NULL_BULK
        self.null_array = NULL3 if version == 3 else NULL_ARRAY

    def abort(self) -> None:
        self._closing = True
        if self.transport is not None:
            self.transport.abort()

    def describe(self) -> bytes:
        """A CLIENT LIST line."""
        age = int(time.time() - self.created)
        return (
            b"id=%d addr=%s laddr=%s:%d fd=-1 name=%s age=%d idle=0 flags=N db=%d "
            % (
                self.id,
                self.addr,
                self.server.host.encode(),
                self.server.port,
                self.name or b"",
                age,
                self.db.index,
            )
            + b"sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 "
            + (
                b"rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=client|list user=default "
                b"redir=-1 resp=%d" % self.resp
            )
        )
