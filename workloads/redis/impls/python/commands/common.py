"""What every command module shares: the error replies redis uses everywhere, argument
parsing that raises them, and reply helpers.

Handlers have the signature `handler(client, argv) -> bytes` and return their whole reply.
An error found deep inside a helper is raised as CommandError; the connection loop turns it
into its reply (a try block costs nothing in CPython 3.11 until something is raised).
"""

from __future__ import annotations

from numeric import parse_double, parse_int64
from protocol import c_string, error

WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
SYNTAX_ERROR = b"-ERR syntax error\r\n"
NOT_INTEGER = b"-ERR value is not an integer or out of range\r\n"
NOT_FLOAT = b"-ERR value is not a valid float\r\n"
OVERFLOW = b"-ERR increment or decrement would overflow\r\n"
NO_SUCH_KEY = b"-ERR no such key\r\n"
INDEX_OUT_OF_RANGE = b"-ERR index out of range\r\n"
OUT_OF_RANGE = b"-ERR value is out of range\r\n"
MUST_BE_POSITIVE = b"-ERR value is out of range, must be positive\r\n"

LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1
INT_MIN = -(2**31)
INT_MAX = 2**31 - 1


class CommandError(Exception):
    """An error reply, raised from wherever it is found."""

    def __init__(self, reply: bytes):
        super().__init__(reply)
        self.reply = reply


class CloseAfterReply(Exception):
    """Send this reply, then close the connection without reading further requests (QUIT)."""

    def __init__(self, reply: bytes):
        super().__init__(reply)
        self.reply = reply


class StartTransaction(Exception):
    """MULTI: reply OK, then queue the connection's requests until EXEC or DISCARD."""


def int_arg(arg: bytes, message: bytes = NOT_INTEGER) -> int:
    """getLongLongFromObjectOrReply: a signed 64-bit integer or the error reply."""
    value = parse_int64(arg)
    if value is None:
        raise CommandError(message)
    return value


def int32_arg(arg: bytes) -> int:
    """getIntFromObjectOrReply."""
    value = int_arg(arg)
    if not INT_MIN <= value <= INT_MAX:
        raise CommandError(
            b"-ERR value is out of range, value must between -2147483648 and 2147483647\r\n"
        )
    return value


def positive_arg(arg: bytes, message: bytes = MUST_BE_POSITIVE) -> int:
    """getPositiveLongFromObjectOrReply: 0 … LONG_MAX; a non-integer gets the same message
    as a negative number, as in redis."""
    value = parse_int64(arg)
    if value is None or value < 0:
        raise CommandError(message)
    return value


def float_arg(arg: bytes) -> float:
    """getDoubleFromObjectOrReply."""
    value = parse_double(arg)
    if value is None:
        raise CommandError(NOT_FLOAT)
    return value


def option(arg: bytes) -> bytes:
    """An option word as redis compares it: strcasecmp on a C string."""
    return c_string(arg).lower()


def arity_error(name: bytes) -> bytes:
    return b"-ERR wrong number of arguments for '%s' command\r\n" % name


def error_format(message: bytes) -> bytes:
    """addReplyErrorFormat: CR/LF in user-supplied parts must not break the protocol."""
    return error(message)
