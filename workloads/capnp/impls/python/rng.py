"""The requests' random numbers (SPEC §3.1): Marsaglia's xorshift128 with the SPEC's seed,
`fastRand(n)` and `fastRandDouble(r)` as the C++ suite defines them.

One generator per client, created at start and never reset; the server never draws.

The state lives in the locals of a Python generator and a draw is that generator's bound
`__next__`: resuming a generator is the cheapest way CPython has to run a few lines of
arithmetic with state, cheaper than a method on an object (attribute loads and stores for
x, y, z, w) or a closure with `nonlocal` cells. The hot loops of the cases take `rng.next` into
a local and write `nxt() % n` inline; `rand` and `rand_double` are the readable forms.
"""

from __future__ import annotations

from collections.abc import Iterator

SEED = (0x1D2ACD47, 0x58CA3E14, 0xF563F232, 0x0BC76199)
MASK32 = 0xFFFFFFFF
# fastRandDouble's divisor: UINT32_MAX as a double.
UINT32_MAX_F = 4294967295.0


def _outputs() -> Iterator[int]:
    """xorshift128's outputs, forever. Python ints do not wrap: the one left shift is masked
    back to 32 bits; every other step (right shifts, xors of 32-bit values) stays within them."""
    x, y, z, w = SEED
    while True:
        t = x ^ ((x << 11) & MASK32)
        x = y
        y = z
        z = w
        w = w ^ (w >> 19) ^ t ^ (t >> 8)
        yield w


class Rng:
    """The generator. `next()` returns the next u32 output."""

    __slots__ = ("next",)

    def __init__(self) -> None:
        self.next = _outputs().__next__

    def rand(self, n: int) -> int:
        """fastRand(n) = next() % n."""
        return self.next() % n

    def rand_double(self, r: float) -> float:
        """fastRandDouble(r) = (double(next()) * r) / 4294967295.0: an int times a float is
        the int converted to a double (exact for 32 bits) times the float, as in C."""
        return self.next() * float(r) / UINT32_MAX_F
