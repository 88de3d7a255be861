"""The command table: every command's handler, arity and metadata, and the lookup the
connection loop uses (a dict keyed by the name as sent, lower- and upper-case pre-filled)."""

from __future__ import annotations

from dataclasses import dataclass

from protocol import c_string, error

from commands import hashes, keys, lists, server, sets, strings, zsets
from commands.common import CloseAfterReply, CommandError, StartTransaction, arity_error

__all__ = [
    "Command",
    "COMMANDS",
    "DISPATCH",
    "CloseAfterReply",
    "CommandError",
    "StartTransaction",
    "resolve",
    "unknown_command",
]


@dataclass(frozen=True, slots=True)
class Command:
    name: bytes
    handler: object
    arity: int  # redis's convention: N exactly N arguments (name included), -N at least N
    group: bytes
    summary: bytes
    flags: tuple[bytes, ...]
    key_positions: tuple[int, int, int]  # first key, last key, step (COMMAND INFO)


_GROUPS = [
    (strings, b"string"),
    (keys, b"generic"),
    (lists, b"list"),
    (hashes, b"hash"),
    (sets, b"set"),
    (zsets, b"sorted-set"),
    (server, b"server"),
]
_CONNECTION = {b"ping", b"echo", b"select", b"quit", b"auth", b"hello", b"client"}
_TRANSACTIONS = {b"multi", b"exec", b"discard"}
_NO_KEYS = {b"keys", b"scan", b"randomkey", b"dbsize", b"flushdb", b"flushall"}
_KEY_POSITIONS = {
    b"del": (1, -1, 1),
    b"unlink": (1, -1, 1),
    b"exists": (1, -1, 1),
    b"mget": (1, -1, 1),
    b"mset": (1, -1, 2),
    b"msetnx": (1, -1, 2),
    b"rename": (1, 2, 1),
}
_READONLY = {
    b"get", b"mget", b"strlen", b"getrange", b"exists", b"type", b"ttl", b"pttl", b"keys",
    b"scan", b"randomkey", b"dbsize", b"lrange", b"llen", b"lindex", b"hget", b"hmget",
    b"hgetall", b"hkeys", b"hvals", b"hlen", b"hstrlen", b"hexists", b"smembers",
    b"sismember", b"smismember", b"scard", b"srandmember", b"zscore", b"zmscore", b"zcard",
    b"zrank", b"zrevrank", b"zcount", b"zrange", b"zrevrange", b"zrangebyscore",
    b"zrevrangebyscore", b"zrangebylex", b"zrevrangebylex",
}  # fmt: skip


def _build() -> dict[bytes, Command]:
    table = {}
    for module, group in _GROUPS:
        for name, (handler, arity) in module.COMMANDS.items():
            if module is server:
                group = b"server"
                if name in _CONNECTION:
                    group = b"connection"
                elif name in _TRANSACTIONS:
                    group = b"transactions"
                positions = (0, 0, 0)
            elif name in _NO_KEYS:
                positions = (0, 0, 0)
            else:
                positions = _KEY_POSITIONS.get(name, (1, 1, 1))
            flags = (b"readonly",) if name in _READONLY else ()
            summary = b"%s (%s)" % (name.upper(), group)
            table[name] = Command(name, handler, arity, group, summary, flags, positions)
    return table


COMMANDS = _build()

# What the connection loop looks up: one dict per argument count, each holding the commands
# whose arity accepts that many arguments, keyed by the name as sent (lower- and upper-case
# pre-filled). A hit means "known command, valid arity" in one lookup; a miss (other
# spellings, unknown names, arity errors, very long requests) goes to `resolve`.
DISPATCH_MAX_ARGC = 16
DISPATCH: list[dict[bytes, object]] = [{} for _ in range(DISPATCH_MAX_ARGC + 1)]
for _cmd in COMMANDS.values():
    for _argc in range(1, DISPATCH_MAX_ARGC + 1):
        if _argc == _cmd.arity or (_cmd.arity < 0 and _argc >= -_cmd.arity):
            DISPATCH[_argc][_cmd.name] = DISPATCH[_argc][_cmd.name.upper()] = _cmd.handler


# Commands with subcommands, and their tables (what MULTI checks before queueing).
CONTAINERS = {
    b"client": server.CLIENT_SUBCOMMANDS,
    b"config": server.CONFIG_SUBCOMMANDS,
    b"command": server.COMMAND_SUBCOMMANDS,
}


def resolve(argv: list[bytes]):
    """The handler for a request the dispatch tables missed, or its error reply (bytes)."""
    cmd = COMMANDS.get(argv[0].lower())
    if cmd is None:
        return unknown_command(argv)
    n = len(argv)
    if n != cmd.arity and (cmd.arity > 0 or n < -cmd.arity):
        if cmd.name == b"exec":  # redis aborts (discards) the transaction instead
            return (
                b"-EXECABORT Transaction discarded because of: wrong number of arguments "
                b"for 'exec' command\r\n"
            )
        return arity_error(cmd.name)
    if n > 1 and cmd.name in CONTAINERS:  # redis looks subcommands up before running them
        refused = server.subcommand_error(argv, cmd.name, CONTAINERS[cmd.name])
        if refused is not None:
            return refused
    return cmd.handler


def unknown_command(argv: list[bytes]) -> bytes:
    """redis's reply to an unknown command: its name and the start of its arguments, each
    as C's `%.*s` prints it (cut at 128 bytes in all, cut at a NUL), CR/LF made spaces."""
    args = b""
    for arg in argv[1:]:
        if len(args) >= 128:
            break
        args += b"'%s' " % c_string(arg)[: 128 - len(args)]
    return error(
        b"unknown command '%s', with args beginning with: %s" % (c_string(argv[0])[:128], args)
    )
