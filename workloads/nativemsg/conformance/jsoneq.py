"""Strict JSON parsing of replies and the lab's "equal as JSON" (docs/decisions.md, Conformance).

Equal as JSON: same types and structure, object members compared as sets (order ignored),
strings compared as code points, numbers compared as IEEE-754 doubles (so 1, 1.0 and 1e0 are
equal, and integers beyond 2^53 are not tested for exactness). A reply must be RFC 8259 JSON:
UTF-8, no NaN/Infinity, no duplicate member names, one value with nothing after it.
"""

from __future__ import annotations

import json
from collections.abc import Callable


class NotJSON(ValueError):
    pass


def _reject_constant(name: str):
    raise NotJSON(f"{name} is not JSON (RFC 8259 has no NaN/Infinity)")


def _no_duplicates(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise NotJSON(f"duplicate member name {k!r}")
        obj[k] = v
    return obj


def loads(text: bytes | str):
    """Parse RFC 8259 JSON strictly; every number becomes a float (compared as doubles)."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise NotJSON(f"not UTF-8: {e}") from None
    try:
        return json.loads(
            text,
            parse_int=float,
            parse_float=float,
            parse_constant=_reject_constant,
            object_pairs_hook=_no_duplicates,
        )
    except json.JSONDecodeError as e:
        raise NotJSON(str(e)) from None


def preview(body: bytes, limit: int = 160) -> str:
    if len(body) <= limit:
        return repr(body)
    return f"{body[:limit]!r}… ({len(body)} bytes)"


def parse_reply(body: bytes, describe: Callable[[], str] = lambda: "") -> dict:
    """A reply body parsed as a JSON object, or an AssertionError saying what is wrong."""
    try:
        value = loads(body)
    except NotJSON as e:
        hint = ""
        if body[:4] == b"\0\0\0\0":
            hint = " — it starts with four zero bytes: an 8-byte length prefix (usize/size_t)?"
        raise AssertionError(
            f"reply body is not valid JSON ({e}){hint}: {preview(body)} {describe()}"
        ) from None
    except RecursionError:
        raise AssertionError(f"reply nested too deeply to check: {preview(body)}") from None
    if not isinstance(value, dict):
        raise AssertionError(f"reply is not a JSON object: {preview(body)} {describe()}")
    return value


def _kind(v) -> str:
    # bool before numbers: in Python True == 1.0, in JSON true is not 1.
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    raise TypeError(f"not a parsed JSON value: {type(v)}")


def _short(v) -> str:
    r = json.dumps(v, ensure_ascii=True)
    return r if len(r) <= 80 else r[:77] + "..."


def difference(expected, actual, path: str = "$") -> str | None:
    """None when equal as JSON, else a description of the first difference."""
    ke, ka = _kind(expected), _kind(actual)
    if ke != ka:
        return f"at {path}: expected {ke} {_short(expected)}, got {ka} {_short(actual)}"
    if ke == "array":
        if len(expected) != len(actual):
            return f"at {path}: expected {len(expected)} elements, got {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            d = difference(e, a, f"{path}[{i}]")
            if d:
                return d
        return None
    if ke == "object":
        if expected.keys() != actual.keys():
            missing = sorted(expected.keys() - actual.keys())
            extra = sorted(actual.keys() - expected.keys())
            return f"at {path}: missing members {missing}, unexpected members {extra}"
        for k in expected:
            d = difference(expected[k], actual[k], f"{path}.{k}")
            if d:
                return d
        return None
    if expected != actual:  # null, boolean, number (as doubles), string (as code points)
        return f"at {path}: expected {_short(expected)}, got {_short(actual)}"
    return None
