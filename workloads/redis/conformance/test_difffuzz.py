"""The command-level differential fuzzer (difffuzz.py): a short fixed-seed campaign against each
implementation finds nothing, and the fuzzer itself works: redis-server against redis-server
finds nothing (no false positives), a planted divergence is found and shrunk to its two
commands, a crash is found and the server restarted, and the comparison rules accept only
the differences the SPEC documents."""

from __future__ import annotations

import ast
import shutil
import socket
import sys
import threading
from pathlib import Path

import difffuzz as df
import pytest
import resp

from msgbench import registry
from msgbench.serverproc import ServerSpec

REFERENCE = "redis-server"

# Commands per implementation: a few seconds even for the Python server on a loaded machine.
CAMPAIGN_COMMANDS = 4000
CAMPAIGN_SEED = 20261201
SELFTEST = Path(__file__).resolve().parent / "selftest" / "impl.py"

needs_redis = pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="redis-server not installed (make setup)"
)


def _spec(impl) -> ServerSpec:
    """How conftest starts an implementation (a registry or an ad-hoc one)."""
    return ServerSpec(id=impl.id, argv=tuple(impl.argv()), cwd=impl.cwd())


def _ref_spec() -> ServerSpec:
    return _spec(registry.workload("redis").impls[REFERENCE])


@pytest.mark.semantics
def test_short_campaign_finds_nothing(server, reference, impl, tmp_path):
    # redis-server against itself needs a second instance: the shared one is the reference.
    impls = df.ServerPool(_spec(impl), first=None if impl.id == REFERENCE else server)
    refs = df.ServerPool(_ref_spec(), first=reference)
    try:
        doc = df.campaign(
            impls, refs, commands=CAMPAIGN_COMMANDS, seed=CAMPAIGN_SEED, out_dir=tmp_path
        )
    finally:
        impls.close()
        refs.close()
    assert doc["commands"] >= CAMPAIGN_COMMANDS
    assert {"strings", "keys", "lists", "hashes", "sets", "zsets", "server"} <= set(doc["families"])
    report = "\n".join(
        f"{f['signature']}: {f['reproducer']}\n  got  {f['got']}\n  want {f['want']}\n"
        f"  case {f['case']}"
        for f in doc["findings"]
    )
    assert not doc["findings"], f"{impl.id} differs from redis-server:\n{report}"
    assert doc["restarts"] == 0


# ---- the fuzzer's own tests (no implementation involved) --------------------------------------


class DamagingProxy:
    """A TCP proxy in front of a redis-server that plants a bug: in its replies the bytes
    `planted` become `plantex` (so only a key that holds that value shows it)."""

    def __init__(self, upstream) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open = True
        threading.Thread(target=self._accept, daemon=True).start()

    def alive(self) -> bool:
        return self.open and self.upstream.alive()

    def kill(self) -> None:
        self.open = False
        self.listener.close()

    def _accept(self) -> None:
        while self.open:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            up = socket.create_connection(("127.0.0.1", self.upstream.port))
            threading.Thread(target=self._pump, args=(client, up, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, client, True), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket, damage: bool) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data.replace(b"planted", b"plantex") if damage else data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@pytest.fixture
def two_references():
    """Two redis-servers of the test's own: one behind DamagingProxy, one as the reference."""
    upstream, ref = df.ServerPool(_ref_spec()), df.ServerPool(_ref_spec())
    proxies: list[DamagingProxy] = []

    def proxy():
        proxies.append(DamagingProxy(upstream()))
        return proxies[-1]

    yield proxy, ref
    for p in proxies:
        p.kill()
    upstream.close()
    ref.close()


def _filler(seed: int, n: int) -> list[df.Cmd]:
    """Random commands that leave the key `pk` alone and keep one connection and database."""
    skip = {"flushall", "flushdb", "swapdb", "select", "move", "quit", "multi", "exec"}
    gen = df.Generator(seed, unsupported={"multi"})
    out = []
    while len(out) < n:
        for batch in gen.sequence(50):
            out += [c for c in batch if not c.closes and c.raw is None and c.name not in skip]
    return out[:n]


