"""Real clients against the server: redis-benchmark's full default suite, redis-cli (command
line, an interactive session in a terminal, --pipe mass insertion) and the `redis` Python
client library."""

from __future__ import annotations

import csv
import io
import os
import pty
import select
import shutil
import subprocess
import time

import pytest
import resp
from resp import command

needs_tools = pytest.mark.skipif(
    shutil.which("redis-benchmark") is None or shutil.which("redis-cli") is None,
    reason="redis-tools not installed (run `make setup`)",
)


def benchmark(port: int, *args: str) -> tuple[list[str], str]:
    """Run redis-benchmark --csv; (test names in order, stderr). Fails on exit status or Error."""
    p = subprocess.run(
        ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "--csv", *args],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert p.returncode == 0, f"redis-benchmark exit status {p.returncode}: {p.stderr[-2000:]}"
    assert "Error" not in p.stderr, p.stderr[-2000:]
    rows = list(csv.reader(io.StringIO(p.stdout)))
    assert rows and rows[0][0] == "test", p.stdout[:500]
    return [r[0] for r in rows[1:]], p.stderr


@needs_tools
@pytest.mark.timeout(300)
@pytest.mark.parametrize("pipeline", ["1", "16"])
def test_redis_benchmark_default_suite(server, reference, pipeline):
    args = ["-n", "2000", "-c", "20", "-P", pipeline, "-r", "1000"]
    want, _ = benchmark(reference.port, *args)
    got, _ = benchmark(server.port, *args)
    assert got == want, "not every test of the default suite ran"
    assert len(got) >= 20


@needs_tools
@pytest.mark.semantics
@pytest.mark.setget
def test_redis_benchmark_seed_call(server, reference):
    """Seed 002's call (`-t set,get -c 50`, no pipelining, the redis scenario seed-setget):
    both tests run to the end, and the key redis-benchmark SETs (key:__rand_int__ without -r)
    then holds what redis-server holds after the same call."""
    args = ["-t", "set,get", "-n", "2000", "-c", "50"]
    got, _ = benchmark(server.port, *args)
    assert got == ["SET", "GET"]
    benchmark(reference.port, *args)
    key = "key:__rand_int__"
    want = resp.call(reference.port, "GET", key, setget_marker=True)
    assert want.startswith(b"$3\r\n")  # the 3 bytes redis-benchmark writes by default
    assert resp.call(server.port, "GET", key, setget_marker=True) == want


@needs_tools
def test_redis_benchmark_1000_clients(server):
    got, _ = benchmark(server.port, "-t", "get", "-c", "1000", "-n", "5000")
    assert got == ["GET"]


def cli(port: int, *args: str, stdin: bytes | None = None) -> bytes:
    p = subprocess.run(
        ["redis-cli", "-h", "127.0.0.1", "-p", str(port), *args],
        input=stdin,
        capture_output=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


SESSION = b"""SET greeting "hello world"
GET greeting
INCR visits
INCRBY visits 10
RPUSH queue a b c
LRANGE queue 0 -1
HSET user:1 name ada lang c
HGET user:1 name
SADD tags x
SMEMBERS tags
ZADD board 10 ada 20 bob
ZRANGE board 0 -1 WITHSCORES
EXPIRE greeting 100
TTL greeting
TYPE queue
GET nosuchkey
LPUSH greeting x
DEL greeting queue
EXISTS greeting
FOO bar
DBSIZE
"""


@needs_tools
@pytest.mark.semantics
def test_redis_cli_commands_from_stdin(server, reference):
    resp.flushall(reference.port)
    want = cli(reference.port, stdin=SESSION)
    resp.flushall(server.port)
    got = cli(server.port, stdin=SESSION)
    assert got == want


@needs_tools
@pytest.mark.semantics
def test_redis_cli_command_line(server, reference):
    for args in (
        ["SET", "k", "v w"],
        ["GET", "k"],
        ["MSET", "a", "1", "b", "2"],
        ["MGET", "a", "b", "c"],
        ["KEYS", "a"],
        ["PING"],
        ["ECHO", "é"],
    ):
        assert cli(server.port, *args) == cli(reference.port, *args), args


def _pty_session(port: int, lines: list[bytes], timeout: float = 10.0) -> str:
    """redis-cli in a terminal (it then fetches COMMAND DOCS for its hints); the transcript."""
    pid, fd = pty.fork()
    if pid == 0:  # child: exec redis-cli interactively
        # TERM=dumb: linenoise reads plain lines (no cursor-position queries to answer).
        env = {**os.environ, "TERM": "dumb"}
        os.execvpe("redis-cli", ["redis-cli", "-h", "127.0.0.1", "-p", str(port)], env)
    out = bytearray()
    try:
        deadline = time.monotonic() + timeout

        def read_for(seconds: float) -> None:
            end = min(time.monotonic() + seconds, deadline)
            while time.monotonic() < end:
                r, _, _ = select.select([fd], [], [], 0.05)
                if r:
                    try:
                        out.extend(os.read(fd, 65536))
                    except OSError:
                        return

        read_for(0.5)
        for line in lines:
            os.write(fd, line + b"\r")
            read_for(0.3)
        os.write(fd, b"quit\r")
        read_for(0.5)
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)
    return out.decode(errors="replace")


