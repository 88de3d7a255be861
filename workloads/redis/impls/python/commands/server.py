"""Server and connection commands: PING, ECHO, SELECT, QUIT, HELLO, AUTH, INFO, TIME, and the
container commands CLIENT, CONFIG and COMMAND with their subcommands."""

from __future__ import annotations

import os
import resource
import sys
import time
from itertools import islice

from globmatch import compile_pattern
from protocol import (
    EMPTY_ARRAY,
    OK,
    PONG,
    bulk,
    bulk_array,
    c_string,
    integer,
    map_reply,
    verbatim,
)
from store import DATABASES

from commands.common import (
    SYNTAX_ERROR,
    CloseAfterReply,
    CommandError,
    StartTransaction,
    arity_error,
    error_format,
    int32_arg,
    int_arg,
    option,
)

REDIS_VERSION = b"7.0.15"  # what clients are told: the version whose behaviour this follows


def ping(c, argv):
    if len(argv) > 2:
        return arity_error(b"ping")
    if len(argv) == 1:
        return PONG
    return bulk(argv[1])


def echo(c, argv):
    return bulk(argv[1])


def select(c, argv):
    index = int32_arg(argv[1])
    if not 0 <= index < DATABASES:
        return b"-ERR DB index is out of range\r\n"
    c.db = c.server.store.dbs[index]
    return OK


def quit_(c, argv):
    raise CloseAfterReply(OK)


def multi(c, argv):
    raise StartTransaction  # the connection switches to queueing (connection.py)


def exec_(c, argv):
    return b"-ERR EXEC without MULTI\r\n"  # inside MULTI the connection runs EXEC itself


def discard(c, argv):
    return b"-ERR DISCARD without MULTI\r\n"


def auth(c, argv):
    if len(argv) > 3:
        return SYNTAX_ERROR
    if len(argv) == 2:
        return (
            b"-ERR AUTH <password> called without any password configured for the default "
            b"user. Are you sure your configuration is correct?\r\n"
        )
    if argv[1] == b"default":
        return OK
    return b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"


def hello(c, argv):
    version = 0
    if len(argv) >= 2:
        version = int_arg(argv[1], b"-ERR Protocol version is not an integer or out of range\r\n")
        if version not in (2, 3):
            return b"-NOPROTO unsupported protocol version\r\n"
    name = None
    i = 2
    n = len(argv)
    while i < n:
        opt = option(argv[i])
        more = n - 1 - i
        if opt == b"auth" and more >= 2:
            if argv[i + 1] != b"default":
                return b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
            i += 3
        elif opt == b"setname" and more >= 1:
            name = argv[i + 1]
            _check_client_name(name)
            i += 2
        else:
            return error_format(b"Syntax error in HELLO option '%s'" % c_string(argv[i]))
    if name is not None:
        c.name = name or None
    if version:
        c.set_protocol(version)
    return (
        (b"%7\r\n" if c.resp == 3 else b"*14\r\n")
        + b"$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n"
        + bulk(REDIS_VERSION)
        + b"$5\r\nproto\r\n"
        + integer(c.resp)
        + b"$2\r\nid\r\n"
        + integer(c.id)
        + b"$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
        + b"$7\r\nmodules\r\n*0\r\n"
    )