@pytest.mark.selftest
@needs_redis
def test_minimiser_shrinks_a_planted_divergence(two_references):
    proxy, ref = two_references
    planted = [df.Cmd((b"SET", b"pk", b"planted"), "strings"), df.Cmd((b"GET", b"pk"), "strings")]
    filler = _filler(5, 80)
    cmds = filler[:40] + [planted[0]] + filler[40:] + [planted[1]]
    servers = df.Servers(proxy, ref)
    first = df.replay(servers, cmds, "each", 5.0)
    assert first is not None and first.kind == "divergence", first
    assert first.command == planted[1] and first.index == len(cmds) - 1
    result = df.minimise(servers, cmds, first, timeout=5.0, seconds=120)
    assert result["original_length"] == 82
    assert result["reproducer"] == ["SET pk planted", "GET pk"], result
    assert result["mode"] == "each" and result["one_write"]
    assert (
        result["case"] == "(\"fuzz-divergence-get\", c(['SET', 'pk', 'planted'], ['GET', 'pk'])),"
    )
    # The reproducer alone, on fresh servers, still diverges; the filler alone does not.
    assert df.replay(servers, [df.Cmd(c.args, c.family) for c in planted], "one", 5.0)
    assert df.replay(servers, filler, "each", 5.0) is None


@pytest.mark.selftest
@needs_redis
def test_campaign_against_redis_behind_a_faulty_proxy(tmp_path):
    """campaign() end to end: the self-test's proxy that turns nil into an empty string is
    caught, each finding minimised to a few commands and written out."""
    buggy = ServerSpec(
        id="selftest-nil-as-empty",
        argv=(sys.executable, str(SELFTEST), "--port", "{port}", "--bug", "nil-as-empty"),
        cwd=str(SELFTEST.parent),
    )
    impls, refs = df.ServerPool(buggy), df.ServerPool(_ref_spec())
    try:
        doc = df.campaign(impls, refs, commands=1500, seed=3, out_dir=tmp_path, minimise_s=60)
    finally:
        impls.close()
        refs.close()
    assert doc["findings"], "a nil turned into an empty string went unnoticed"
    for f in doc["findings"]:
        # One command, or three for a nil inside EXEC (MULTI, the command, EXEC).
        assert f["kind"] == "divergence" and f["length"] <= 3, f
        assert b"$0\r\n\r\n" in ast.literal_eval(f["got"]) and b"$-1\r\n" in ast.literal_eval(
            f["want"]
        )
    saved = (tmp_path / "finding-1.resp").read_bytes()
    assert saved and saved == ast.literal_eval(doc["findings"][0]["stream"])
    assert (tmp_path / "difffuzz.json").exists()


class Crashy:
    """An endpoint whose server dies on the first request that mentions `boom`: a redis-server
    behind a proxy that kills it (and closes) then."""

    def __init__(self, upstream) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.dead = False
        threading.Thread(target=self._accept, daemon=True).start()

    def alive(self) -> bool:
        return not self.dead

    def kill(self) -> None:
        self.dead = True
        self.listener.close()

    def _accept(self) -> None:
        while not self.dead:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            up = socket.create_connection(("127.0.0.1", self.upstream.port))
            threading.Thread(target=self._to_server, args=(client, up), daemon=True).start()
            threading.Thread(
                target=DamagingProxy._pump, args=(up, client, False), daemon=True
            ).start()

    def _to_server(self, client: socket.socket, up: socket.socket) -> None:
        try:
            while data := client.recv(65536):
                if b"boom" in data:
                    self.kill()
                    break
                up.sendall(data)
        except OSError:
            pass
        for s in (client, up):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@pytest.mark.selftest
@needs_redis
def test_a_crash_is_found_minimised_and_the_server_restarted():
    upstream, ref = df.ServerPool(_ref_spec()), df.ServerPool(_ref_spec())
    started: list[Crashy] = []

    def crashy():
        started.append(Crashy(upstream()))
        return started[-1]

    try:
        servers = df.Servers(crashy, ref)
        cmds = _filler(9, 30) + [df.Cmd((b"SET", b"boom", b"1"), "strings")] + _filler(10, 5)
        first = df.replay(servers, cmds, "each", 5.0)
        assert first is not None and first.kind == "crash" and first.index == 30, first
        result = df.minimise(servers, cmds[:31], first, timeout=5.0, seconds=60)
        assert result["reproducer"] == ["SET boom 1"], result
        assert len(started) > 2  # every replay that crashed it started another
    finally:
        for c in started:
            c.kill()
        upstream.close()
        ref.close()


