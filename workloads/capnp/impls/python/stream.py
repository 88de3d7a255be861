"""Messages on a pipe (SPEC §4-§6): framing, the reading limits, writing, packed or not.

pycapnp's own stream readers cannot tell a clean end of input from a stream cut inside a
message: libcapnp throws "Premature EOF" for both, `Struct.read` / `read_packed` raise it either
way and `read_multiple` / `read_multiple_packed` turn both into the end of the iteration. SPEC §5
needs the difference (a server ends with exit 0 only at a message boundary). Those iterators also
copy every message (19 us per carsales request) unless `skip_copy=True`, and then a multi-segment
message whose later segments are still unread when the next one is asked for puts the stream
out of step (measured: a garbage segment table, then libcapnp's terminate() at exit). So this
module reads the framing itself and hands libcapnp exactly one message's bytes:

- unpacked: the segment table is read and checked (fewer than 512 segments, at most 8 Mi words in
  all, SPEC §6) before the body is read, into one receive buffer kept across messages (replaced
  by a larger one only for a larger message); `read_multiple_bytes` then reads the message in
  place, no copy (5 us per carsales request in all, framing included);
- packed: the table is unpacked here (a few words) and checked the same way, then the packed
  body is walked tag by tag, without unpacking it, to find where the message ends (a run that
  goes past the declared size is refused); libcapnp's `from_bytes_packed` unpacks those bytes.
  The walk is Python's one per-word loop: ~130 us for a packed carsales request (~3,400 words),
  ~40 ns a word; long raw runs (catrank's texts) are skipped whole.

libcapnp enforces the same limits again when it reads (its `ReaderOptions`): the traversal limit,
which also caps the total size, and the nesting limit are set explicitly to SPEC §6's values,
which are libcapnp's defaults.

Writing is one `os.write` per message of the bytes the library serialised (`to_bytes`, or
`to_bytes_packed`, the library's packing of the whole stream, segment table included), so a
message is flushed as soon as it is complete and its size as written is known for the report.
pycapnp's `write` / `write_packed` go to the descriptor directly but say nothing of the size,
and `write_packed` goes through an 8 KiB buffer, several writes for one carsales request.

Before the server writes a response, its size is checked against the cap (SPEC §6: no reader
would accept more): exactly, from the segment table of the bytes serialised (pycapnp gives a
builder's segment sizes only by copying them), and for catrank also before serialising
(check_built), so that an oversized response is not copied at all.
"""

from __future__ import annotations

import os
import struct

from failures import InvalidMessage

# SPEC §6: libcapnp's defaults (ReaderOptions), set explicitly everywhere a message is read.
MAX_SEGMENTS = 511  # fewer than 512, libcapnp's segmentCount < 512
MAX_WORDS = 8 * 1024 * 1024  # 64 MiB; the traversal limit too
NESTING_LIMIT = 64

_U32 = struct.Struct("<I")
_U32_PAIR = struct.Struct("<II")
# Bytes that follow a packed tag: one per non-zero byte of the word.
_POPCOUNT = bytes(bin(tag).count("1") for tag in range(256))
# A tag group's length (tag and non-zero bytes), 0 for the run tags 0x00 and 0xFF.
_STEP = bytes(0 if tag in (0, 0xFF) else 1 + _POPCOUNT[tag] for tag in range(256))
# Upper halves of a tag (bytes 4-7 of its word) whose set bits are the lowest: the bytes after
# the tag are then a segment size's bytes in order, up to its highest non-zero one.
_LOW_BYTES = frozenset((0b0000, 0b0001, 0b0011, 0b0111, 0b1111))
# How much is asked of the OS at a time when reading a packed stream.
_CHUNK = 1 << 16


def read_root(struct_type, data):
    """The root of the one message in `data` (bytes, bytearray or memoryview, word-aligned:
    bytes objects and bytearray buffers are), read in place with SPEC §6's limits.

    `read_multiple_bytes` + `next` is pycapnp's cheapest zero-copy reader (0.6 us against 1.9
    for the `from_bytes` context manager, whose generator costs more than the read); the
    reader keeps the buffer alive and exported until it is dropped."""
    root = next(struct_type.read_multiple_bytes(data, MAX_WORDS, NESTING_LIMIT), None)
    if root is None:  # pycapnp ends the iteration on libcapnp's "EOF" errors
        raise InvalidMessage("the message ends before its segment table says")
    return root


def read_packed_root(struct_type, data):
    """The root of the one packed message in `data`, unpacked by libcapnp with the limits."""
    return struct_type.from_bytes_packed(data, MAX_WORDS, NESTING_LIMIT)


def _check_words(sizes) -> int:
    """The words of the body, summed from the segment table, after SPEC §6's check (the
    segment count is checked before the sizes are read)."""
    words = sum(sizes)
    if words > MAX_WORDS:
        raise InvalidMessage(
            f"the segment table declares {words} words, more than the limit of {MAX_WORDS}"
        )
    return words


