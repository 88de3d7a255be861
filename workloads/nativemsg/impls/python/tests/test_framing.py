"""framing: the 4-byte native-order length, the caps, EOF rules and reads split anywhere."""

import os
import struct
import sys
import threading
import tracemalloc

import framing
import pytest
from framing import (
    HEADER_SIZE,
    MAX_REPLY,
    MAX_REQUEST,
    FrameReader,
    FramingError,
    fd_readinto,
    fd_write,
    write_frame,
)


def frame(body: bytes) -> bytes:
    """A frame built by hand, independently of framing.HEADER."""
    return len(body).to_bytes(4, sys.byteorder) + body


class Script:
    """A fake readinto: hands out `data` in the given chunk sizes, then EOF; records calls."""

    def __init__(self, data: bytes, chunks=None):
        self.data = data
        self.pos = 0
        self.chunks = list(chunks or [])
        self.calls = 0

    def __call__(self, view) -> int:
        self.calls += 1
        size = self.chunks.pop(0) if self.chunks else len(self.data)
        n = min(size, len(view), len(self.data) - self.pos)
        view[:n] = self.data[self.pos : self.pos + n]
        self.pos += n
        return n


def read_all(reader: FrameReader) -> list[bytes]:
    out = []
    while (body := reader.read_frame()) is not None:
        out.append(bytes(body))
    return out


# --- the header ----------------------------------------------------------------------------


def test_header_is_four_bytes_native_order_little_endian_here():
    assert HEADER_SIZE == 4  # not 8 (size_t/usize)
    assert sys.byteorder == "little"  # every machine of this lab
    assert framing.HEADER.pack(1) == b"\x01\x00\x00\x00"  # not big-endian
    assert framing.HEADER.pack(0x01020304) == b"\x04\x03\x02\x01"


def test_header_is_unsigned():
    assert framing.HEADER.unpack(b"\xff\xff\xff\xff") == (0xFFFFFFFF,)
    assert framing.HEADER.unpack(b"\x00\x00\x00\x80") == (0x80000000,)


def test_caps():
    assert MAX_REQUEST == 64 * 1024 * 1024
    assert MAX_REPLY == 1024 * 1024


# --- writing -------------------------------------------------------------------------------


def written(body: bytes) -> bytes:
    r, w = os.pipe()
    out = bytearray()

    def drain():
        while chunk := os.read(r, 1 << 16):
            out.extend(chunk)

    t = threading.Thread(target=drain)
    t.start()
    try:
        write_frame(fd_write(w), body)
    finally:
        os.close(w)
        t.join()
        os.close(r)
    return bytes(out)


def test_write_frame_length_counts_bytes_not_characters():
    body = '{"op":"echo","data":"é€😀"}'.encode()
    assert len(body) == 32 and len(body.decode()) == 26
    assert written(body) == b"\x20\x00\x00\x00" + body


@pytest.mark.parametrize("size", [0, 1, 13, 65535, 65536, 300_000])
def test_write_frame_small_and_large(size):
    body = b"x" * size
    assert written(body) == frame(body)


def test_write_frame_accepts_exactly_one_mib():
    body = b"x" * MAX_REPLY
    assert written(body) == frame(body)


def test_write_frame_refuses_more_than_one_mib():
    r, w = os.pipe()
    os.set_blocking(w, False)  # nobody reads: a write must fail fast, not hang the test
    try:
        with pytest.raises(FramingError, match="exceeds"):
            write_frame(fd_write(w), b"x" * (MAX_REPLY + 1))
        os.close(w)
        assert os.read(r, 16) == b""  # nothing at all was written
    finally:
        os.close(r)


@pytest.mark.parametrize("first", [0, 1, 3, 4, 5, 20])
def test_write_frame_finishes_a_partial_write(first):
    """A write interrupted by a signal after `first` bytes; the rest dribbles out 7 at a time."""
    out = bytearray()
    calls = []

    def write(data):
        n = first if not calls else min(7, len(data))
        calls.append(n)
        out.extend(bytes(data)[:n])
        return n

    body = b'{"op":"pong","pad":"' + b"y" * 40 + b'"}'
    write_frame(write, body)
    assert bytes(out) == frame(body)
    assert len(calls) > 1


def test_write_frame_sends_header_and_body_in_one_write():
    calls = []
    write_frame(lambda data: calls.append(bytes(data)) or len(data), b'{"op":"pong"}')
    assert calls == [frame(b'{"op":"pong"}')]


def test_write_frame_on_a_full_non_blocking_stdout_is_an_error():
    with pytest.raises(FramingError, match="non-blocking"):
        write_frame(lambda data: None, b"{}")


# --- reading -------------------------------------------------------------------------------


def test_reads_one_frame_then_clean_eof():
    reader = FrameReader(Script(frame(b'{"op":"ping"}')))
    assert bytes(reader.read_frame()) == b'{"op":"ping"}'
    assert reader.read_frame() is None


def test_eof_before_any_frame_is_clean():
    assert FrameReader(Script(b"")).read_frame() is None


