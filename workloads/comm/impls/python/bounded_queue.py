"""A FIFO between threads with a soft bound: the Connector's send and receive queues.

queue.Queue does its locking in Python (a Condition per put and get: about 2 µs per message
here), which at 100,000 messages a second would be a large share of the client's time.
queue.SimpleQueue does it in C (about 0.1 µs) but has no bound. This wraps a SimpleQueue and
adds the bound on the slow path only: a producer that finds the queue full waits on a
Condition, and a consumer takes that lock only when a producer is waiting.

The bound is soft (several producers may overshoot it by one each), which is all it is for:
keeping a fast producer from queueing without limit ahead of a slow consumer.
"""

from __future__ import annotations

import queue
import threading

Empty = queue.Empty


class Closed(Exception):
    """put() on a queue whose consumer has gone away."""


class BoundedQueue:
    __slots__ = ("_items", "_limit", "_room", "_waiting", "_closed")

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self._items: queue.SimpleQueue = queue.SimpleQueue()
        self._limit = limit
        self._room = threading.Condition(threading.Lock())
        self._waiting = 0  # producers blocked in put()
        self._closed = False

    def put(self, item: object) -> None:
        """Append; blocks while the queue holds `limit` items. Raises Closed after close()."""
        if self._items.qsize() >= self._limit or self._closed:
            with self._room:
                self._waiting += 1
                try:
                    while self._items.qsize() >= self._limit and not self._closed:
                        self._room.wait()
                finally:
                    self._waiting -= 1
                if self._closed:
                    raise Closed
        self._items.put(item)

    def put_many(self, items: list) -> None:
        """Append every item, in order; blocks while the queue is full, checked once for all
        of them (so it may overshoot the bound by len(items) - 1). Raises Closed after close().

        One call for a read's worth of replies: a Python-level put() per message was a tenth
        of the receive thread's interpreter time.
        """
        if not items:
            return
        if self._items.qsize() >= self._limit or self._closed:
            self.put(items[0])
            items = items[1:]
        put = self._items.put
        for item in items:
            put(item)

    def put_unbounded(self, item: object) -> None:
        """Append even if full (end-of-stream markers, which must never block)."""
        self._items.put(item)

    def get(self, timeout: float | None = None) -> object:
        """The oldest item; blocks until there is one. Raises Empty after `timeout` seconds."""
        item = self._items.get(timeout=timeout)
        # Read after the get: a producer counted in _waiting re-checks the size under the lock,
        # so either it sees this get's room or this sees it waiting and wakes it.
        if self._waiting:
            with self._room:
                self._room.notify()
        return item

    def get_many(self, limit: int) -> list:
        """Up to `limit` items that are already queued, without blocking."""
        n = min(self._items.qsize(), limit)
        get = self._items.get_nowait
        items = [get() for _ in range(n)]
        if self._waiting and items:
            with self._room:
                self._room.notify_all()
        return items

    def qsize(self) -> int:
        return self._items.qsize()

    def close(self) -> None:
        """The consumer is gone: blocked and future put() calls raise Closed."""
        with self._room:
            self._closed = True
            self._room.notify_all()
