"""node_main: the node program as the harness runs it (SPEC §7): READY, replies, counters,
hostile input, signals, exit statuses."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import threading
import time

import pytest
from conftest import CONTROLLER_ADDR, IMPL_DIR, NODE_ADDR, OTHER_ADDR
from echonet_py import frame, node_main

GET_36 = bytes.fromhex(
    "1081 0002 0ef001 0ef001 62 0c 8000 8200 8300 8a00 9d00 9e00 9f00 d300 d400 d500 d600 d700"
)


def reply_94(addr: str) -> bytes:
    """SPEC §6's 94-byte reply, for a node at `addr`."""
    return bytes.fromhex(
        "1081 0002 0ef001 0ef001 72 0c 800130 8204010e0100 8311feffffff000000000000000000"
        + socket.inet_aton(addr).hex()
        + "8a03ffffff 9d030280d5 9e0100 9f0d0c8082838a9d9e9fd3d4d5d6d7 d303000001 d4020002"
        " d50401013001 d60401013001 d703010130"
    )


def counters(text: str) -> dict:
    lines = text.splitlines()
    assert len(lines) == 1, text
    data = json.loads(lines[0])
    assert list(data) == [
        "received", "requests", "replies", "ignored", "dropped_malformed", "dropped_format2",
        "send_errors",
    ]  # fmt: skip
    assert all(type(v) is int for v in data.values())
    assert data["received"] == sum(
        data[k] for k in ("requests", "ignored", "dropped_malformed", "dropped_format2")
    )
    return data


def test_the_36_byte_get_over_udp(start_node, port, client):
    node = start_node(port)
    client.sendto(GET_36, (NODE_ADDR, port))
    data, source = client.recvfrom(65536)
    assert source == (NODE_ADDR, port)
    assert data == reply_94(NODE_ADDR) and len(data) == 94
    status, out, err = node.stop()
    assert status == 0 and err == ""
    assert counters(out) == {
        "received": 1, "requests": 1, "replies": 1, "ignored": 0, "dropped_malformed": 0,
        "dropped_format2": 0, "send_errors": 0,
    }  # fmt: skip


def test_ifaddr_is_the_address_in_the_identification_number(start_node, port, client):
    start_node(port, "--ifaddr", OTHER_ADDR)
    client.sendto(GET_36, (NODE_ADDR, port))
    assert client.recv(65536) == reply_94(OTHER_ADDR)


def test_replies_go_to_the_source_port(start_node, port):
    start_node(port)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as other:
        other.bind((OTHER_ADDR, 0))
        other.settimeout(1)
        other.sendto(bytes.fromhex("1081 0042 05ff01 013001 62 01 8000"), (NODE_ADDR, port))
        data, source = other.recvfrom(65536)
    assert data == bytes.fromhex("1081 0042 013001 05ff01 72 01 800131")


HOSTILE = [
    (b"", "dropped_malformed"),
    (b"\x10", "dropped_malformed"),
    (bytes.fromhex("1081 0001 05ff01 0ef001 62 00"), "dropped_malformed"),
    (bytes.fromhex("1081 0001 05ff01 0ef001 62 05 8000"), "dropped_malformed"),
    (bytes.fromhex("1081 0001 05ff01 0ef001 61 01 80ff 30"), "dropped_malformed"),
    (bytes.fromhex("1081 0001 05ff01 0ef001 62 01 8000 00"), "dropped_malformed"),
    (bytes.fromhex("1181 0001 05ff01 0ef001 62 01 8000"), "dropped_malformed"),
    (bytes(65507), "dropped_malformed"),  # the largest datagram there is
    (b"\x10\x81" + bytes(65505), "dropped_malformed"),
    (bytes.fromhex("1082 0001 05ff01 0ef001 62 01 8000"), "dropped_format2"),
    (bytes.fromhex("1081 0001 05ff01 0ef002 62 01 8000"), "ignored"),
    (bytes.fromhex("1081 0001 05ff01 0ef001 72 01 800130"), "ignored"),
    (bytes.fromhex("1081 0001 05ff01 013001 60 01 8001 30"), "requests"),  # SetI: no reply
]


def test_hostile_input_is_counted_and_never_answered(start_node, port, client):
    node = start_node(port)
    for data, _ in HOSTILE:
        client.sendto(data, (NODE_ADDR, port))
    # The node is still there and answers in order.
    client.sendto(bytes.fromhex("1081 0077 05ff01 013001 62 01 8000"), (NODE_ADDR, port))
    assert client.recv(65536) == bytes.fromhex("1081 0077 013001 05ff01 72 01 800130")
    status, out, err = node.stop(signal.SIGINT)
    assert status == 0 and err == ""
    expected = {k: 0 for k in ("ignored", "dropped_malformed", "dropped_format2", "send_errors")}
    for _, kind in HOSTILE:
        expected[kind] = expected.get(kind, 0) + 1
    expected["requests"] += 1
    assert counters(out) == {
        "received": len(HOSTILE) + 1, "replies": 1, **expected,
    }  # fmt: skip


