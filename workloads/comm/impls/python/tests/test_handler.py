"""handler: the echo session rules, driven through asyncio's buffered-protocol calls with a
transport that records what the server would send."""

import asyncio

import pytest
from comm_py import frame, handler
from comm_py.frame import END, QUIT, REPLY
from comm_py.handler import EchoHandler, ReadBuffer


class FakeTransport(asyncio.Transport):
    """What the selector transport does, as far as a handler can tell: write() takes a copy
    at once, close() stops reading, write_eof() half-closes and reading goes on."""

    def __init__(self):
        super().__init__()
        self.out = bytearray()
        self.writes = 0
        self.closed = self.aborted = self.eof_sent = self.paused = False
        self.limits = None

    def write(self, data):
        assert not self.eof_sent and not self.closed, "write after write_eof/close"
        self.out += bytes(data)
        self.writes += 1

    def write_eof(self):
        self.eof_sent = True

    def close(self):
        self.closed = True

    def abort(self):
        self.closed = self.aborted = True

    def is_closing(self):
        return self.closed

    def pause_reading(self):
        self.paused = True

    def resume_reading(self):
        self.paused = False

    def set_write_buffer_limits(self, high=None, low=None):
        self.limits = (high, low)

    def get_extra_info(self, name, default=None):
        return ("127.0.0.1", 40000) if name == "peername" else default


class FakeHome:
    def __init__(self, size=handler.READ_SIZE, max_body=frame.DEFAULT_MAX_BODY, carry_max=None):
        self.read_buffer = ReadBuffer(size, min(size, carry_max or handler.CARRY_MAX))
        self.max_body = max_body
        self.open = set()
        self.lines = []
        self.timers = []

    def session_opened(self, h):
        self.open.add(h)

    def session_closed(self, h):
        self.open.discard(h)

    def log(self, line):
        self.lines.append(line)

    def call_later(self, seconds, callback):
        self.timers.append((seconds, callback))
        return FakeTimer()


class FakeTimer:
    cancelled = False

    def cancel(self):
        self.cancelled = True


def connect(home=None):
    home = home or FakeHome()
    h = EchoHandler(home)
    t = FakeTransport()
    h.connection_made(t)
    return h, t, home


def deliver(h, t, data, step=1 << 30):
    """Feed `data` as reads of at most `step` bytes, until the transport stops reading."""
    view = memoryview(data)
    while view and not t.closed:
        buf = h.get_buffer(-1)
        n = min(len(buf), step, len(view))
        assert n > 0
        buf[:n] = view[:n]
        view = view[n:]
        h.buffer_updated(n)


def frames_of(data) -> list:
    out, p = [], 0
    while p < len(data):
        kind, n = frame.decode_header(data, p)
        out.append((kind, bytes(data[p + 9 : p + 9 + n])))
        p += 9 + n
    return out


MESSAGES = [(0, b"hello"), (1, b""), (128, bytes(range(200))), (3, b"q" * 50), (2, b"r")]
STREAM = b"".join(frame.encode(k, b) for k, b in MESSAGES)
REPLIES = [(REPLY, b) for _, b in MESSAGES]


def test_connection_setup():
    h, t, home = connect()
    assert home.open == {h}
    assert t.limits == (handler.HIGH_WATER, handler.LOW_WATER)
    h.connection_lost(None)
    assert home.open == set()


def test_every_frame_is_echoed_as_reply_with_one_write_per_read():
    h, t, _ = connect()
    deliver(h, t, STREAM)
    assert frames_of(t.out) == REPLIES
    assert t.writes == 1 and not t.closed


@pytest.mark.parametrize("closer", [END, QUIT])
def test_split_at_every_offset_then_end(closer):
    data = STREAM + frame.encode(closer)
    for cut in range(1, len(data)):
        h, t, home = connect()
        deliver(h, t, data[:cut])
        deliver(h, t, data[cut:])
        assert frames_of(t.out) == REPLIES + [(END, b"")], cut
        assert t.eof_sent and not t.closed, "after END: FIN, then drain until the peer closes"
        assert [s for s, _ in home.timers] == [handler.DRAIN_TIMEOUT_S]


def test_one_byte_reads():
    h, t, _ = connect()
    deliver(h, t, STREAM, step=1)
    assert frames_of(t.out) == REPLIES


