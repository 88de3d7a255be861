"""The client side (the seed's Connector): a send queue drained by a send thread, a receive
thread filling a receive queue; post(), get(), close().

post() only queues. The send thread takes everything queued so far (up to MAX_BATCH
messages) and writes it with one sendmsg(2): a header and a body iovec per message, so a
message is never split over two system calls and a burst costs one. The body is referenced,
not copied. The receive thread reads 256 KiB at a time and decodes the frames in place
(FrameDecoder). The session ends when the server sends END or closes after a whole frame;
get() then returns None. Any failure (reset, EOF inside a frame, a length above the cap) is
kept and raised by get() once the replies received before it have been taken.
"""

from __future__ import annotations

import socket
import threading
from collections import deque

from bounded_queue import BoundedQueue, Closed
from frame import DEFAULT_MAX_BODY, END, END_FRAME, HEADER, QUIT_FRAME, FrameDecoder, FrameError

SEND_DEPTH = 4096  # messages posted and not yet handed to the kernel
RECEIVE_DEPTH = 4096  # replies received and not yet taken by get()
MAX_BATCH = 500  # messages per sendmsg: two iovecs each, under IOV_MAX (1024)

_CLOSE = -1  # not a type byte: the send queue's end-of-session marker
_ENDED = object()  # the receive queue's end-of-session marker

SESSION_ENDS = ("end", "quit", "eof")


class ConnectorError(Exception):
    """The connection failed; the message says how."""


def send_all(sock: socket.socket, buffers: list) -> None:
    """Write every buffer, in order, with as few sendmsg(2) calls as the kernel allows."""
    left = sum(map(len, buffers))
    while True:
        sent = sock.sendmsg(buffers)
        left -= sent
        if left <= 0:
            return
        # Partly written (a signal, or a non-blocking socket): drop what went out.
        i = 0
        while sent >= len(buffers[i]):
            sent -= len(buffers[i])
            i += 1
        buffers = [memoryview(buffers[i])[sent:], *buffers[i + 1 :]]


