"""Fixtures for the harness's own tests: a throw-away workload tree with a fake driver."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from msgbench import paths, registry

FAKE_DRIVER = r"""
import json, os, sys
# A stand-in for a real driver: reports a latency that depends on the implementation's argv,
# so tests can check that samples land on the right implementation. "fail" in argv = a failing
# trial; a counter file lets tests see how many trials (warm-up included) ran.
argv = sys.argv[1:]
host = argv[argv.index("--") + 1:]
counter = os.environ.get("FAKE_DRIVER_COUNTER")
if counter:
    with open(counter, "a") as f:
        f.write(" ".join(host) + "\n")
if "fail" in host:
    print(json.dumps({"error": "wrong reply: expected pong"}))
    sys.exit(1)
latency = float(host[-1])
print(json.dumps({"latency_us": {"p50": latency, "p99": latency * 2},
                  "impl": {"cpu_us_per_op": latency / 10, "maxrss_kb": 1000},
                  "args": argv}))
"""


@pytest.fixture
def fake_lab(tmp_path, monkeypatch):
    """A workloads/ tree with workload `toy` (driver = FAKE_DRIVER) and three implementations."""
    root = tmp_path / "workloads"
    toy = root / "toy"
    (toy / "impls").mkdir(parents=True)
    driver = tmp_path / "fake_driver.py"
    driver.write_text(FAKE_DRIVER)
    (toy / "workload.toml").write_text(
        textwrap.dedent(f"""
        name = "toy"
        title = "toy workload"
        kind = "stdio"
        baseline = "floor"
        [drivers.fake]
        argv = ["{sys.executable}", "{driver}"]
        [drivers.needs_browser]
        argv = ["{sys.executable}", "{driver}"]
        requires = ["no-such-browser-xyz"]
        [profiles.smoke]
        repetitions = 3
        [metrics.p50]
        field = "latency_us.p50"
        unit = "µs"
        better = "lower"
        role = "latency"
        percentile = 50
        [metrics.p99]
        field = "latency_us.p99"
        unit = "µs"
        better = "lower"
        role = "latency"
        percentile = 99
        [[scenarios]]
        name = "ping"
        args = ["--iterations", "{{iterations}}"]
        primary = "p50"
        metrics = ["p50", "p99"]
        params.smoke = {{ iterations = 7 }}
        [[scenarios]]
        name = "in-browser"
        driver = "needs_browser"
        args = []
        primary = "p50"
        metrics = ["p50"]
        params.smoke = {{}}
    """)
    )
    for impl_id, latency in (("floor", "10"), ("fast", "12"), ("broken", "fail")):
        d = toy / "impls" / impl_id
        d.mkdir()
        (d / "run.sh").write_text("#!/bin/sh\n")
        (d / "impl.toml").write_text(
            textwrap.dedent(f"""
            id = "{impl_id}"
            language = "c"
            summary = "toy {impl_id}"
            [build]
            system = "none"
            [run]
            argv = ["{{impl_dir}}/run.sh", "{latency}"]
            [metrics]
            sources = ["*.sh"]
        """)
        )
    monkeypatch.setattr(paths, "WORKLOADS", root)
    registry.load.cache_clear()
    yield registry.workload("toy")
    registry.load.cache_clear()


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