def test_empty_body_is_a_frame():
    assert read_all(FrameReader(Script(frame(b"") + frame(b"a")))) == [b"", b"a"]


def test_many_frames_in_one_read():
    bodies = [f'{{"op":"ping","n":{i}}}'.encode() for i in range(1000)]
    script = Script(b"".join(frame(b) for b in bodies))
    assert read_all(FrameReader(script)) == bodies
    assert script.calls < 10  # large reads: not one call per frame


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 64])
def test_frames_split_into_small_reads(size):
    bodies = [b'{"op":"ping"}', "é€😀".encode(), b"", b"x" * 300]
    data = b"".join(frame(b) for b in bodies)
    script = Script(data, chunks=[size] * len(data))
    assert read_all(FrameReader(script)) == bodies


def test_frames_split_at_every_offset():
    bodies = [b'{"op":"echo","data":[1,2,3]}', b'{"op":"ping"}']
    data = b"".join(frame(b) for b in bodies)
    for cut in range(1, len(data)):
        script = Script(data, chunks=[cut, len(data)])
        assert read_all(FrameReader(script)) == bodies, cut


def test_frame_larger_than_the_read_buffer():
    big = bytes(range(256)) * 1000  # 256,000 bytes, well over READ_SIZE
    bodies = [b"a", big, b"b"]
    script = Script(b"".join(frame(b) for b in bodies), chunks=[100] + [65536] * 100)
    assert read_all(FrameReader(script, size=1024)) == bodies


def test_tiny_buffer_still_reads_everything():
    bodies = [b"abc", b"0123456789" * 10, b""]
    assert read_all(FrameReader(Script(b"".join(frame(b) for b in bodies)), size=1)) == bodies


@pytest.mark.parametrize("prefix", [b"\x01", b"\x01\x00", b"\x01\x00\x00"])
def test_eof_inside_header_is_an_error(prefix):
    reader = FrameReader(Script(frame(b"ok") + prefix))
    assert bytes(reader.read_frame()) == b"ok"
    with pytest.raises(FramingError, match="EOF inside a frame header"):
        reader.read_frame()


@pytest.mark.parametrize("got", [0, 1, 9])
def test_eof_inside_body_is_an_error(got):
    reader = FrameReader(Script(frame(b"x" * 10)[: HEADER_SIZE + got]))
    with pytest.raises(FramingError, match=f"EOF inside a frame body \\({got} of 10"):
        reader.read_frame()


def test_cap_is_inclusive():
    reader = FrameReader(Script(frame(b"x" * 10) + frame(b"y" * 11)), max_body=10)
    assert bytes(reader.read_frame()) == b"x" * 10
    with pytest.raises(FramingError, match="11 exceeds"):
        reader.read_frame()


@pytest.mark.parametrize("length", [MAX_REQUEST + 1, 0x80000000, 0xFFFFFFFF])
def test_oversized_length_fails_at_once_without_allocating(length):
    header = struct.pack("<I", length)
    # The header alone, on a stream that would never end: only header bytes are available, and
    # asking for more would fail the test.
    script = Script(header)

    def readinto(view):
        if script.pos == len(script.data):
            raise AssertionError("read past an oversized header")
        return script(view)

    reader = FrameReader(readinto)
    tracemalloc.start()
    try:
        with pytest.raises(FramingError, match=f"{length} exceeds the {MAX_REQUEST}-byte"):
            reader.read_frame()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024


def test_oversized_length_in_a_buffered_burst_is_caught_too():
    data = frame(b"ok") + struct.pack("<I", MAX_REQUEST + 1) + b"z" * 100
    reader = FrameReader(Script(data))
    assert bytes(reader.read_frame()) == b"ok"
    with pytest.raises(FramingError, match="exceeds"):
        reader.read_frame()


def test_reads_a_request_of_exactly_64_mib_and_releases_it():
    body = b"x" * MAX_REQUEST
    reader = FrameReader(Script(frame(body) + frame(b"after"), chunks=[65536] * 2000))
    got = reader.read_frame()
    assert len(got) == MAX_REQUEST and got == body
    del got
    assert bytes(reader.read_frame()) == b"after"
    assert reader.read_frame() is None
    assert len(reader._buf) <= framing.KEEP_SIZE  # the 64 MiB buffer was not kept


def test_non_blocking_stdin_is_an_error_not_a_crash():
    with pytest.raises(FramingError, match="non-blocking"):
        FrameReader(lambda view: None).read_frame()


def test_reads_from_a_real_pipe():
    bodies = [b'{"op":"ping"}', "é€😀".encode() * 1000, b"x" * 200_000]
    r, w = os.pipe()

    def feed():
        for b in bodies:
            data = frame(b)
            for i in range(0, len(data), 999):  # odd-sized writes
                os.write(w, data[i : i + 999])
        os.close(w)

    t = threading.Thread(target=feed)
    t.start()
    try:
        assert read_all(FrameReader(fd_readinto(r))) == bodies
    finally:
        t.join()
        os.close(r)
