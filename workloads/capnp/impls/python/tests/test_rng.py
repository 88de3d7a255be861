"""rng: xorshift128 with the SPEC's seed, fastRand and fastRandDouble (SPEC §3.1)."""

from __future__ import annotations

from capnp_py.rng import Rng
from conftest import GOLDEN


def test_first_outputs_are_the_specs():
    rng = Rng()
    assert [rng.next() for _ in range(5)] == [int(x, 16) for x in GOLDEN["first_outputs"]]


def step(state: list[int]) -> int:
    """One xorshift128 step written out with explicit 32-bit masks on every operation."""
    x, y, z, w = state
    t = (x ^ (x << 11)) & 0xFFFFFFFF
    w2 = (w ^ (w >> 19) ^ t ^ (t >> 8)) & 0xFFFFFFFF
    state[:] = [y, z, w, w2]
    return w2


def test_a_long_run_matches_the_step_written_out_and_stays_32_bit():
    rng, state = Rng(), [0x1D2ACD47, 0x58CA3E14, 0xF563F232, 0x0BC76199]
    for _ in range(100_000):
        v = rng.next()
        assert v == step(state)
        assert 0 <= v <= 0xFFFFFFFF


def test_rand_is_next_modulo_n():
    a, b = Rng(), Rng()
    for n in (2, 5, 13, 26, 200, 1000, 10000):
        assert a.rand(n) == b.next() % n


def test_rand_double_is_the_c_expression():
    a, b = Rng(), Rng()
    for r in (20, 30.0, 31.613008):
        v = b.next()
        assert a.rand_double(r) == (float(v) * float(r)) / 4294967295.0
    # The full range: next() == UINT32_MAX gives r exactly.
    assert (float(0xFFFFFFFF) * 20.0) / 4294967295.0 == 20.0
