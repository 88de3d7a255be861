"""A DevTools protocol client over `--remote-debugging-pipe`: no WebSocket, no third-party code.

Chromium reads commands on its fd 3 and writes responses and events on its fd 4; every message
is one JSON object followed by a NUL byte. Both ends are non-blocking here and every wait goes
through select() with a deadline, so a browser that hangs or dies shows up as an exception
within the caller's timeout, never as a hung driver. While a command is being written, what the
browser writes is read too: neither side can fill its pipe and wait for the other.
"""

from __future__ import annotations

import collections
import json
import os
import select
import time
from collections.abc import Callable

from .deadline import Timeout

_READ_CHUNK = 1 << 20
#: Events kept for wait_event(); older ones are dropped (nothing here enables a chatty domain).
_EVENTS_KEPT = 1000


class CdpError(Exception):
    """The browser answered a command with an error, or cannot answer any more."""


class BrowserGone(CdpError):
    """The pipe closed: the browser exited or crashed."""


class CdpClient:
    def __init__(self, read_fd: int, write_fd: int):
        self._rfd = read_fd
        self._wfd = write_fd
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        self._buf = bytearray()
        self._next_id = 1
        self._responses: dict[int, dict] = {}
        self._waiting: set[int] = set()
        self._events: collections.deque[dict] = collections.deque(maxlen=_EVENTS_KEPT)
        # sessionId -> why it ended (target crashed or detached): calls on it fail at once.
        self._ended: dict[str, str] = {}
        self._eof = False

    def close(self) -> None:
        for fd in (self._rfd, self._wfd):
            try:
                os.close(fd)
            except OSError:
                pass

    # -- commands ------------------------------------------------------------------------

    def call(
        self, method: str, params: dict | None = None, *, session: str | None = None, timeout: float
    ) -> dict:
        """Send one command and return its `result`; raise CdpError on an error response,
        Timeout when no response arrives within `timeout` seconds."""
        end = time.monotonic() + timeout
        msg_id = self._next_id
        self._next_id += 1
        message: dict = {"id": msg_id, "method": method, "params": params or {}}
        if session is not None:
            if session in self._ended:
                raise CdpError(f"{method}: {self._ended[session]}")
            message["sessionId"] = session
        self._waiting.add(msg_id)
        try:
            self._write(json.dumps(message).encode() + b"\0", end, method)
            while msg_id not in self._responses:
                if session is not None and session in self._ended:
                    raise CdpError(f"{method}: {self._ended[session]}")
                self._pump(end, f"waiting for the response to {method}")
            response = self._responses.pop(msg_id)
        finally:
            self._waiting.discard(msg_id)
        if "error" in response:
            err = response["error"]
            raise CdpError(f"{method}: {err.get('message', err)} {err.get('data', '')}".strip())
        return response.get("result", {})

    def wait_event(
        self, method: str, predicate: Callable[[dict], bool] | None = None, *, timeout: float
    ) -> dict:
        """The first event `method` (already received or still to come) whose params match."""
        end = time.monotonic() + timeout
        while True:
            for event in list(self._events):
                if event.get("method") == method and (
                    predicate is None or predicate(event.get("params", {}))
                ):
                    self._events.remove(event)
                    return event
            self._pump(end, f"waiting for the event {method}")

    # -- the pipe ------------------------------------------------------------------------

    def _write(self, data: bytes, end: float, what: str) -> None:
        view = memoryview(data)
        while view:
            if self._eof:
                raise BrowserGone(f"{what}: the browser closed the DevTools pipe")
            left = end - time.monotonic()
            if left <= 0:
                raise Timeout(f"writing {what} to the browser")
            readable, writable, _ = select.select([self._rfd], [self._wfd], [], left)
            if readable:
                self._read_available()
            if writable:
                try:
                    n = os.write(self._wfd, view)
                except BlockingIOError:
                    continue
                except BrokenPipeError:
                    self._eof = True
                    continue
                view = view[n:]

    def _pump(self, end: float, what: str) -> None:
        """Wait (at most until `end`) for more bytes and dispatch every complete message."""
        if self._eof:
            raise BrowserGone(f"{what}: the browser closed the DevTools pipe")
        left = end - time.monotonic()
        if left <= 0:
            raise Timeout(what)
        readable, _, _ = select.select([self._rfd], [], [], left)
        if readable:
            self._read_available()

    def _read_available(self) -> None:
        while True:
            try:
                chunk = os.read(self._rfd, _READ_CHUNK)
            except BlockingIOError:
                break
            if not chunk:
                self._eof = True
                break
            self._buf += chunk
        while (nul := self._buf.find(b"\0")) >= 0:
            raw = bytes(self._buf[:nul])
            del self._buf[: nul + 1]
            self._dispatch(json.loads(raw))

    def _dispatch(self, message: dict) -> None:
        if "id" in message:
            if message["id"] in self._waiting:  # late answers to timed-out calls are dropped
                self._responses[message["id"]] = message
            return
        method = message.get("method", "")
        params = message.get("params", {})
        if method == "Inspector.targetCrashed" and "sessionId" in message:
            self._ended[message["sessionId"]] = "the page crashed"
        elif method == "Target.detachedFromTarget" and "sessionId" in params:
            self._ended.setdefault(params["sessionId"], "the page was closed (target detached)")
        self._events.append(message)
