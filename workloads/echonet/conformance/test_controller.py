"""Each implementation's own controller (SPEC §8) against a FAKE node the test controls (a
socket on ADDR:3610 of another loopback address): the exact requests it sends, the JSON it
prints, TIDs, timeouts and bounded retries, and what it must ignore (replies from another
address, with another TID, with a non-matching ESV, late or duplicated, malformed)."""

from __future__ import annotations

import struct
import time

import echonet_procs as P
import echonet_spec as S
import pytest
from echonet_spec import AIRCON, CONTROLLER, NODE_PROFILE, h

FAST = ["--timeout-ms", "300", "--retries", "1"]  # a broken controller fails in < 1 s


def props_doc(props) -> list[dict]:
    return [{"epc": f"{e:02x}", "edt": d.hex()} for e, d in props]


def reply_doc(host: str, reply: bytes, attempts: int = 1, ignored: int = 0) -> dict:
    f = S.decode(reply)
    doc = {"host": host, "tid": f"{f.tid:04x}", "seoj": f"{f.seoj:06x}", "deoj": f"{f.deoj:06x}",
           "esv": f"{f.esv:02x}"}  # fmt: skip
    if f.gets is None:
        doc["properties"] = props_doc(f.props)
    else:
        doc["set"], doc["get"] = props_doc(f.props), props_doc(f.gets)
    doc.update(attempts=attempts, ignored=ignored)
    return doc


def assert_doc(got: dict, want: dict, what: str) -> None:
    diff = {
        k: (got.get(k, "<missing>"), v) for k, v in want.items() if got.get(k, "<missing>") != v
    }
    assert not diff, f"{what}: key: (printed, expected) {diff}\nprinted: {got}"


def assert_sent(fake: P.FakeNode, want: list[bytes], what: str) -> None:
    got = fake.datagrams()
    assert got == want, (
        f"{what}: the controller sent\n  " + "\n  ".join(d.hex(" ") for d in got)
        + "\nexpected\n  " + "\n  ".join(d.hex(" ") for d in want)
    )  # fmt: skip
    assert not fake.errors, fake.errors


def assert_attempts(fake: P.FakeNode, n: int, what: str) -> bytes:
    """`n` datagrams came, all the same (a resend is the same datagram, same TID); the first."""
    got = fake.datagrams()
    assert len(got) == n, f"{what}: {len(got)} datagrams sent, not {n}: " + \
        ", ".join(d.hex(" ") for d in got)  # fmt: skip
    assert all(d == got[0] for d in got), f"{what}: the resends differ: {[d.hex() for d in got]}"
    assert not fake.errors, fake.errors
    return got[0]


def with_tid(data: bytes, tid: int) -> bytes:
    return data[:2] + struct.pack(">H", tid) + data[4:]


def run(client, args: list[str], timeout: float = 15) -> P.ControllerRun:
    return P.run_controller(client, args, bind=P.fresh_addr(), timeout=timeout)


# ---- the commands --------------------------------------------------------------------------


def test_get(client):
    with P.FakeNode(P.node_answers(P.fresh_addr())) as fake:
        r = run(client, FAST + ["get", fake.addr, "0EF001", "80,8A,d6"])
        req = S.get_request(1, NODE_PROFILE, [0x80, 0x8A, 0xD6])
        assert_sent(fake, [req], "get")
        reply = S.get_reply(req, NODE_PROFILE, S.node_profile("0.0.0.0"), [0x80, 0x8A, 0xD6])
        assert_doc(r.ok(), reply_doc(fake.addr, reply), "get")


def test_get_sna_is_a_reply(client):
    with P.FakeNode(P.node_answers(P.fresh_addr())) as fake:
        r = run(client, FAST + ["get", fake.addr, "013001", "b3,ff,80"])
        req = S.get_request(1, AIRCON, [0xB3, 0xFF, 0x80])
        reply = S.get_reply(req, AIRCON, S.aircon_initial(), [0xB3, 0xFF, 0x80])
        assert reply[10] == S.GET_SNA
        assert_doc(r.ok(), reply_doc(fake.addr, reply), "get answered with Get_SNA: exit 0")


@pytest.mark.parametrize("esv", [S.SET_RES, S.SETC_SNA], ids=["set_res", "setc_sna"])
def test_setc(client, esv):
    req = S.frame(1, CONTROLLER, AIRCON, S.SETC, [(0x80, h("30")), (0xB3, h("19"))])
    props = [(0x80, b""), (0xB3, b"")] if esv == S.SET_RES else [(0x80, b""), (0xB3, h("19"))]
    reply = S.reply(req, AIRCON, esv, props)
    with P.FakeNode(lambda d, i: [(0, reply, None)]) as fake:
        r = run(client, FAST + ["setc", fake.addr, "013001", "80=30,B3=19"])
        assert_sent(fake, [req], "setc")
        assert_doc(r.ok(), reply_doc(fake.addr, reply), "setc")


