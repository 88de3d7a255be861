"""The per-connection echo session (SPEC §2), as an asyncio buffered protocol.

Every message comes back with type REPLY, in order. Because a reply differs from its request
only in the type byte, the handler echoes in place: each read lands in its worker's read
buffer, the type byte of every complete frame is overwritten with REPLY, and the whole run of
complete frames goes back with one transport.write. No body is copied in Python and a burst of
frames costs one read and one send. The asyncio transport copies into its own buffer whatever
the kernel does not take at once, so the read buffer is free again when write() returns.

The read buffer belongs to the worker (one event loop thread), not to the connection: reads
of one loop never overlap (get_buffer, recv_into and buffer_updated run as one callback), so
256 idle connections cost no buffers. A partial frame at the end of a read is kept by its
connection (`_carry`) and put back in front of the next read if it is small (up to
CARRY_MAX); a larger one is streamed instead: its header goes out as REPLY with the part of
the body at hand, and the rest is forwarded as it arrives, in the same write as the replies
that follow it. Carrying a large frame would copy it again on every read until it is whole.

Session rules: END or QUIT is answered, after every reply before it, by a header-only END;
then the server shuts down its sending side and drains: whatever the client still sends is
read and dropped until it closes. Closing with input unread would make the kernel answer
with a reset, which destroys replies still in flight to the client. End of file closes the
connection once the replies are flushed, whether or not it fell inside a frame (a partial
frame gets no reply). A length above the cap is logged and closes the connection (after the
replies already written) before anything is allocated for the body. Every way of closing is
bounded in time: a peer that never reads cannot hold a connection open.
"""

from __future__ import annotations

import asyncio
import mmap
import socket
import typing

from frame import END, END_FRAME, HEADER, HEADER_SIZE, QUIT, REPLY

# The worker's read buffer. Large reads amortise the loop's per-read cost: 1 MiB cut the
# server's CPU per message by a third for 64 KiB bodies and by a fifth for 1 MiB bodies
# against 256 KiB. It is an anonymous mapping, so only the pages reads have reached are
# resident (round trips of small messages touch one page).
READ_SIZE = 1 << 20
# A partial frame up to this size is carried to the next read; a larger one is streamed.
CARRY_MAX = 64 * 1024

# After END: drop at most this much input, for at most this long, waiting for the peer's close.
DRAIN_LIMIT = 16 << 20
DRAIN_TIMEOUT_S = 5.0
# A closing connection whose replies the peer does not read is aborted after this long.
CLOSE_TIMEOUT_S = 5.0

OPEN, DRAINING, CLOSING = 0, 1, 2

# Replies waiting in the transport (the client is not reading them): above HIGH_WATER the
# handler stops reading, so a client that never reads cannot make the server buffer without
# bound; reading resumes below LOW_WATER.
HIGH_WATER = 512 * 1024
LOW_WATER = 128 * 1024

_unpack_from = HEADER.unpack_from


class ReadBuffer:
    """One worker's read buffer, shared by the handlers of that worker."""

    __slots__ = ("buf", "view", "size", "carry_max")

    def __init__(self, size: int = READ_SIZE, carry_max: int = CARRY_MAX) -> None:
        if size < 2 * HEADER_SIZE or not HEADER_SIZE <= carry_max <= size:
            raise ValueError("read buffer too small")
        self.buf = mmap.mmap(-1, size)  # zero-filled on first touch, like bytearray(size)
        self.view = memoryview(self.buf)
        self.size = size
        self.carry_max = carry_max


class Home(typing.Protocol):
    """What a handler needs from the worker that runs it."""

    read_buffer: ReadBuffer
    max_body: int

    def session_opened(self, handler: EchoHandler) -> None: ...

    def session_closed(self, handler: EchoHandler) -> None: ...

    def log(self, line: str) -> None: ...

    def call_later(
        self, seconds: float, callback: typing.Callable[[], object]
    ) -> asyncio.Handle: ...


