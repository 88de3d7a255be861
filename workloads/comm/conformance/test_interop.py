"""Every language's own client program against every language's server: the
interoperability matrix (rows client=<id>, columns the server under test)."""

from __future__ import annotations

import json
import subprocess

import pytest


def run_client(client, port: int, *args: str) -> dict:
    argv = client.client_argv(port) + list(args)
    p = subprocess.run(argv, cwd=client.cwd(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"{client.id} client exit status {p.returncode}: {p.stdout[-500:]}"
    doc = json.loads(p.stdout)
    assert "error" not in doc, doc
    return doc


def test_client_streams_against_server(server, client):
    doc = run_client(client, server.port, "--clients", "4", "--messages", "300", "--size", "3000")
    assert doc["clients"] == 4 and doc["messages"] == 300 and doc["size"] == 3000
    assert doc["bytes"] == 4 * 300 * 3000
    assert doc["mb_per_s"] > 0 and doc["elapsed_s"] > 0


@pytest.mark.parametrize("end", ["quit", "eof"])
def test_client_session_ends_against_server(server, client, end):
    doc = run_client(client, server.port, "--clients", "2", "--messages", "50", "--size", "100",
                     "--end", end)  # fmt: skip
    assert doc["bytes"] == 2 * 50 * 100


def test_client_round_trips_against_server(server, client):
    doc = run_client(client, server.port, "--mode", "rtt", "--messages", "200", "--size", "1024")
    lat = doc["latency_us"]
    assert 0 < lat["p50"] <= lat["p99"] <= lat["max"]


def test_client_reports_a_refused_connection(client):
    """No server on the port: exit status 1 and an error document, not a hang or a crash.
    (No server under test: this runs the client of each implementation under test.)"""
    from msgbench.serverproc import free_port

    port = free_port()
    argv = client.client_argv(port)
    p = subprocess.run(argv + ["--messages", "1"], cwd=client.cwd(), capture_output=True,
                       text=True, timeout=30)  # fmt: skip
    assert p.returncode == 1
    assert "error" in json.loads(p.stdout)
