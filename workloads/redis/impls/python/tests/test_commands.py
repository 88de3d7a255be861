"""Commands through the connection's dispatch (Client._execute): replies byte for byte as
redis 7.0.15 gives them, errors included. The differential suite in
workloads/redis/conformance covers far more; these pin what the data structures decide."""

import time

import pytest
from redis_impl.connection import Client
from redis_impl.server import Server


class Transport:
    def __init__(self):
        self.sent = b""

    def write(self, data):
        self.sent += data

    def get_write_buffer_size(self):
        return 0


@pytest.fixture
def client():
    c = Client(Server(port=0))
    c.transport = Transport()
    return c


def run(client, *args) -> bytes:
    argv = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return client._execute([argv], 1 << 30)[0]


def test_unknown_commands_and_arity(client):
    assert run(client, "FOO", "a", "b") == (
        b"-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n"
    )
    assert run(client, "FOO", b"x\r\ny\x00z") == (
        b"-ERR unknown command 'FOO', with args beginning with: 'x  y' \r\n"
    )
    assert run(client, "GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert run(client, "gEt", "missing") == b"$-1\r\n"
    assert run(client, "CONFIG", "GET") == (
        b"-ERR wrong number of arguments for 'config|get' command\r\n"
    )
    assert run(client, "config", "nope") == b"-ERR unknown subcommand 'nope'. Try CONFIG HELP.\r\n"


def test_strings_and_counters(client):
    assert run(client, "SET", "k", "v") == b"+OK\r\n"
    assert run(client, "APPEND", "k", "w") == b":2\r\n"
    assert run(client, "GET", "k") == b"$2\r\nvw\r\n"
    assert run(client, "INCR", "k") == b"-ERR value is not an integer or out of range\r\n"
    assert run(client, "SET", "n", "9223372036854775806") == b"+OK\r\n"
    assert run(client, "INCR", "n") == b":9223372036854775807\r\n"
    assert run(client, "INCR", "n") == b"-ERR increment or decrement would overflow\r\n"
    assert run(client, "GET", "n") == b"$19\r\n9223372036854775807\r\n"  # int-encoded
    assert run(client, "SET", "p", "007") == b"+OK\r\n"
    assert run(client, "INCR", "p") == b"-ERR value is not an integer or out of range\r\n"
    assert run(client, "INCRBYFLOAT", "f", "10.5") == b"$4\r\n10.5\r\n"
    assert run(client, "INCRBYFLOAT", "f", "0.1") == b"$4\r\n10.6\r\n"  # long double, not double
    # redis's own answer: the 80-bit sum printed with %.17Lf
    assert run(client, "INCRBYFLOAT", "f", "5.0e3") == b"$22\r\n5010.60000000000000009\r\n"
    assert run(client, "SET", "k", "v", "NX", "GET") == b"$2\r\nvw\r\n"
    assert run(client, "SET", "k", "v", "EX", "0") == (
        b"-ERR invalid expire time in 'set' command\r\n"
    )
    assert run(client, "SET", "k", "v", "KEEPTTL", "EX", "1") == b"-ERR syntax error\r\n"
    assert (
        run(client, "MSET", "a", "1", "b")
        == b"-ERR wrong number of arguments for 'mset' command\r\n"
    )
    assert (
        run(client, "MGET", "a", "k", "n")
        == b"*3\r\n$-1\r\n$2\r\nvw\r\n$19\r\n9223372036854775807\r\n"
    )


def test_wrongtype(client):
    run(client, "LPUSH", "l", "x")
    wrongtype = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    for args in (("GET", "l"), ("INCR", "l"), ("HSET", "l", "f", "v"), ("SADD", "l", "m"),
                 ("ZADD", "l", "1", "m"), ("APPEND", "l", "x")):  # fmt: skip
        assert run(client, *args) == wrongtype, args


def test_lists_keep_encoded_elements(client):
    assert run(client, "RPUSH", "l", "a", "bb", "") == b":3\r\n"
    assert run(client, "LPUSH", "l", "x", "y") == b":5\r\n"
    assert run(client, "LRANGE", "l", "0", "-1") == (
        b"*5\r\n$1\r\ny\r\n$1\r\nx\r\n$1\r\na\r\n$2\r\nbb\r\n$0\r\n\r\n"
    )
    assert run(client, "LRANGE", "l", "-2", "100") == b"*2\r\n$2\r\nbb\r\n$0\r\n\r\n"
    assert run(client, "LINDEX", "l", "-2") == b"$2\r\nbb\r\n"
    assert run(client, "LSET", "l", "0", "z") == b"+OK\r\n"
    assert run(client, "LREM", "l", "0", "z") == b":1\r\n"
    assert run(client, "RPOP", "l", "2") == b"*2\r\n$0\r\n\r\n$2\r\nbb\r\n"
    assert run(client, "LPOP", "l", "5") == b"*2\r\n$1\r\nx\r\n$1\r\na\r\n"
    assert run(client, "EXISTS", "l") == b":0\r\n"  # an emptied list disappears
    assert run(client, "LPOP", "l", "1") == b"*-1\r\n"


def test_hashes_keep_insertion_order(client):
    assert run(client, "HSET", "h", "b", "1", "a", "2") == b":2\r\n"
    assert run(client, "HSET", "h", "b", "3") == b":0\r\n"
    assert run(client, "HGETALL", "h") == b"*4\r\n$1\r\nb\r\n$1\r\n3\r\n$1\r\na\r\n$1\r\n2\r\n"
    assert run(client, "HINCRBY", "h", "a", "5") == b":7\r\n"
    assert (
        run(client, "HINCRBY", "h", "x", "nope")
        == b"-ERR value is not an integer or out of range\r\n"
    )
    assert run(client, "HDEL", "h", "a", "b", "c") == b":2\r\n"
    assert run(client, "TYPE", "h") == b"+none\r\n"


def test_sets(client):
    assert run(client, "SADD", "s", "10", "2", "-3", "2") == b":3\r\n"
    assert run(client, "SMEMBERS", "s") == b"*3\r\n$2\r\n-3\r\n$1\r\n2\r\n$2\r\n10\r\n"  # intset
    popped = {run(client, "SPOP", "s") for _ in range(3)}
    assert popped == {b"$2\r\n10\r\n", b"$1\r\n2\r\n", b"$2\r\n-3\r\n"}
    assert run(client, "SPOP", "s") == b"$-1\r\n"
    assert run(client, "SPOP", "s", "-1") == b"-ERR value is out of range, must be positive\r\n"


def test_spop_is_random(client):
    seen = set()
    for _ in range(30):
        run(client, "DEL", "s")
        run(client, "SADD", "s", *[f"m{i}" for i in range(30)])
        seen.add(run(client, "SPOP", "s"))
    assert len(seen) > 1


def test_sorted_sets(client):
    assert run(client, "ZADD", "z", "1", "b", "1", "a", "0.1", "c") == b":3\r\n"
    assert run(client, "ZRANGE", "z", "0", "-1", "WITHSCORES") == (
        b"*6\r\n$1\r\nc\r\n$19\r\n0.10000000000000001\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n1\r\n"
    )
    assert run(client, "ZADD", "z", "NX", "XX", "1", "a") == (
        b"-ERR XX and NX options at the same time are not compatible\r\n"
    )
    assert run(client, "ZINCRBY", "z", "2", "a") == b"$1\r\n3\r\n"
    assert run(client, "ZRANK", "z", "a") == b":2\r\n"
    assert run(client, "ZRANGE", "z", "(1", "+inf", "BYSCORE") == b"*1\r\n$1\r\na\r\n"
    assert run(client, "ZRANGE", "z", "0", "-1", "LIMIT", "0", "1") == (
        b"-ERR syntax error, LIMIT is only supported in combination with either BYSCORE "
        b"or BYLEX\r\n"
    )
    assert run(client, "ZADD", "z", "nan", "x") == b"-ERR value is not a valid float\r\n"
    assert run(client, "ZADD", "z", "-0", "m") == b":1\r\n"
    assert run(client, "ZSCORE", "z", "m") == b"$1\r\n0\r\n"  # a listpack stores -0 as 0
    assert run(client, "ZPOPMIN", "z") == b"*2\r\n$1\r\nm\r\n$1\r\n0\r\n"
    assert run(client, "ZPOPMIN", "z", "10") == (
        b"*6\r\n$1\r\nc\r\n$19\r\n0.10000000000000001\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\na\r\n$1\r\n3\r\n"
    )
    assert run(client, "EXISTS", "z") == b":0\r\n"


def test_expiry(client):
    run(client, "SET", "k", "v", "PX", "20")
    assert run(client, "PTTL", "k") in (b":20\r\n", b":19\r\n", b":18\r\n")
    assert run(client, "TTL", "nokey") == b":-2\r\n"
    time.sleep(0.03)
    assert run(client, "GET", "k") == b"$-1\r\n"  # lazily expired
    run(client, "SET", "k", "v")
    assert run(client, "EXPIRE", "k", "100", "GT") == b":0\r\n"  # no TTL counts as infinite
    assert run(client, "EXPIRE", "k", "100", "LT") == b":1\r\n"
    assert run(client, "TTL", "k") == b":100\r\n"
    assert run(client, "EXPIRE", "k", "-1") == b":1\r\n"  # a past deadline deletes
    assert run(client, "EXISTS", "k") == b":0\r\n"


def test_keys_and_scan(client):
    for name in ("hello", "hallo", "hxllo", "other"):
        run(client, "SET", name, "1")
    assert sorted(run(client, "KEYS", "h[ae]llo").split(b"\r\n")[2::2]) == [b"hallo", b"hello"]
    seen = set()
    cursor = b"0"
    while True:
        reply = run(client, "SCAN", cursor, "COUNT", "1", "MATCH", "h*")
        parts = reply.split(b"\r\n")
        cursor = parts[2]
        seen.update(parts[5::2])
        if cursor == b"0":
            break
    assert seen == {b"hello", b"hallo", b"hxllo"}
    assert run(client, "SCAN", "x") == b"-ERR invalid cursor\r\n"


def test_select_and_flush(client):
    run(client, "SET", "a", "1")
    assert run(client, "SELECT", "1") == b"+OK\r\n"
    assert run(client, "GET", "a") == b"$-1\r\n"
    assert run(client, "SELECT", "16") == b"-ERR DB index is out of range\r\n"
    assert run(client, "FLUSHALL") == b"+OK\r\n"
    assert run(client, "SELECT", "0") == b"+OK\r\n"
    assert run(client, "DBSIZE") == b":0\r\n"


def test_config_get_for_redis_benchmark(client):
    assert run(client, "CONFIG", "GET", "save") == b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n"
    assert run(client, "CONFIG", "GET", "appendonly") == b"*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n"
    assert run(client, "CONFIG", "GET", "nothing*") == b"*0\r\n"


def test_output_cap_stops_a_batch(client):
    run(client, "SET", "big", "x" * 1000)
    requests = [[b"GET", b"big"]] * 100
    assert client._execute(requests, 50_000) is None  # over budget: the caller disconnects
    assert len(client._execute(requests, 1 << 30)) == 100


def test_transactions(client):
    assert run(client, "EXEC") == b"-ERR EXEC without MULTI\r\n"
    replies = client._execute(
        [[b"MULTI"], [b"SET", b"a", b"1"], [b"INCR", b"a"], [b"LPUSH", b"a", b"x"], [b"EXEC"]],
        1 << 30,
    )
    assert replies == [
        b"+OK\r\n",
        b"+QUEUED\r\n",
        b"+QUEUED\r\n",
        b"+QUEUED\r\n",
        b"*3\r\n+OK\r\n:2\r\n"
        b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
    ]
    # A refused request (here an arity error) makes EXEC discard the whole transaction;
    # the state carries over from one batch of requests to the next.
    assert client._execute([[b"MULTI"], [b"GET"]], 1 << 30)[1].startswith(b"-ERR wrong number")
    assert run(client, "SET", "b", "1") == b"+QUEUED\r\n"
    assert run(client, "EXEC") == (
        b"-EXECABORT Transaction discarded because of previous errors.\r\n"
    )
    assert run(client, "GET", "b") == b"$-1\r\n"


def test_fuzz_findings(client):
    """Found by difffuzz.py (cases.py fuzz-multi-refuses-bad-subcommands,
    fuzz-srandmember-min-count, fuzz-config-get-name-as-asked)."""
    replies = client._execute(
        [[b"MULTI"], [b"CLIENT", b"NOSUCH"], [b"CONFIG", b"GET"], [b"CLIENT", b"ID"], [b"EXEC"]],
        1 << 30,
    )
    assert replies == [
        b"+OK\r\n",
        b"-ERR unknown subcommand 'NOSUCH'. Try CLIENT HELP.\r\n",
        b"-ERR wrong number of arguments for 'config|get' command\r\n",
        b"+QUEUED\r\n",
        b"-EXECABORT Transaction discarded because of previous errors.\r\n",
    ]
    out_of_range = (
        b"-ERR value is out of range, value must between -9223372036854775807 and "
        b"9223372036854775807\r\n"
    )
    assert run(client, "SRANDMEMBER", "s", "-9223372036854775808") == out_of_range
    assert run(client, "SET", "s", "1") == b"+OK\r\n"
    assert run(client, "SRANDMEMBER", "s", "-9223372036854775808") == out_of_range
    assert run(client, "CONFIG", "GET", "SAVE") == b"*2\r\n$4\r\nSAVE\r\n$0\r\n\r\n"
    assert run(client, "CONFIG", "GET", "sav*") == b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n"


def test_resp3_after_hello_3(client):
    assert run(client, "HELLO", "3").startswith(b"%7\r\n$6\r\nserver\r\n")
    assert run(client, "GET", "missing") == b"_\r\n"
    run(client, "HSET", "h", "f", "v")
    assert run(client, "HGETALL", "h") == b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n"
    run(client, "SADD", "s", "m")
    assert run(client, "SMEMBERS", "s") == b"~1\r\n$1\r\nm\r\n"
    run(client, "ZADD", "z", "1.5", "a")
    assert run(client, "ZSCORE", "z", "a") == b",1.5\r\n"
    assert run(client, "ZRANGE", "z", "0", "-1", "WITHSCORES") == b"*1\r\n*2\r\n$1\r\na\r\n,1.5\r\n"
    assert run(client, "INFO").startswith(b"=")
    assert run(client, "HELLO", "2").startswith(b"*14\r\n")
    assert run(client, "GET", "missing") == b"$-1\r\n"
    assert run(client, "HELLO", "4") == b"-NOPROTO unsupported protocol version\r\n"
