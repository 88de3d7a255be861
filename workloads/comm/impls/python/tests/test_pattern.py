"""pattern: the body pattern of SPEC §3, in both of its representations (shared table, tape)."""

from __future__ import annotations

import pytest
from comm_py import pattern
from comm_py.pattern import Bodies


@pytest.mark.parametrize("size", [0, 1, 250, 251, 4096, 300_000])
def test_bodies_follow_the_spec_pattern(size):
    bodies = Bodies(size)
    assert (bodies.table is None) == (size * 251 > pattern.TABLE_BYTES)
    for c, m in [(0, 0), (3, 17), (15, 999), (250, 250)]:
        want = bytes((c * 7 + m * 13 + i) % 251 for i in range(size))
        assert bodies.expected(c, m) == want
        assert bytes(bodies.posted(c, m)) == want


def test_other_messages_and_clients_have_other_bodies():
    # The point of the pattern: a reply to the wrong message or client is caught.
    bodies = Bodies(64)
    assert bodies.expected(0, 1) != bodies.expected(0, 0)
    assert bodies.expected(1, 0) != bodies.expected(0, 0)