class EchoHandler(asyncio.BufferedProtocol):
    __slots__ = (
        "_home", "_transport", "_carry", "_end", "_stream_left", "_state", "_drained",
        "_timer", "_peer",
    )  # fmt: skip

    def __init__(self, home: Home) -> None:
        self._home = home
        self._transport: asyncio.Transport | None = None
        self._carry = b""  # the partial frame at the end of the previous read
        self._end = 0  # where the current read began in the read buffer (len of the carry)
        self._stream_left = 0  # body bytes of a streamed frame still to forward
        self._state = OPEN  # DRAINING after END or QUIT, CLOSING once close() was called
        self._drained = 0  # bytes dropped while DRAINING
        self._timer: asyncio.TimerHandle | None = None  # bounds DRAINING and CLOSING
        self._peer = "?"

    # asyncio callbacks -----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            # asyncio already sets it on TCP transports; the contract requires it, so say so.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        peer = transport.get_extra_info("peername")
        if peer:
            self._peer = f"{peer[0]}:{peer[1]}"
        transport.set_write_buffer_limits(high=HIGH_WATER, low=LOW_WATER)
        self._home.session_opened(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._state = CLOSING
        self._carry = b""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._home.session_closed(self)

    def pause_writing(self) -> None:
        if self._transport is not None:
            self._transport.pause_reading()

    def resume_writing(self) -> None:
        if self._transport is not None and self._state != CLOSING:
            self._transport.resume_reading()

    def eof_received(self) -> None:
        # The replies to every complete frame are already written; a partial frame gets none.
        # Returning a false value lets the transport close once its buffer is flushed.
        self._carry = b""
        self._state = CLOSING
        self._bound(CLOSE_TIMEOUT_S)
        return None

    def get_buffer(self, sizehint: int) -> memoryview:
        view = self._home.read_buffer.view
        carry = self._carry
        if carry and self._state == OPEN:
            n = len(carry)
            view[:n] = carry
            self._end = n
            return view[n:]
        self._end = 0
        return view

    def buffer_updated(self, nbytes: int) -> None:
        if self._state != OPEN:
            self._drop(nbytes)
            return
        rb = self._home.read_buffer
        buf, view = rb.buf, rb.view
        end = self._end + nbytes
        p = 0
        if self._stream_left:
            # The read begins with the body of a streamed frame: it goes out as it is.
            p = min(end, self._stream_left)
            self._stream_left -= p
        max_body = self._home.max_body
        while end - p >= HEADER_SIZE:
            kind, length = _unpack_from(buf, p)
            if length > max_body:
                self._refuse(view, p, length)
                return
            if kind == END or kind == QUIT:
                self._finish(view, p)
                return
            q = p + HEADER_SIZE + length
            if q > end:
                if q - p > rb.carry_max:
                    # Too big to carry from read to read: stream it.
                    buf[p] = REPLY
                    self._stream_left = q - end
                    p = end
                break
            buf[p] = REPLY
            p = q
        if p:
            self._transport.write(view[:p])
        self._carry = view[p:end].tobytes() if p < end else b""

    # session ends ----------------------------------------------------------------------------

    def _finish(self, view: memoryview, p: int) -> None:
        """END or QUIT at offset p: the replies before it, one END, then drain."""
        self._state = DRAINING
        self._carry = b""
        transport = self._transport
        if p:
            transport.write(view[:p])
        transport.write(END_FRAME)
        transport.write_eof()  # FIN once the replies are out; reading goes on
        self._bound(DRAIN_TIMEOUT_S)

    def _drop(self, nbytes: int) -> None:
        """Input after END (or after close()): read and dropped, within limits."""
        self._drained += nbytes
        if self._drained > DRAIN_LIMIT:
            self.abort()

    def _refuse(self, view: memoryview, p: int, length: int) -> None:
        """A length above the cap at offset p: log, close after the replies before it."""
        self._home.log(
            f"{self._peer}: body length {length} is above --max-body {self._home.max_body};"
            " closing the connection"
        )
        if p:
            self._transport.write(view[:p])
        self.close()

    def _bound(self, seconds: float) -> None:
        """Abort the connection if it is still open `seconds` from now."""
        if self._timer is None and self._transport is not None:
            self._timer = self._home.call_later(seconds, self.abort)

    def close(self) -> None:
        """Stop reading, flush what is written, close (abort if that takes too long)."""
        self._state = CLOSING
        self._carry = b""
        if self._transport is not None:
            self._transport.close()
            self._bound(CLOSE_TIMEOUT_S)

    def abort(self) -> None:
        self._state = CLOSING
        self._timer = None
        if self._transport is not None:
            self._transport.abort()
