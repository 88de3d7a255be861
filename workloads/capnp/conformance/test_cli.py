"""Bad command lines exit 2 with the usage on stderr (SPEC §5), before doing anything."""

from __future__ import annotations

import peers as P
import pytest

BAD = {
    "no-arguments": [],
    "too-few": ["carsales", "bytes", "reuse", "none"],
    "too-many": ["carsales", "bytes", "reuse", "none", "10", "extra"],
    "unknown-case": ["cats", "bytes", "reuse", "none", "10"],
    "unknown-mode": ["carsales", "mmap", "reuse", "none", "10"],
    "unknown-reuse": ["carsales", "bytes", "sometimes", "none", "10"],
    "unknown-compression": ["carsales", "bytes", "reuse", "snappy", "10"],
    "object-packed": ["carsales", "object", "reuse", "packed", "10"],
    "zero-iterations": ["carsales", "bytes", "reuse", "none", "0"],
    "negative-iterations": ["carsales", "bytes", "reuse", "none", "-5"],
    "not-a-number": ["carsales", "bytes", "reuse", "none", "ten"],
    "too-many-iterations": ["carsales", "bytes", "reuse", "none", "1000000001"],
}


@pytest.mark.parametrize("name", BAD)
def test_bad_command_line_exits_2_with_usage(impl, name):
    e = P.run(impl, BAD[name], timeout=30)
    assert e.returncode == 2, f"{BAD[name]}: {e.describe()}"
    assert "usage" in e.err.lower(), f"{BAD[name]}: no usage on stderr: {e.err[-300:]!r}"
    assert e.stdout == b"", f"{BAD[name]}: printed on stdout: {e.stdout[:200]!r}"
