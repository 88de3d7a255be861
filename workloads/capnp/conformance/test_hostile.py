"""Hostile messages to every server (SPEC §6, §8): each is refused with exit status 1 and a
message — no signal, no hang, no answer to what it could not read whole nor a response beyond
the cap, and a peak RSS within the 64 MiB cap plus what the same server uses for one ordinary
request."""

from __future__ import annotations

import hostile as H
import peers as P
import pytest
import reference as R

# Room above the server's ordinary footprint: the cap itself (a message up to 64 MiB may be
# read) and as much again for the response a server may have begun to build.
SLACK_KB = 2 * 64 * 1024 + 32 * 1024
_ordinary: dict[str, int] = {}


def ordinary_rss_kb(impl, dialect) -> int:
    """Peak RSS of the server answering one ordinary request of each case (the largest)."""
    if impl.id not in _ordinary:
        import codec as C

        peak = 0
        for case in ("carsales", "catrank", "eval"):
            wire = C.codec(dialect, False)
            request = wire.encode_request(case, R.requests(case, 1)[0][0])
            e = P.run(impl, [case, "server", "no-reuse", "none", "1"], stdin_bytes=request)
            assert e.returncode == 0, e.describe()
            peak = max(peak, e.maxrss_kb)
        _ordinary[impl.id] = peak
    return _ordinary[impl.id]


def _refused(impl, dialect, case, compression, data, name):
    """Runs the server on `data` and checks its refusal as every hostile message's; returns
    how it ended."""
    e = P.run(impl, [case, "server", "no-reuse", compression, "1"], stdin_bytes=data, timeout=30)
    assert e.returncode != 0, f"{name}: accepted (exit 0); stdout {len(e.stdout)} bytes"
    assert e.returncode == 1, f"{name}: {e.describe()}"
    assert e.err.strip(), f"{name}: exit 1 without a message on stderr"
    limit = ordinary_rss_kb(impl, dialect) + SLACK_KB
    assert e.maxrss_kb <= limit, (
        f"{name}: peak RSS {e.maxrss_kb} KiB, beyond the cap (≤ {limit} KiB)"
    )
    return e


@pytest.mark.parametrize("name", H.CAPNP_CASES)
def test_hostile_capnp_message_is_refused(impl, dialect, capnp_only, name):
    case, compression, make = H.CAPNP_CASES[name]
    e = _refused(impl, dialect, case, compression, make(), name)
    # Each is one message the server must refuse, so nothing is written: no answer to what it
    # could not read whole, no response beyond the cap (amplified-response), not part of one.
    assert e.stdout == b"", f"{name}: {len(e.stdout)} bytes written before the refusal"


@pytest.mark.parametrize("name", H.CCE_CASES)
def test_hostile_cce_message_is_refused(impl, dialect, cce_only, name):
    case, compression, make = H.CCE_CASES[name]
    _refused(impl, dialect, case, compression, make(), name)


def test_server_at_clean_end_of_input_exits_0(impl):
    e = P.run(impl, ["carsales", "server", "no-reuse", "none", "1"])
    assert e.returncode == 0, e.describe()
    assert e.stdout == b""