def time_(c, argv):
    now = time.time_ns() // 1000
    return bulk_array([b"%d" % (now // 1_000_000), b"%d" % (now % 1_000_000)])


# --- INFO ----------------------------------------------------------------------------------


def info(c, argv):
    server = c.server
    wanted = {option(a) for a in argv[1:]} or {b"default"}
    everything = bool(wanted & {b"all", b"everything", b"default"})
    sections = []
    for name, build in _INFO_SECTIONS:
        if everything or name.lower() in wanted:
            lines = build(server)
            sections.append(b"# " + name + b"\r\n" + b"".join(b"%s:%s\r\n" % kv for kv in lines))
    return verbatim(b"\r\n".join(sections), c.resp)


def _info_server(server):
    uptime = int(time.time() - server.started)
    return [
        (b"redis_version", REDIS_VERSION),
        (b"redis_mode", b"standalone"),
        (b"os", os.uname().sysname.encode() + b" " + os.uname().release.encode()),
        (b"arch_bits", b"64"),
        (b"multiplexing_api", b"epoll"),
        (b"implementation", b"msgbench-python"),
        (b"python_version", sys.version.split()[0].encode()),
        (b"process_id", b"%d" % os.getpid()),
        (b"tcp_port", b"%d" % server.port),
        (b"uptime_in_seconds", b"%d" % uptime),
        (b"uptime_in_days", b"%d" % (uptime // 86400)),
        (b"hz", b"10"),
    ]


def _info_clients(server):
    return [
        (b"connected_clients", b"%d" % len(server.clients)),
        (b"blocked_clients", b"0"),
        (b"maxclients", b"%d" % server.max_clients),
    ]


def _info_memory(server):
    rss = _rss_bytes()
    return [
        (b"used_memory", b"%d" % rss),
        (b"used_memory_human", _human(rss)),
        (b"used_memory_rss", b"%d" % rss),
        (b"used_memory_peak", b"%d" % _peak_rss_bytes()),
        (b"maxmemory", b"0"),
        (b"maxmemory_policy", b"noeviction"),
        (b"mem_allocator", b"pymalloc"),
    ]


def _info_persistence(server):
    return [(b"loading", b"0"), (b"rdb_changes_since_last_save", b"0"), (b"aof_enabled", b"0")]


def _info_stats(server):
    return [
        (b"total_connections_received", b"%d" % server.connections_received),
        (b"total_commands_processed", b"%d" % server.commands_processed),
        (b"rejected_connections", b"0"),
        (b"expired_keys", b"%d" % server.expired_keys),
    ]


def _info_replication(server):
    return [(b"role", b"master"), (b"connected_slaves", b"0")]


def _info_cpu(server):
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return [
        (b"used_cpu_sys", b"%.6f" % usage.ru_stime),
        (b"used_cpu_user", b"%.6f" % usage.ru_utime),
    ]


def _info_keyspace(server):
    lines = []
    now = time.time_ns() // 1_000_000
    for db in server.store.dbs:
        if len(db):
            # redis reports an estimate too: average a bounded sample of the deadlines
            sample = islice(db.expires.values(), 1000)
            ttls = [d - now for d in sample if d > now]
            avg = sum(ttls) // len(ttls) if ttls else 0
            lines.append(
                (
                    b"db%d" % db.index,
                    b"keys=%d,expires=%d,avg_ttl=%d" % (len(db), len(db.expires), avg),
                )
            )
    return lines


_INFO_SECTIONS = [
    (b"Server", _info_server),
    (b"Clients", _info_clients),
    (b"Memory", _info_memory),
    (b"Persistence", _info_persistence),
    (b"Stats", _info_stats),
    (b"Replication", _info_replication),
    (b"CPU", _info_cpu),
    (b"Keyspace", _info_keyspace),
]


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return _peak_rss_bytes()


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _human(n: int) -> bytes:
    for unit in (b"B", b"K", b"M", b"G"):
        if n < 1024 or unit == b"G":
            return b"%.2f%s" % (n, unit) if unit != b"B" else b"%dB" % n
        n /= 1024
    raise AssertionError("unreachable")


# --- container commands --------------------------------------------------------------------


def subcommand_error(argv, container: bytes, table: dict) -> bytes | None:
    """redis's refusal of `CONTAINER SUB ...` before it runs (or is queued in MULTI): an
    unknown subcommand names the container upper-cased as typed; an arity error names
    `container|sub`. None when the subcommand may run."""
    entry = table.get(argv[1].lower())
    if entry is None:
        return error_format(
            b"unknown subcommand '%s'. Try %s HELP."
            % (c_string(argv[1])[:128], c_string(argv[0]).upper())
        )
    n = len(argv)
    arity = entry[1]
    if n != arity and (arity > 0 or n < -arity):
        return arity_error(container + b"|" + argv[1].lower())
    return None


def subcommand(c, argv, container: bytes, table: dict) -> bytes:
    """Dispatch `CONTAINER SUB ...` as redis does (subcommand_error)."""
    refused = subcommand_error(argv, container, table)
    if refused is not None:
        return refused
    return table[argv[1].lower()][0](c, argv)


def _help(lines: list[bytes]):
    def handler(c, argv):
        return b"*%d\r\n" % len(lines) + b"".join(b"+%s\r\n" % line for line in lines)

    return handler


# CLIENT


def client(c, argv):
    return subcommand(c, argv, b"client", CLIENT_SUBCOMMANDS)


def _client_id(c, argv):
    return integer(c.id)


def _client_setname(c, argv):
    _check_client_name(argv[2])
    c.name = argv[2] or None
    return OK


def _check_client_name(name: bytes) -> None:
    if any(b < 33 or b > 126 for b in name):
        raise CommandError(
            b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n"
        )


def _client_getname(c, argv):
    return c.null if c.name is None else bulk(c.name)


def _client_info(c, argv):
    return verbatim(c.describe() + b"\n", c.resp)


def _client_list(c, argv):
    lines = b"".join(other.describe() + b"\n" for other in c.server.clients.values())
    return verbatim(lines, c.resp)


CLIENT_SUBCOMMANDS = {
    b"id": (_client_id, 2),
    b"setname": (_client_setname, 3),
    b"getname": (_client_getname, 2),
    b"info": (_client_info, 2),
    b"list": (_client_list, -2),
    b"help": (
        _help(
            [
                b"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                b"GETNAME",
                b"    Return the name of the current connection.",
                b"ID",
                b"    Return the ID of the current connection.",
                b"INFO",
                b"    Return information about the current client connection.",
                b"LIST",
                b"    Return information about client connections.",
                b"SETNAME <name>",
                b"    Assign the name <name> to the current connection.",
                b"HELP",
                b"    Print this help.",
            ]
        ),
        2,
    ),
}


# CONFIG

# The parameters CONFIG GET knows, as the reference is started (persistence off).
CONFIG_PARAMETERS = {b"save": b"", b"appendonly": b"no", b"databases": b"16"}


def config(c, argv):
    return subcommand(c, argv, b"config", CONFIG_SUBCOMMANDS)


def _config_get(c, argv):
    found: dict[bytes, tuple[bytes, bytes]] = {}
    for asked in argv[2:]:
        pattern = asked.lower()
        matches = compile_pattern(pattern) if pattern != b"*" else None
        glob = any(ch in pattern for ch in b"*?[")
        for name, value in CONFIG_PARAMETERS.items():
            if name not in found and (matches is None or matches(name)):
                # A name without glob characters is replied as the client wrote it (redis
                # 7.0: CONFIG GET SAVE answers SAVE); a pattern's matches by their own names.
                found[name] = (name if glob else asked, value)
    flat = []
    for shown, value in found.values():
        flat += [shown, value]
    return map_reply(flat, c.resp)


def _config_set(c, argv):
    if len(argv) % 2:
        return arity_error(b"config|set")
    return OK


def _config_ok(c, argv):
    return OK


CONFIG_SUBCOMMANDS = {
    b"get": (_config_get, -3),
    b"set": (_config_set, -4),
    b"resetstat": (_config_ok, 2),
    b"rewrite": (
        lambda c, argv: b"-ERR The server is running without a config file\r\n",
        2,
    ),
    b"help": (
        _help(
            [
                b"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                b"GET <pattern>",
                b"    Return parameters matching the glob-like <pattern> and their values.",
                b"SET <directive> <value>",
                b"    Set the configuration <directive> to <value>.",
                b"RESETSTAT",
                b"    Reset statistics reported by the INFO command.",
                b"REWRITE",
                b"    Rewrite the configuration file.",
                b"HELP",
                b"    Print this help.",
            ]
        ),
        2,
    ),
}


# COMMAND


def command(c, argv):
    if len(argv) == 1:
        return _command_infos(c.server.commands.values())
    return subcommand(c, argv, b"command", COMMAND_SUBCOMMANDS)


def _command_count(c, argv):
    return integer(len(c.server.commands))


def _command_list(c, argv):
    return bulk_array(list(c.server.commands))


def _command_info(c, argv):
    commands = c.server.commands
    if len(argv) == 2:
        return _command_infos(commands.values())
    out = [b"*%d\r\n" % (len(argv) - 2)]
    for name in argv[2:]:
        cmd = commands.get(name.lower())
        out.append(_command_info_reply(cmd) if cmd else c.null)
    return b"".join(out)


def _command_infos(commands) -> bytes:
    commands = list(commands)
    return b"*%d\r\n" % len(commands) + b"".join(_command_info_reply(cmd) for cmd in commands)


def _command_info_reply(cmd) -> bytes:
    """The 7.0 shape: name, arity, flags, first key, last key, step, ACL categories, tips,
    key specs, subcommands."""
    first, last, step = cmd.key_positions
    flags = bulk_array(cmd.flags) if cmd.flags else EMPTY_ARRAY
    return (
        b"*10\r\n"
        + bulk(cmd.name)
        + integer(cmd.arity)
        + flags
        + integer(first)
        + integer(last)
        + integer(step)
        + bulk_array([b"@" + cmd.group])
        + EMPTY_ARRAY
        + EMPTY_ARRAY
        + EMPTY_ARRAY
    )


def _command_docs(c, argv):
    """A doc map per command (summary, since, group): enough for redis-cli's help and hints
    (redis-cli asks for COMMAND DOCS when it starts)."""
    commands = c.server.commands
    names = [n.lower() for n in argv[2:]] or list(commands)
    out = []
    for name in names:
        cmd = commands.get(name)
        if cmd is None:
            continue
        out.append(bulk(cmd.name))
        doc = [b"summary", cmd.summary, b"since", b"1.0.0", b"group", cmd.group]
        out.append(map_reply(doc, c.resp))
    header = b"%%%d\r\n" % (len(out) // 2) if c.resp == 3 else b"*%d\r\n" % len(out)
    return header + b"".join(out)


COMMAND_SUBCOMMANDS = {
    b"count": (_command_count, 2),
    b"list": (_command_list, -2),
    b"info": (_command_info, -2),
    b"docs": (_command_docs, -2),
    b"help": (
        _help(
            [
                b"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                b"(no subcommand)",
                b"    Return details about all Redis commands.",
                b"COUNT",
                b"    Return the total number of commands in this Redis server.",
                b"LIST",
                b"    Return a list of all commands in this Redis server.",
                b"INFO [<command-name> ...]",
                b"    Return details about multiple Redis commands.",
                b"DOCS [<command-name> ...]",
                b"    Return documentation details about multiple Redis commands.",
                b"HELP",
                b"    Print this help.",
            ]
        ),
        2,
    ),
}


COMMANDS = {
    b"ping": (ping, -1),
    b"echo": (echo, 2),
    b"select": (select, 2),
    b"quit": (quit_, -1),
    b"multi": (multi, 1),
    b"exec": (exec_, 1),
    b"discard": (discard, 1),
    b"auth": (auth, -2),
    b"hello": (hello, -1),
    b"time": (time_, 1),
    b"info": (info, -1),
    b"client": (client, -2),
    b"config": (config, -2),
    b"command": (command, -1),
}
