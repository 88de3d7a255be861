"""The requests of SPEC §5, as the native driver (drivers/nativemsg/src/payload.rs) builds them,
so that browser and native figures measure the same bytes.

The page builds each message as {"op":"echo","data":{"seq":n,"text":TEXT}} and Chromium
serialises it (JSON.stringify rules: `"`, `\\` and control characters escaped, other characters
as raw UTF-8), which gives exactly the body the native driver sends; the tests check it from
the host's side.
"""

from __future__ import annotations

import json

MAX_REQUEST_BODY = 64 * 1024 * 1024
PING_BODY = b'{"op":"ping"}'
ECHO_PREFIX = '{"op":"echo","data":{"seq":100000,"text":"'
ECHO_SUFFIX = '"}}'
MIN_ECHO_SIZE = len(ECHO_PREFIX) + len(ECHO_SUFFIX)

# The constants of payload.rs: the same words, stride and special text, in the same places.
WORDS = tuple(
    "native messaging host frame length prefix browser extension stdin stdout pipe json echo "
    "reply bytes lab".split()
)
WORD_STRIDE = 7
# Already JSON-escaped: quote, backslash, newline, then 2-, 3- and 4-byte UTF-8 characters.
SPECIAL = '\\"quote\\" back\\\\slash new\\nline caf\u00e9 5\u20ac smile\U0001f600 '
SPECIAL_FIRST = 64
SPECIAL_EVERY = 256


def escaped_text(length: int) -> str:
    """Deterministic JSON string content, already escaped, of exactly `length` UTF-8 bytes."""
    parts: list[str] = []
    size = 0
    special_len = len(SPECIAL.encode())
    next_special = SPECIAL_FIRST
    word = 0
    while size < length:
        room = length - size
        if size >= next_special and special_len <= room:
            parts.append(SPECIAL)
            size += special_len
            next_special = size + SPECIAL_EVERY
            continue
        nxt = WORDS[word % len(WORDS)]
        word += WORD_STRIDE
        if len(nxt) < room:
            parts.append(nxt + " ")
            size += len(nxt) + 1
        else:  # the tail: one-byte letters reach the exact size whatever is left
            parts.append("x" * room)
            size += room
    return "".join(parts)


def echo_body(size: int, seq: int = 100000) -> bytes:
    """The exact request body of an echo of `size` bytes (what the host must receive)."""
    if not MIN_ECHO_SIZE <= size <= MAX_REQUEST_BODY:
        raise ValueError(
            f"an echo request body must be {MIN_ECHO_SIZE}..={MAX_REQUEST_BODY} bytes, not {size}"
        )
    text = escaped_text(size - MIN_ECHO_SIZE)
    body = ECHO_PREFIX.replace("100000", str(seq)) + text + ECHO_SUFFIX
    return body.encode()


def echo_text(size: int) -> str:
    """The `text` value the page puts in its echo messages (the unescaped string)."""
    body = json.loads(echo_body(size))
    return body["data"]["text"]


def request_body_bytes(op: str, size: int) -> int:
    return len(PING_BODY) if op == "ping" else size