@needs_tools
@pytest.mark.semantics
def test_redis_cli_interactive_session(server):
    text = _pty_session(server.port, [b"SET a 1", b"GET a", b"HSET h f v", b"HGETALL h"])
    assert "(error)" not in text, text
    assert "OK" in text and '"1"' in text and '1) "f"' in text, text


@needs_tools
@pytest.mark.semantics
def test_redis_cli_pipe_mass_insertion(server):
    stream = b"".join(command("SET", f"key:{i}", f"value:{i}") for i in range(10_000))
    out = cli(server.port, "--pipe", stdin=stream)
    assert b"errors: 0, replies: 10000" in out, out
    assert resp.call(server.port, "DBSIZE") == b":10000\r\n"
    assert resp.call(server.port, "GET", "key:9999") == b"$10\r\nvalue:9999\r\n"


@pytest.mark.semantics
@pytest.mark.parametrize(
    "protocol",
    [
        pytest.param(None, id="default", marks=pytest.mark.resp3),  # redis-py 8 sends HELLO 3
        pytest.param(2, id="resp2"),
    ],
)
def test_redis_python_client(server, protocol):
    redis = pytest.importorskip("redis")
    kwargs = {"protocol": protocol} if protocol else {}
    r = redis.Redis(host="127.0.0.1", port=server.port, socket_timeout=10, **kwargs)
    assert r.ping()
    assert r.set("name", "ada") and r.get("name") == b"ada"
    assert r.set("name", "bob", nx=True) is None
    assert r.incr("n") == 1 and r.incrby("n", 5) == 6 and r.incrbyfloat("f", 1.5) == 1.5
    assert r.mset({"a": 1, "b": 2}) and r.mget("a", "b", "zz") == [b"1", b"2", None]
    assert r.rpush("q", *range(5)) == 5 and r.lrange("q", 1, 2) == [b"1", b"2"]
    assert r.hset("h", mapping={"x": "1", "y": "2"}) == 2
    assert r.hgetall("h") == {b"x": b"1", b"y": b"2"}
    assert r.sadd("s", "a", "b") == 2 and r.smembers("s") == {b"a", b"b"}
    assert r.zadd("z", {"m1": 1.5, "m2": 0.25}) == 2
    assert r.zrange("z", 0, -1, withscores=True) == [(b"m2", 0.25), (b"m1", 1.5)]
    assert r.zpopmin("z") == [(b"m2", 0.25)]
    assert r.expire("name", 100) and 0 < r.ttl("name") <= 100
    assert set(r.scan_iter(match="[ab]")) == {b"a", b"b"}
    assert r.type("q") == b"list" and r.dbsize() == 9
    with r.pipeline(transaction=False) as p:
        p.set("p1", "v").get("p1").delete("p1").exists("p1")
        assert p.execute() == [True, b"v", 1, 0]
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.lpush("name", "x")
    info = r.info()
    assert info["connected_clients"] >= 1
    r.close()
