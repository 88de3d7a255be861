"""The listener and its worker pool (the seed's Listener + thread pool).

The listener runs on the main thread's event loop: it accepts every pending connection when
the listening socket is readable and hands each to the pool worker with the fewest open
connections. A worker is a thread running its own asyncio event loop, which serves every
connection handed to it at once (an EchoHandler each), so no client waits for another's session
to end, unlike the seed's pool, which binds a thread to one whole session.

Under the GIL only one thread runs Python at a time: what the pool overlaps is the time spent
inside recv/send system calls (the GIL is released there), which matters when the server has
more than one CPU and bodies are large. Pinned to one CPU (as the driver runs it), Test4 with
--pool 8 and with --pool 1 measured the same within this machine's noise (medians of 5-9
trials: 8 ahead in three sessions, 1 ahead in one) for 0-15% more CPU per message with 8; so
the default stays the contract's 8. --pool 1 is a single event loop.

Shutdown: stop accepting, ask every worker to close its connections (replies already written
are flushed), abort whatever is still open after a grace period, stop the loops.
"""

from __future__ import annotations

import asyncio
import errno
import socket
import threading
import time
from collections.abc import Callable

from handler import EchoHandler, ReadBuffer

HOST = "127.0.0.1"  # the default address (--host)
BACKLOG = 4096  # the kernel caps it at net.core.somaxconn
ACCEPTS_PER_WAKEUP = 256  # a burst of connections is drained, within reason, per readiness
RETRY_ACCEPT_S = 0.1  # after EMFILE/ENFILE/ENOBUFS: pause accepting instead of spinning


class Worker:
    """One pool thread: an asyncio event loop serving the connections it is given."""

    def __init__(self, index: int, max_body: int, log: Callable[[str], None]) -> None:
        self.max_body = max_body
        self.log = log
        self.read_buffer = ReadBuffer()
        self.loop = asyncio.new_event_loop()
        self._handlers: set[EchoHandler] = set()
        # Load = assigned - closed, each counter written by one thread only (the listener's
        # and this worker's), so reading them from the listener needs no lock.
        self.assigned = 0
        self.closed = 0
        self._stopping = False
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"comm-worker-{index}", daemon=True)

    @property
    def load(self) -> int:
        return self.assigned - self.closed

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self._stopped.set()

    # called from the listener thread ---------------------------------------------------------

    def adopt(self, sock: socket.socket) -> None:
        """Serve an accepted (non-blocking) socket on this worker's loop."""
        self.assigned += 1
        self.loop.call_soon_threadsafe(self._connect, sock)

    def stop(self, grace_s: float) -> None:
        """Close every connection (flushing), abort the rest after grace_s, stop the loop."""
        self.loop.call_soon_threadsafe(self._begin_stop, grace_s)

    def join(self, timeout: float) -> bool:
        return self._stopped.wait(timeout)

    # on the worker's own loop ----------------------------------------------------------------

    def _connect(self, sock: socket.socket) -> None:
        if self._stopping:
            sock.close()
            self.closed += 1
            return
        task = self.loop.create_task(
            self.loop.connect_accepted_socket(lambda: EchoHandler(self), sock)
        )
        task.add_done_callback(lambda t: self._connected(t, sock))

    def _connected(self, task: asyncio.Task, sock: socket.socket) -> None:
        if not task.cancelled() and task.exception() is None:
            return
        # The transport was never made (the peer vanished first): session_closed will not run.
        sock.close()
        self.closed += 1

    def call_later(self, seconds: float, callback: Callable[[], object]) -> asyncio.TimerHandle:
        return self.loop.call_later(seconds, callback)

    def session_opened(self, handler: EchoHandler) -> None:
        self._handlers.add(handler)

    def session_closed(self, handler: EchoHandler) -> None:
        self._handlers.discard(handler)
        self.closed += 1
        if self._stopping and not self._handlers:
            self.loop.stop()

    def _begin_stop(self, grace_s: float) -> None:
        self._stopping = True
        if not self._handlers:
            self.loop.stop()
            return
        for h in list(self._handlers):
            h.close()
        self.loop.call_later(grace_s, self._abort_all)

    def _abort_all(self) -> None:
        for h in list(self._handlers):
            h.abort()
        self.loop.call_soon(self.loop.stop)


def listening_socket(port: int, host: str = HOST) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


class Listener:
    """Accepts on host:port (host an IPv4 address) and spreads connections over `pool` workers."""

    def __init__(
        self,
        port: int,
        pool: int,
        max_body: int,
        log: Callable[[str], None],
        host: str = HOST,
    ) -> None:
        self._log = log
        self._sock = listening_socket(port, host)  # raises OSError if the port is taken
        self._workers = [Worker(i, max_body, log) for i in range(pool)]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._accepting = False

    @property
    def port(self) -> int:
        return self._sock.getsockname()[1]

    async def serve(self, stop: asyncio.Future) -> None:
        """Accept until `stop` is done, then shut the pool down (within about a second)."""
        self._loop = asyncio.get_running_loop()
        for w in self._workers:
            w.start()
        self._accepting = True
        self._loop.add_reader(self._sock.fileno(), self._accept_ready)
        try:
            await stop
        finally:
            self._accepting = False
            self._loop.remove_reader(self._sock.fileno())
            self._sock.close()
            self._stop_pool()

    def _accept_ready(self) -> None:
        for _ in range(ACCEPTS_PER_WAKEUP):
            try:
                conn, _ = self._sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    self._log(f"accept: {e.strerror}; pausing for {RETRY_ACCEPT_S} s")
                    self._pause_accepting()
                # ECONNABORTED and the like concern one connection only.
                return
            conn.setblocking(False)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            min(self._workers, key=_load).adopt(conn)

    def _pause_accepting(self) -> None:
        self._loop.remove_reader(self._sock.fileno())
        self._loop.call_later(RETRY_ACCEPT_S, self._resume_accepting)

    def _resume_accepting(self) -> None:
        if self._accepting:
            self._loop.add_reader(self._sock.fileno(), self._accept_ready)

    def _stop_pool(self, grace_s: float = 0.8, wait_s: float = 1.0) -> None:
        """Blocks the listener's loop for at most wait_s: nothing else runs on it by then."""
        for w in self._workers:
            w.stop(grace_s)
        deadline = time.monotonic() + wait_s
        for w in self._workers:
            w.join(max(0.0, deadline - time.monotonic()))


def _load(worker: Worker) -> int:
    return worker.load