class Connector:
    """One connection to a comm server, with the seed's two threads and two queues.

    post() may be called from any thread; get() is meant for one consumer thread. Bodies are
    bytes-like objects (bytes, bytearray or a memoryview of bytes) that must not change until
    they are sent; received bodies are bytes.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        max_body: int = DEFAULT_MAX_BODY,
        send_depth: int = SEND_DEPTH,
        receive_depth: int = RECEIVE_DEPTH,
        connect_timeout: float = 10.0,
    ) -> None:
        sock = socket.create_connection((host, port), timeout=connect_timeout)
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        self._max_body = max_body
        self._send_q = BoundedQueue(send_depth)
        self._recv_q = BoundedQueue(receive_depth)
        # get()'s side: the replies taken from the receive queue in one go, handed out one by
        # one (a queue operation per reply was a fifth of get()'s cost).
        self._taken: deque = deque()
        self._error: str | None = None
        self._error_lock = threading.Lock()
        self._ended = False
        self._closing = False
        self._sender = threading.Thread(target=self._send_loop, name="comm-send", daemon=True)
        self._receiver = threading.Thread(
            target=self._receive_loop, name="comm-receive", daemon=True
        )
        self._sender.start()
        self._receiver.start()

    # the API ---------------------------------------------------------------------------------

    def post(self, kind: int, body=b"") -> None:
        """Queue a message (blocks while SEND_DEPTH messages wait). Raises ConnectorError if
        the connection has failed or the session was closed."""
        if self._closing:
            raise ConnectorError("post() after close()")
        if not 0 <= kind <= 255:
            raise ValueError(f"type {kind} is not a byte")
        try:
            self._send_q.put((kind, body))
        except Closed:
            raise ConnectorError(self._error or "the connection is closed") from None

    def get(self, timeout: float | None = None) -> tuple[int, bytes] | None:
        """The next message from the server as (type, body); None once the session is over
        (the server's END, or end of file after a whole frame). Raises ConnectorError if the
        connection failed, TimeoutError if nothing came within `timeout` seconds."""
        taken = self._taken
        if taken:
            item = taken.popleft()
        else:
            if self._ended:
                return self._end_of_session()
            try:
                item = self._recv_q.get(timeout)
            except Exception:  # queue.Empty
                raise TimeoutError(f"no message within {timeout} s") from None
            taken.extend(self._recv_q.get_many(RECEIVE_DEPTH))
        if item is _ENDED:
            self._ended = True
            return self._end_of_session()
        return item

    def close(self, how: str = "end") -> None:
        """End the session once everything posted is sent: "end" sends END, "quit" QUIT,
        "eof" shuts down the writing side. Returns at once; replies still come through
        get(), then None."""
        if how not in SESSION_ENDS:
            raise ValueError(f"how must be one of {SESSION_ENDS}")
        if not self._closing:
            self._closing = True
            self._send_q.put_unbounded((_CLOSE, how))

    def abort(self, why: str = "aborted") -> None:
        """Stop now: both threads wake, get() raises ConnectorError(why)."""
        self._fail(why)

    def release(self, timeout: float = 5.0) -> None:
        """Wait for both threads (aborting if the session is still going) and close the socket."""
        if self._sender.is_alive() or self._receiver.is_alive():
            self.abort("released")
        self._sender.join(timeout)
        self._receiver.join(timeout)
        self._sock.close()

    def __enter__(self) -> Connector:
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    # internals -------------------------------------------------------------------------------

    def _end_of_session(self) -> None:
        if self._error is not None:
            raise ConnectorError(self._error)
        return None

    def _fail(self, why: str) -> None:
        with self._error_lock:
            if self._error is None:
                self._error = why
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in recv or send
        except OSError:
            pass
        self._send_q.close()
        self._send_q.put_unbounded((_CLOSE, None))  # wakes the send thread if it is idle

    def _send_loop(self) -> None:
        q, sock, pack = self._send_q, self._sock, HEADER.pack
        try:
            while True:
                items = [q.get()]
                items += q.get_many(MAX_BATCH - 1)
                iov = []
                how = None
                for kind, body in items:
                    if kind == _CLOSE:
                        how = body or "abort"
                        break
                    iov.append(pack(kind, len(body)))
                    if body:
                        iov.append(body)
                if self._error is not None:
                    return
                if how == "end":
                    iov.append(END_FRAME)
                elif how == "quit":
                    iov.append(QUIT_FRAME)
                if iov:
                    send_all(sock, iov)
                if how == "eof":
                    sock.shutdown(socket.SHUT_WR)
                if how is not None:
                    return
        except OSError as e:
            self._fail(f"send: {e.strerror or e}")
        finally:
            self._send_q.close()  # post() raises from now on

    def _receive_loop(self) -> None:
        decoder = FrameDecoder(self._max_body)
        recv_into, put_many = self._sock.recv_into, self._recv_q.put_many
        try:
            while True:
                n = recv_into(decoder.writable())
                if not n:
                    if not decoder.at_boundary:
                        raise FrameError("the server closed the connection inside a frame")
                    return
                try:
                    messages, fault = decoder.commit(n), None
                except FrameError as e:
                    messages, fault = e.frames, e
                end = None
                for i, message in enumerate(messages):
                    if message[0] == END:
                        end = i
                        break
                if end is not None:  # the server's END: whatever follows it is not read
                    if end:
                        put_many(messages[:end])
                    return
                if messages:
                    put_many(messages)
                if fault is not None:
                    raise fault
        except Closed:
            pass  # nobody takes replies any more
        except FrameError as e:
            self._fail(str(e))
        except OSError as e:
            self._fail(f"receive: {e.strerror or e}")
        finally:
            self._recv_q.put_unbounded(_ENDED)