def test_seti_without_reply_is_sent_once(client):
    """A SetI that succeeds has no reply: sent once (no retry), waits one --timeout-ms, prints
    esv null, exit 0."""
    with P.FakeNode() as fake:
        t0 = time.monotonic()
        r = run(client, ["--timeout-ms", "200", "--retries", "3", "seti", fake.addr, "013001",
                         "80=31"])  # fmt: skip
        took = time.monotonic() - t0
        doc = r.ok()
        assert_sent(fake, [S.frame(1, CONTROLLER, AIRCON, S.SETI, [(0x80, h("31"))])],
                    "seti (sent once, never retried)")  # fmt: skip
        assert "esv" in doc and doc["esv"] is None, f"esv must be null: {doc}"
        assert took >= 0.18, f"returned after {took:.3f} s, before its --timeout-ms of 0.2 s"


def test_seti_sna(client):
    req = S.frame(1, CONTROLLER, AIRCON, S.SETI, [(0xB3, h("FF"))])
    reply = S.reply(req, AIRCON, S.SETI_SNA, [(0xB3, h("FF"))])
    with P.FakeNode(lambda d, i: [(0, reply, None)]) as fake:
        r = run(client, FAST + ["seti", fake.addr, "013001", "b3=ff"])
        assert_sent(fake, [req], "seti")
        assert_doc(r.ok(), reply_doc(fake.addr, reply), "seti answered with SetI_SNA")


@pytest.mark.parametrize("esv", [S.SETGET_RES, S.SETGET_SNA], ids=["7e", "5e"])
def test_setget(client, esv):
    req = S.setget_frame(1, CONTROLLER, AIRCON, S.SETGET, [(0x80, h("30"))],
                         [(0x80, b""), (0xB3, b"")])  # fmt: skip
    set_part = [(0x80, b"")] if esv == S.SETGET_RES else [(0x80, h("30"))]
    reply = S.reply(req, AIRCON, esv, set_part, [(0x80, h("30")), (0xB3, h("14"))])
    with P.FakeNode(lambda d, i: [(0, reply, None)]) as fake:
        r = run(client, FAST + ["setget", fake.addr, "013001", "80=30", "80,b3"])
        assert_sent(fake, [req], "setget")
        doc = r.ok()
        assert_doc(doc, reply_doc(fake.addr, reply), "setget")
        assert "properties" not in doc, f"a SetGet reply has set and get, not properties: {doc}"


@pytest.mark.parametrize("esv", [S.INF, S.INF_SNA], ids=["inf", "inf_sna"])
def test_inf_req(client, esv):
    req = S.frame(1, CONTROLLER, NODE_PROFILE, S.INF_REQ, [(0xD5, b"")])
    edt = h("01 01 30 01") if esv == S.INF else b""
    reply = S.reply(req, NODE_PROFILE, esv, [(0xD5, edt)])
    with P.FakeNode(lambda d, i: [(0, reply, None)]) as fake:
        r = run(client, FAST + ["inf-req", fake.addr, "0ef001", "d5"])
        assert_sent(fake, [req], "inf-req")
        assert_doc(r.ok(), reply_doc(fake.addr, reply), "inf-req")


def test_port_option_moves_both_ends(client):
    """--port is the controller's own port and the nodes' (SPEC §8)."""
    answers = P.node_answers(P.fresh_addr())
    with P.FakeNode(answers, port=3611) as fake:
        caddr = P.fresh_addr()
        r = P.run_controller(client, FAST + ["--port", "3611", "get", fake.addr, "0ef001", "80"],
                             bind=caddr)  # fmt: skip
        assert len(fake.received) == 1, f"{len(fake.received)} datagrams at port 3611: {r!r}"
        assert fake.received[0][2] == (caddr, 3611), f"sent from {fake.received[0][2]}"
        assert r.ok().get("properties") == [{"epc": "80", "edt": "30"}], r


# ---- TIDs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["faithful", "batched"])
def test_tid_starts_at_1_and_increases(client, mode):
    with P.FakeNode(P.node_answers(P.fresh_addr())) as fake:
        r = run(client, FAST + ["bench", fake.addr, "--mode", mode, "--iterations", "2",
                                "--warmup", "0"])  # fmt: skip
        asks = ([[e] for e in S.NODE_PROFILE_EPCS] if mode == "faithful"
                else [S.NODE_PROFILE_EPCS]) * 2  # fmt: skip
        sent = [S.decode(d) for d in fake.datagrams()]
        got = [(f.tid, f.esv, f.deoj, f.epcs) for f in sent]
        want = [(i + 1, S.GET, NODE_PROFILE, epcs) for i, epcs in enumerate(asks)]
        shown = [(t, f"{e:02x}", f"{d:06x}", bytes(p).hex()) for t, e, d, p in got]
        assert got == want, (
            f"bench --mode {mode} --iterations 2: TIDs 1, 2, 3, ... one Get each; sent "
            f"(TID, ESV, DEOJ, EPCs) {shown}"
        )
        doc = r.ok()
        assert_doc(doc, {"mode": mode, "iterations": 2, "requests": len(want), "retries": 0,
                         "ignored": 0}, "bench")  # fmt: skip
        assert isinstance(doc.get("elapsed_s"), int | float), doc