@pytest.mark.selftest
def test_ddmin_finds_a_one_minimal_sublist():
    needed = {3, 17, 42}
    calls = []

    def fails(sub):
        calls.append(len(sub))
        return needed <= set(sub)

    assert df.ddmin(list(range(100)), fails, lambda: True) == [3, 17, 42]
    assert len(calls) < 200


def _bulk(text: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(text), text)


def _r(data: bytes):
    value, end = df.parse_reply(data, 0)
    assert end == len(data)
    return value


@pytest.mark.selftest
@pytest.mark.parametrize(
    "args,got,want,same",
    [
        # Unordered collections compare as multisets, never with a member more or less.
        ("SMEMBERS s", b"*2\r\n$1\r\nb\r\n$1\r\na\r\n", b"*2\r\n$1\r\na\r\n$1\r\nb\r\n", True),
        ("SMEMBERS s", b"*2\r\n$1\r\na\r\n$1\r\na\r\n", b"*2\r\n$1\r\na\r\n$1\r\nb\r\n", False),
        ("HGETALL h", b"*4\r\n$1\r\ng\r\n$1\r\n2\r\n$1\r\nf\r\n$1\r\n1\r\n",
         b"*4\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\n2\r\n", True),
        ("HGETALL h", b"*4\r\n$1\r\ng\r\n$1\r\n1\r\n$1\r\nf\r\n$1\r\n2\r\n",
         b"*4\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\n2\r\n", False),
        # Ordered replies stay byte for byte.
        ("LRANGE l 0 -1", b"*2\r\n$1\r\nb\r\n$1\r\na\r\n", b"*2\r\n$1\r\na\r\n$1\r\nb\r\n", False),
        ("ZRANGE z 0 -1", b"*2\r\n$1\r\nb\r\n$1\r\na\r\n", b"*2\r\n$1\r\na\r\n$1\r\nb\r\n", False),
        # TTLs: a little slack, but never for -1/-2 and never a lot.
        ("TTL a", b":99\r\n", b":100\r\n", True),
        ("TTL a", b":90\r\n", b":100\r\n", False),
        ("TTL a", b":-1\r\n", b":-2\r\n", False),
        ("PTTL a", b":99000\r\n", b":99900\r\n", True),
        # A whole SCAN is a set of keys; a partial one is judged by shape.
        ("SCAN 0", b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\nb\r\n$1\r\na\r\n",
         b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n", True),
        ("SCAN 0", b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n",
         b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n", False),
        # Errors are never normalised.
        ("SMEMBERS s", b"-ERR x\r\n", b"-ERR y\r\n", False),
        # INFO: the keys and expires of each database, not avg_ttl.
        ("INFO keyspace", _bulk(b"# Keyspace\r\ndb0:keys=2,expires=0,avg_ttl=7\r\n"),
         _bulk(b"# Keyspace\r\ndb0:keys=2,expires=0,avg_ttl=0\r\n"), True),
        ("INFO keyspace", _bulk(b"# Keyspace\r\ndb0:keys=3,expires=0,avg_ttl=0\r\n"),
         _bulk(b"# Keyspace\r\ndb0:keys=2,expires=0,avg_ttl=0\r\n"), False),
    ],
)  # fmt: skip
def test_equivalent_accepts_only_documented_differences(args, got, want, same):
    words = tuple(w.encode() for w in args.split(" "))
    assert df.equivalent(words, _r(got), _r(want)) is same


@pytest.mark.selftest
def test_generator_is_deterministic_and_covers_the_spec():
    a = [c.encode() for b in df.Generator(1, now=1_800_000_000).sequence(3000) for c in b]
    b = [c.encode() for b in df.Generator(1, now=1_800_000_000).sequence(3000) for c in b]
    assert a == b
    names = {c.name for b in df.Generator(2).sequence(5000) for c in b}
    from cases import ARITY

    assert set(ARITY) - names == set(), "SPEC commands the generator never sends"


@pytest.mark.selftest
@needs_redis
def test_inline_encoding_round_trips_through_redis_quoting():
    value = bytes(range(256))
    cmd = df.Cmd((b"SET", b"a b", value), "strings", inline=True)
    assert cmd.encode().startswith(b'SET "a b" "\\x00') and cmd.encode().endswith(b'"\r\n')
    pool = df.ServerPool(_ref_spec())
    try:
        port = pool().port
        resp.flushall(port)
        got, _ = resp.exchange(port, [cmd.encode() + resp.command("GET", "a b")])
    finally:
        pool.close()
    assert got == b"+OK\r\n$256\r\n" + value + b"\r\n"