def test_a_flood_does_not_stop_the_node_answering_others(start_node, port, client):
    node = start_node(port)
    stop = threading.Event()

    def flood() -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind((OTHER_ADDR, 0))
            junk = [b"\x10\x81\x00", bytes.fromhex("1082 0001 05ff01 0ef001 62 01 8000")]
            i = 0
            while not stop.is_set():
                s.sendto(junk[i & 1], (NODE_ADDR, port))
                i += 1

    flooder = threading.Thread(target=flood)
    flooder.start()
    try:
        client.settimeout(0.5)
        answered = 0
        for i in range(50):
            tid = (i + 1).to_bytes(2, "big")
            client.sendto(b"\x10\x81" + tid + bytes.fromhex("05ff01 0ef001 62 01 8000"),
                          (NODE_ADDR, port))  # fmt: skip
            for _ in range(5):  # a lost request is resent, like a controller would
                try:
                    if client.recv(65536)[2:4] == tid:
                        answered += 1
                        break
                except TimeoutError:
                    client.sendto(b"\x10\x81" + tid + bytes.fromhex("05ff01 0ef001 62 01 8000"),
                                  (NODE_ADDR, port))  # fmt: skip
        assert answered == 50
        # SIGTERM under flood: the node stops reading and exits at once.
        status, out, err = node.stop(timeout=3)
        assert status == 0 and node.stop_s < 2
    finally:
        stop.set()
        flooder.join()
    c = counters(out)
    assert c["dropped_malformed"] > 0 and c["dropped_format2"] > 0 and c["requests"] >= 50


def test_sigterm_while_idle_ends_the_node_at_once(start_node, port):
    node = start_node(port)
    time.sleep(0.1)
    status, out, _ = node.stop()
    assert status == 0 and node.stop_s < node_main.STOP_CHECK_S
    assert counters(out)["received"] == 0


def test_an_address_in_use_is_exit_1(interpreter, port):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as holder:
        holder.bind((NODE_ADDR, port))
        p = subprocess.run(
            [*interpreter, "node_main.py", "--bind", NODE_ADDR, "--port", str(port)],
            cwd=IMPL_DIR, capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    assert p.returncode == 1 and p.stdout == ""
    assert "in use" in p.stderr and len(p.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    "args",
    [
        ["--verbose"], ["--bind"], ["--bind", "127.1"], ["--bind", "256.0.0.1"],
        ["--bind", "1.2.3.4.5"], ["--bind", "01.2.3.4"], ["--bind", "::1"],
        ["--ifaddr", "x"], ["--port", "0"], ["--port", "65536"], ["--port", "+1"],
        ["--port", "3610x"], ["--bin", "127.0.0.1"], ["extra"],
    ],
)  # fmt: skip
def test_a_bad_command_line_is_exit_2(interpreter, args):
    p = subprocess.run(
        [*interpreter, "node_main.py", *args], cwd=IMPL_DIR, capture_output=True, text=True,
        timeout=30,
    )  # fmt: skip
    assert p.returncode == 2 and p.stdout == "" and p.stderr


def test_help_is_usage_on_stdout(interpreter):
    p = subprocess.run(
        [*interpreter, "node_main.py", "--help"], cwd=IMPL_DIR, capture_output=True, text=True,
        timeout=30,
    )  # fmt: skip
    assert p.returncode == 0 and "--bind" in p.stdout and "--ifaddr" in p.stdout
    assert "--port" in p.stdout and p.stderr == ""


def test_the_counters_start_at_zero_and_the_start_inf_is_not_a_reply(start_node, port):
    node = start_node(port)
    status, out, err = node.stop()
    c = counters(out)
    assert status == 0 and c["replies"] == 0
    # On a host without a multicast route the start INF fails: counted and said on stderr.
    assert c["send_errors"] in (0, 1) and (c["send_errors"] == 0) == (err == "")


def test_parse_args_defaults():
    args = node_main.parse_args([])
    assert (args.bind, args.ifaddr, args.port) == ("0.0.0.0", "0.0.0.0", frame.PORT)
    args = node_main.parse_args(["--bind", CONTROLLER_ADDR, "--port", "4000"])
    assert (args.bind, args.ifaddr, args.port) == (CONTROLLER_ADDR, CONTROLLER_ADDR, 4000)