# ---- timeouts and retries ------------------------------------------------------------------


@pytest.mark.parametrize("retries", [0, 2])
def test_unanswered_request_fails_after_1_plus_retries_attempts(client, retries):
    with P.FakeNode() as fake:
        t0 = time.monotonic()
        r = run(client, ["--timeout-ms", "150", "--retries", str(retries), "get", fake.addr,
                         "0ef001", "80"], timeout=(1 + retries) * 0.15 + 3)  # fmt: skip
        took = time.monotonic() - t0
        time.sleep(0.05)
        assert_attempts(fake, 1 + retries, f"--retries {retries}: 1 + {retries} attempts")
        assert r.status == 1, f"exit status {r.status}, not 1: {r!r}"
        assert "error" in r.json(), f"no error document: {r!r}"
        assert took >= (1 + retries) * 0.15 * 0.9, f"gave up after {took:.3f} s"


def test_retry_that_is_answered_succeeds(client):
    """Only the third attempt is answered: exit 0, attempts 3, the resends carry the same TID."""
    answers = P.node_answers(P.fresh_addr())
    with P.FakeNode(lambda d, i: answers(d, i) if i == 2 else []) as fake:
        r = run(client, ["--timeout-ms", "150", "--retries", "3", "get", fake.addr, "0ef001",
                         "80"])  # fmt: skip
        req = assert_attempts(fake, 3, "three attempts, the third answered")
        reply = S.get_reply(req, NODE_PROFILE, {0x80: h("30")}, [0x80])
        assert_doc(r.ok(), reply_doc(fake.addr, reply, attempts=3), "get after two retries")


# ---- what a controller ignores -------------------------------------------------------------


def _get_80_with_decoys(decoys) -> tuple:
    """A fake node that answers the Get of 0x80 with `decoys(request, fake)` first (each a
    (bytes, socket or None)), then, 50 ms later, the right reply."""

    def respond(data: bytes, index: int):
        right = S.get_reply(data, NODE_PROFILE, {0x80: h("30")}, [0x80])
        out = [(0.0, d, s) for d, s in decoys(data, holder[0])]
        return out + [(0.05, right, None)]

    holder: list = [None]
    return respond, holder


def _decoy_test(client, decoys, others: int, what: str) -> None:
    respond, holder = _get_80_with_decoys(decoys)
    with P.FakeNode(respond, others=others) as fake:
        holder[0] = fake
        r = run(client, ["--timeout-ms", "2000", "--retries", "0", "get", fake.addr, "0ef001",
                         "80"])  # fmt: skip
        req = assert_attempts(fake, 1, what)
        right = S.get_reply(req, NODE_PROFILE, {0x80: h("30")}, [0x80])
        n = len(decoys(req, fake))
        assert_doc(r.ok(), reply_doc(fake.addr, right, ignored=n),
                   f"{what}: ignored (counted), then the right reply taken")  # fmt: skip


def _wrong_value(req: bytes) -> bytes:
    return S.get_reply(req, NODE_PROFILE, {0x80: h("31")}, [0x80])


def test_reply_from_another_address_is_ignored(client):
    _decoy_test(client, lambda req, fake: [(_wrong_value(req), fake.others[0])], 1,
                "a reply with the right TID from another address")  # fmt: skip


def test_reply_with_another_tid_is_ignored(client):
    _decoy_test(client, lambda req, fake: [(with_tid(_wrong_value(req), 2), None),
                                           (with_tid(_wrong_value(req), 0x0100), None)], 0,
                "replies with TIDs 0x0002 and 0x0100 (the TID byte-swapped)")  # fmt: skip


def test_reply_with_another_esv_is_ignored(client):
    def decoys(req, fake):
        return [(S.reply(req, NODE_PROFILE, esv, [(0x80, h("31"))]), None)
                for esv in (S.SET_RES, S.INF, S.INFC_RES, S.SETC_SNA, S.GET)]  # fmt: skip

    _decoy_test(client, decoys, 0, "replies with the right TID and ESVs 71, 73, 7A, 51, 62")


def test_malformed_datagrams_are_ignored(client):
    def decoys(req, fake):
        good = _wrong_value(req)
        return [(good[:11], None), (good + h("00"), None), (h("10 82") + good[2:], None),
                (b"", None)]  # fmt: skip

    _decoy_test(client, decoys, 0, "malformed and format-2 datagrams from the node")


