"""The body pattern of SPEC §3: byte i of message m of client c is (c*7 + m*13 + i) mod 251,
so a reply that belongs to another message or another client does not compare equal."""

from __future__ import annotations

PATTERN_PERIOD = 251
# Up to this many bytes, the 251 distinct bodies of the pattern are made once and shared by
# every message (posted as they are, compared with one memcmp); above it, bodies are windows
# of one pattern tape (posted as memoryviews, copied out of the tape to be compared).
TABLE_BYTES = 32 << 20


class Bodies:
    """The bodies of `size` bytes: each is the window at offset (c*7 + m*13) mod 251 of one
    periodic tape."""

    def __init__(self, size: int) -> None:
        self.size = size
        cycle = bytes(range(PATTERN_PERIOD))
        self.tape = (cycle * (size // PATTERN_PERIOD + 2))[: size + PATTERN_PERIOD]
        if size * PATTERN_PERIOD <= TABLE_BYTES:
            self.table = [self.tape[k : k + size] for k in range(PATTERN_PERIOD)]
        else:
            self.table = None
            self._view = memoryview(self.tape)

    def offset(self, client: int, message: int) -> int:
        return (client * 7 + message * 13) % PATTERN_PERIOD

    # posted() and expected() run once per message: the offset is computed inline.
    def posted(self, client: int, message: int):
        k = (client * 7 + message * 13) % PATTERN_PERIOD
        if self.table is not None:
            return self.table[k]
        return self._view[k : k + self.size]

    def expected(self, client: int, message: int) -> bytes:
        k = (client * 7 + message * 13) % PATTERN_PERIOD
        if self.table is not None:
            return self.table[k]
        return self.tape[k : k + self.size]