def test_input_after_end_is_read_and_dropped():
    h, t, _ = connect()
    deliver(h, t, frame.encode(0, b"a") + frame.encode(END) + frame.encode(0, b"b"))
    deliver(h, t, frame.encode(0, b"c") * 100)
    assert frames_of(t.out) == [(REPLY, b"a"), (END, b"")]
    assert not h.eof_received()  # the peer's close: the transport closes
    assert not t.aborted


def test_draining_is_bounded():
    h, t, _ = connect()
    deliver(h, t, frame.encode(END))
    chunk = bytes(handler.READ_SIZE)
    for _ in range(handler.DRAIN_LIMIT // len(chunk) + 1):
        deliver(h, t, chunk)
    assert t.aborted


def test_length_above_the_cap_logs_and_closes_after_earlier_replies():
    h, t, home = connect(FakeHome(max_body=1000))
    deliver(h, t, frame.encode(0, b"k" * 1000) + frame.encode_header(0, 1001) + b"x" * 50)
    assert frames_of(t.out) == [(REPLY, b"k" * 1000)]
    assert t.closed and len(home.lines) == 1
    assert "1001" in home.lines[0] and "127.0.0.1:40000" in home.lines[0]
    assert [s for s, _ in home.timers] == [handler.CLOSE_TIMEOUT_S]


def test_cap_is_checked_on_the_header_alone():
    h, t, home = connect()
    deliver(h, t, frame.encode_header(0, (1 << 64) - 1))
    assert t.closed and t.out == b"" and home.lines


@pytest.mark.parametrize("step", [1, 5, 9, 10, 31, 64, 4096])
def test_frames_larger_than_the_read_buffer_are_streamed(step):
    big = bytes(range(256)) * 5
    data = frame.encode(0, b"a") + frame.encode(7, big) + frame.encode(1, b"b") + frame.encode(END)
    h, t, _ = connect(FakeHome(size=64))
    deliver(h, t, data, step)
    assert frames_of(t.out) == [(REPLY, b"a"), (REPLY, big), (REPLY, b"b"), (END, b"")]


def test_end_of_file_inside_a_frame_sends_nothing_more():
    for tail in (b"\x00", b"\x00" * 4, frame.encode(0, b"abcdef")[:12]):
        h, t, _ = connect()
        deliver(h, t, frame.encode(0, b"whole") + tail)
        assert not h.eof_received()  # falsy: the transport closes after flushing
        assert frames_of(t.out) == [(REPLY, b"whole")]


def test_handlers_of_one_worker_share_the_read_buffer():
    """Interleaved reads of two connections, each leaving a partial frame behind."""
    home = FakeHome(size=128)
    (h1, t1, _), (h2, t2, _) = connect(home), connect(home)
    a = b"".join(frame.encode(0, bytes([65 + i % 26]) * (i % 40)) for i in range(60))
    b = b"".join(frame.encode(1, bytes([97 + i % 26]) * (i % 33)) for i in range(60))
    for i in range(0, max(len(a), len(b)), 37):
        deliver(h1, t1, a[i : i + 37])
        deliver(h2, t2, b[i : i + 37])
    assert frames_of(t1.out) == [(REPLY, bytes([65 + i % 26]) * (i % 40)) for i in range(60)]
    assert frames_of(t2.out) == [(REPLY, bytes([97 + i % 26]) * (i % 33)) for i in range(60)]


def test_reading_pauses_while_replies_pile_up():
    h, t, _ = connect()
    h.pause_writing()
    assert t.paused
    h.resume_writing()
    assert not t.paused


def test_close_and_abort():
    h, t, home = connect()
    h.close()
    assert t.closed and not t.aborted
    seconds, callback = home.timers[0]
    callback()  # the peer did not read the rest in time
    assert t.aborted


def test_small_partial_frames_are_carried_large_ones_streamed():
    home = FakeHome(size=4096, carry_max=64)
    h, t, _ = connect(home)
    small = frame.encode(0, b"s" * 40)  # 49 bytes: carried, nothing sent until it is whole
    deliver(h, t, small[:30])
    assert t.out == b""
    deliver(h, t, small[30:])
    assert frames_of(t.out) == [(REPLY, b"s" * 40)]
    t.out.clear()
    large = frame.encode(0, bytes(range(100)))  # 109 bytes: streamed as it arrives
    deliver(h, t, large[:50])
    assert t.out == bytes([REPLY]) + large[1:50]
    deliver(h, t, large[50:] + small)
    assert frames_of(t.out) == [(REPLY, bytes(range(100))), (REPLY, b"s" * 40)]