def test_bench_ignores_duplicate_replies(client):
    """Every reply sent twice: the duplicate of request k must not be taken for the reply of
    request k + 1 (bench checks each reply's EPCs, so a controller that does fails)."""
    answers = P.node_answers(P.fresh_addr())
    with P.FakeNode(lambda d, i: answers(d, i) * 2) as fake:
        r = run(client, FAST + ["bench", fake.addr, "--mode", "faithful", "--iterations", "5",
                                "--warmup", "0"])  # fmt: skip
        doc = r.ok()
        assert_doc(doc, {"requests": 60, "retries": 0}, "bench with duplicated replies")
        assert len(fake.received) == 60, f"{len(fake.received)} requests sent, not 60"
        assert isinstance(doc.get("ignored"), int) and doc["ignored"] >= 59, (
            f"ignored = {doc.get('ignored')}: the duplicates must be counted: {doc}"
        )


def test_bench_ignores_a_late_reply(client):
    """The first attempt of request 3 is answered late, after its resend was answered and just
    before the reply to request 5: ignored, and the bench goes on."""
    answers = P.node_answers(P.fresh_addr())
    late: list[bytes] = []

    def respond(data: bytes, index: int):
        tid = struct.unpack(">H", data[2:4])[0]
        if tid == 3 and not late:
            late.extend(r for _, r, _ in answers(data, index))
            return []
        out = [(0.0, r, None) for r in late] if tid == 5 else []
        return out + answers(data, index)

    with P.FakeNode(respond) as fake:
        r = run(client, ["--timeout-ms", "200", "--retries", "2", "bench", fake.addr, "--mode",
                         "faithful", "--iterations", "1", "--warmup", "0"])  # fmt: skip
        doc = r.ok()
        assert_doc(doc, {"requests": 12, "retries": 1, "ignored": 1},
                   "bench with one late reply")  # fmt: skip
        tids = [struct.unpack(">H", d[2:4])[0] for d in fake.datagrams()]
        assert tids == [1, 2, 3, 3, *range(4, 13)], f"TIDs sent: {tids}"


# ---- the command line ----------------------------------------------------------------------

HOST = P.fresh_addr()  # never contacted: every line here is refused before anything is sent
BAD_LINES = {
    "no-command": [],
    "unknown-command": ["frobnicate"],
    "get-no-args": ["get"],
    "get-no-epcs": ["get", HOST, "0ef001"],
    "get-bad-host": ["get", "not-a-host", "0ef001", "80"],
    "get-host-256": ["get", "256.0.0.1", "0ef001", "80"],
    "get-eoj-4-digits": ["get", HOST, "0ef0", "80"],
    "get-eoj-not-hex": ["get", HOST, "0eg001", "80"],
    "get-epc-1-digit": ["get", HOST, "0ef001", "8"],
    "get-epc-not-hex": ["get", HOST, "0ef001", "zz"],
    "get-extra-arg": ["get", HOST, "0ef001", "80", "81"],
    "setc-no-equals": ["setc", HOST, "013001", "80"],
    "setc-odd-hex": ["setc", HOST, "013001", "80=3"],
    "setget-no-epcs": ["setget", HOST, "013001", "80=30"],
    "timeout-not-a-number": ["--timeout-ms", "x", "get", HOST, "0ef001", "80"],
    "retries-negative": ["--retries", "-1", "get", HOST, "0ef001", "80"],
    "port-0": ["--port", "0", "get", HOST, "0ef001", "80"],
    "port-65536": ["--port", "65536", "get", HOST, "0ef001", "80"],
    "unknown-option": ["--no-such-option", "get", HOST, "0ef001", "80"],
    "bench-bad-mode": ["bench", HOST, "--mode", "fast", "--iterations", "1"],
    "bench-no-iterations": ["bench", HOST, "--mode", "faithful"],
    "bench-iterations-word": ["bench", HOST, "--mode", "faithful", "--iterations", "many"],
    "discover-expect-word": ["discover", "--expect", "x"],
}


@pytest.mark.parametrize("name", list(BAD_LINES))
def test_bad_command_line_exits_2(client, name):
    r = run(client, BAD_LINES[name], timeout=5)
    assert r.status == 2, f"{name}: exit status {r.status}, not 2: {r!r}"
    assert r.stderr.strip(), f"{name}: no message on stderr"
    assert r.stdout.strip() == "", f"{name}: stdout must stay empty: {r.stdout!r}"


def test_help_exits_0(client):
    r = run(client, ["--help"], timeout=5)
    assert r.status == 0, f"--help: {r!r}"
    assert r.stdout.strip(), f"--help prints no usage on stdout: {r!r}"