def _check_count(count: int) -> None:
    if count > MAX_SEGMENTS:
        raise InvalidMessage(f"{count} segments, more than the limit of {MAX_SEGMENTS}")


class MessageReader:
    """Unpacked messages from a binary stream (an io.BufferedReader)."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self._buf = bytearray(1 << 16)

    def read(self) -> memoryview | None:
        """The next message (segment table and body) as a view of the receive buffer, valid
        until the next read; None at a clean end of input (at a message boundary)."""
        read = self._stream.read
        head = read(8)
        if len(head) < 8:
            if not head:
                return None
            raise InvalidMessage(f"end of input inside a segment table ({len(head)} bytes)")
        count, size0 = _U32_PAIR.unpack(head)
        count += 1  # the table stores the count minus one; a Python int cannot wrap
        _check_count(count)
        if count == 1:
            table, words = head, _check_words((size0,))
        else:
            # The rest of the table: the other sizes, padded to a whole word.
            more = 4 * (count - 1) + (4 if count % 2 == 0 else 0)
            rest = read(more)
            if len(rest) < more:
                raise InvalidMessage(
                    f"end of input inside a segment table ({8 + len(rest)} of {8 + more} bytes)"
                )
            table = head + rest
            words = _check_words(struct.unpack_from(f"<{count}I", table, 4))
        start = len(table)
        size = start + 8 * words
        buf = self._buf
        if len(buf) < size:
            # A new buffer rather than a resize: the previous message's readers may still hold
            # the old one exported (a bytearray cannot be resized while it is).
            buf = self._buf = bytearray(max(size, 2 * len(buf)))
        view = memoryview(buf)
        view[:start] = table
        body = view[start:size]
        got = self._stream.readinto(body)
        while got < len(body):
            n = self._stream.readinto(body[got:])
            if not n:
                raise InvalidMessage(
                    f"end of input inside a message ({start + got} of {size} bytes)"
                )
            got += n
        return view[:size]


class PackedMessageReader:
    """Packed messages from a binary stream (an io.BufferedReader): finds where each one ends
    and returns its packed bytes for libcapnp to unpack."""

    def __init__(self, stream) -> None:
        # read1: with nothing buffered (nothing else reads the stream), one read(2) of at most
        # the size asked, as os.read on its descriptor; any buffered stream will do (the fuzz
        # target reads from an io.BytesIO).
        self._read1 = stream.read1
        self._buf = bytearray()  # input read and not yet returned
        self._eof = False

    def _more(self) -> bool:
        """Append what the OS has to the buffer; False at the end of input."""
        if self._eof:
            return False
        chunk = self._read1(_CHUNK)
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    def _fail_truncated(self, what: str) -> None:
        raise InvalidMessage(f"end of input inside a packed message ({what})")

    def _unpack_word(self, i: int, pending: list[int]) -> tuple[bytes, int]:
        """One unpacked word of the segment table from the tag at byte i; returns it and the
        next tag's position. `pending` carries a run's remaining words [zeros, raw]."""
        buf = self._buf
        if pending[0]:
            pending[0] -= 1
            return bytes(8), i
        if pending[1]:
            pending[1] -= 1
            while len(buf) < i + 8:
                if not self._more():
                    self._fail_truncated("a raw run of the segment table")
            return bytes(buf[i : i + 8]), i + 8
        while len(buf) < i + 1:
            if not self._more():
                self._fail_truncated("a tag of the segment table")
        tag = buf[i]
        n = _POPCOUNT[tag]
        run = 1 if tag == 0 or tag == 0xFF else 0
        while len(buf) < i + 1 + n + run:
            if not self._more():
                self._fail_truncated("a word of the segment table")
        word = bytearray(8)
        at = i + 1
        for b in range(8):
            if tag & (1 << b):
                word[b] = buf[at]
                at += 1
        if tag == 0:
            pending[0] = buf[at]
            at += 1
        elif tag == 0xFF:
            pending[1] = buf[at]
            at += 1
        return bytes(word), at

    def read(self) -> bytearray | None:
        """The next message's packed bytes; None at a clean end of input."""
        if not self._buf and not self._more():
            return None
        pending = [0, 0]  # words still owed by a zero run, by a raw run
        first, i = self._unpack_word(0, pending)
        count, size0 = _U32_PAIR.unpack(first)
        count += 1
        _check_count(count)
        sizes = [size0]
        table_words = (count + 2) // 2  # the table with its padding, in words
        rest = bytearray()
        for _ in range(table_words - 1):
            word, i = self._unpack_word(i, pending)
            rest += word
        if count > 1:
            sizes += [size for (size,) in _U32.iter_unpack(rest[: 4 * (count - 1)])]
        words = _check_words(sizes)
        # A run begun in the table covers body words first.
        words -= pending[0] + pending[1]
        if words < 0:
            raise InvalidMessage("a packed run goes past the end of the message")
        i += 8 * pending[1]
        end = self._skip_body(i, words)
        data = self._buf[:end]  # a copy: the buffer stays free to shrink and grow
        del self._buf[:end]
        return data

    def _skip_body(self, i: int, words: int) -> int:
        """Walk `words` packed words from byte i without unpacking them; returns the byte
        after the last. This loop, not libcapnp's unpacking, is the price of finding the
        message's end in Python, so it is lean: a table gives a plain tag's group length (the
        tag and its non-zero bytes; 0 for the two run tags), and the buffer's end is found by
        IndexError rather than checked on every tag. Every index taken lies inside this
        message, so a read for more input never waits for bytes the peer will not send until
        it has our answer."""
        step = _STEP
        buf = self._buf
        while True:
            try:
                while words > 0:
                    n = step[buf[i]]
                    if n:
                        i += n
                        words -= 1
                    elif buf[i]:  # 0xFF: the word, then a count of raw words copied as is
                        run = buf[i + 9]
                        words -= 1 + run
                        i += 10 + 8 * run
                    else:  # 0x00: a zero word, then a count of further zero words
                        words -= 1 + buf[i + 1]
                        i += 2
            except IndexError:
                pass  # i is the group that is not all here yet; nothing was counted for it
            else:
                if words < 0:
                    raise InvalidMessage("a packed run goes past the end of the message")
                if i <= len(buf):
                    return i
                # else the last group's bytes (or a raw run) are not all here yet
            if not self._more():
                self._fail_truncated(f"{max(words, 0)} words, {i - len(buf)} bytes missing")


# ---- the cap on a message written (SPEC §6: a server never writes a message beyond it) ----


def serialised_words(data, packed: bool) -> int:
    """The words of the message in `data`, as the library serialised it (`to_bytes`, or
    `to_bytes_packed` when `packed`): its segment sizes summed from its segment table, as every
    reader sums them against MAX_WORDS. Only the table is read (unpacked first when packed, a
    few tags): pycapnp tells a builder's segment sizes only by copying the segments, so they
    are taken from the bytes the server serialises anyway, before any of them is written."""
    if packed:
        tag = data[0]
        high = tag >> 4
        if not tag & 0x0F and high in _LOW_BYTES:
            # One segment (the count's bytes are zero), its size in its low bytes: the bytes
            # after the tag are the size (carsales' and eval's responses, a few hundred ns).
            return int.from_bytes(data[1 : 1 + _POPCOUNT[high]], "little")
        table = _packed_table(data)
    else:
        more, words = _U32_PAIR.unpack_from(data)
        if not more:
            return words
        table = data
    count = _U32.unpack_from(table)[0] + 1
    return sum(struct.unpack_from(f"<{count}I", table, 4))


def _packed_table(data: bytes) -> bytearray:
    """The segment table at the start of the packed message in `data` (the library's own
    output, so whole), unpacked: words until the first tells how many the table takes."""
    out = bytearray()
    i = 0
    words = 1  # the table's, known once its first word is out
    while len(out) < 8 * words:
        tag = data[i]
        i += 1
        for bit in range(8):
            if tag >> bit & 1:
                out.append(data[i])
                i += 1
            else:
                out.append(0)
        if tag == 0:  # a count of further zero words
            out += bytes(8 * data[i])
            i += 1
        elif tag == 0xFF:  # a count of further words as they are
            n = 8 * data[i]
            out += data[i + 1 : i + 1 + n]
            i += 1 + n
        words = (_U32.unpack_from(out)[0] + 3) // 2  # (count + 2) // 2, count = value + 1
    return out


def check_built(root) -> None:
    """InvalidMessage if the message under the builder `root` is certainly beyond the cap,
    before anything copies it: pycapnp's total_size (libcapnp's count of the words of every
    object reachable from the root) plus the root pointer, a lower bound of the segments' sum
    (it leaves out far pointers' landing pads, which check_serialised counts). A walk of the
    objects, no copy: done only for catrank's response, the one whose size depends on the
    request (callgrind: 0.2 M instructions for a generated response of ~840 results, 3% of
    what the server does for the request)."""
    words = root.total_size.word_count + 1
    if words > MAX_WORDS:
        raise InvalidMessage(
            f"a response of at least {words} words, beyond the {MAX_WORDS}-word cap every "
            "reader enforces: not written"
        )


def check_serialised(data, packed: bool) -> None:
    """InvalidMessage if the message in `data` is beyond the cap: it is not to be written."""
    words = serialised_words(data, packed)
    if words > MAX_WORDS:
        raise InvalidMessage(
            f"a message of {words} words, beyond the {MAX_WORDS}-word cap every reader "
            "enforces: not written"
        )


def write_all(fd: int, data) -> None:
    """The whole of `data` to `fd` (a pipe may take less than all in one write)."""
    n = os.write(fd, data)
    if n < len(data):
        view = memoryview(data)
        while n < len(view):
            n += os.write(fd, view[n:])
