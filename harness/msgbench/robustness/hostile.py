"""The hostile-client suite: every server under every probe, judged by what a user would see.

For each implementation of a server workload (and its reference system), the runner starts the
server pinned to the implementation's CPU, measures a well-behaved client alone (quiet), then
runs each probe of the workload's transport (probes.py) from a process of its own while the
well-behaved client keeps making requests, and while the server's RSS is sampled. A probe is
**held** when the server is still up, the well-behaved client was served throughout (no error, no
reply later than the client's timeout), a fresh connection is served afterwards, and the server's
RSS grew no more than the cap the SPEC states (workload.toml `[robustness]`).

The protocol's part is the workload's adapter, `workloads/<w>/robustness.py`: how to start its
server, a well-behaved client, and the hostile bytes (probes.Target). Timings are measured and
reported, never asserted.
"""

from __future__ import annotations

import contextlib
import importlib.util
import multiprocessing
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np

from .. import paths, registry
from ..registry import Impl, Workload
from ..serverproc import Server, ServerSpec
from . import probes

CLIENT_PAUSE_S = 0.005  # between the well-behaved client's requests
RSS_SAMPLE_S = 0.05


@dataclass
class Endpoint:
    host: str
    port: int
    pid: int
    alive: object  # () -> bool


@contextlib.contextmanager
def loopback_server(impl: Impl, cpu: int):
    """A TCP server started from its manifest on a free loopback port, pinned to `cpu` (the
    `server` of the redis and comm adapters)."""
    argv = ("taskset", "-c", str(cpu), *impl.argv())
    srv = Server(ServerSpec(id=impl.id, argv=argv, cwd=impl.cwd()))
    try:
        yield Endpoint("127.0.0.1", srv.port, srv.pid, srv.alive)
    finally:
        srv.terminate()


def adapter(w: Workload) -> ModuleType:
    path = w.dir / "robustness.py"
    if not path.exists():
        raise registry.ManifestError(f"{paths.rel(path)}: no hostile-client adapter")
    spec = importlib.util.spec_from_file_location(f"msgbench_robustness_{w.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def caps(w: Workload) -> dict:
    """workload.toml [robustness]: the SPEC's caps as the suite checks them."""
    c = w.robustness
    return {"rss_growth_mib": float(c.get("rss_growth_mib", 256)),
            "connections": int(c.get("connections", 1000))}  # fmt: skip


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


@dataclass
class ClientStats:
    requests: int = 0
    failures: int = 0
    first_failure: str = ""
    p50_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    retries: int = 0  # requests asked again after a lost datagram (UDP clients)


def _client_loop(make_client, ep: Endpoint, stop: threading.Event) -> ClientStats:
    """The well-behaved client: one request at a time until `stop`; a failed request is counted
    and the client reconnects for the next."""
    lat: list[float] = []
    st = ClientStats()
    client = None
    while not stop.is_set():
        try:
            if client is None:
                client = make_client(ep)
            t0 = time.perf_counter()
            client.exchange()
            lat.append((time.perf_counter() - t0) * 1e3)
        except Exception as e:  # noqa: BLE001 - any failure of the client is what we count
            st.failures += 1
            st.first_failure = st.first_failure or f"{type(e).__name__}: {e}"[:200]
            if client is not None:
                st.retries += getattr(client, "retries", 0)
                client.close()
            client = None
            time.sleep(0.05)
        st.requests += 1
        time.sleep(CLIENT_PAUSE_S)
    if client is not None:
        st.retries += getattr(client, "retries", 0)
        client.close()
    if lat:
        a = np.array(lat)
        st.p50_ms, st.p99_ms = (
            round(float(np.percentile(a, 50)), 3),
            round(float(np.percentile(a, 99)), 3),
        )
        st.max_ms = round(float(a.max()), 3)
    return st


@dataclass
class ProbeResult:
    workload: str
    impl: str
    probe: str
    held: bool
    server_alive: bool
    served_after: bool
    client: dict
    rss_before_kb: int
    rss_peak_kb: int
    rss_growth_kb: int
    cap_kb: int
    attack: dict
    notes: list[str] = field(default_factory=list)


def _attack(probe_fn, target: probes.Target, seconds: float, seed: int, out) -> None:
    try:
        out.put(probe_fn(target, seconds, seed))
    except Exception as e:  # noqa: BLE001 - reported as the probe's own failure
        out.put({"probe_error": f"{type(e).__name__}: {e}"[:300]})


def run_probe(mod, ep: Endpoint, name: str, fn, seconds: float, seed: int, cap_kb: int,
              w: Workload, impl: Impl) -> ProbeResult:  # fmt: skip
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    before = rss_kb(ep.pid)
    peak = [before]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], rss_kb(ep.pid))
            time.sleep(RSS_SAMPLE_S)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stats: dict = {}
    client = threading.Thread(
        target=lambda: stats.setdefault("c", _client_loop(mod.Client, ep, stop)), daemon=True
    )
    proc = ctx.Process(target=_attack, args=(fn, mod.target(ep, w), seconds, seed, out))
    proc.start()
    client.start()
    proc.join(seconds + 60)
    attack = out.get(timeout=5) if not proc.is_alive() else {"probe_error": "did not end"}
    if proc.is_alive():
        proc.kill()
    stop.set()
    client.join(10)
    sampler.join(1)
    alive = bool(ep.alive())
    served_after = False
    if alive:
        time.sleep(0.2)  # let the server close what the probe left behind
        try:
            c = mod.Client(ep)
            c.exchange()
            c.close()
            served_after = True
        except Exception:  # noqa: BLE001 - a server that cannot serve afterwards did not hold
            served_after = False
    st: ClientStats = stats.get("c", ClientStats(failures=1, first_failure="client never ran"))
    growth = max(0, peak[0] - before)
    notes = []
    if "probe_error" in attack:
        notes.append(f"probe: {attack['probe_error']}")
    held = alive and served_after and st.failures == 0 and growth <= cap_kb and st.requests > 0
    return ProbeResult(
        workload=w.name, impl=impl.id, probe=name, held=held, server_alive=alive,
        served_after=served_after, client=asdict(st), rss_before_kb=before, rss_peak_kb=peak[0],
        rss_growth_kb=growth, cap_kb=cap_kb, attack=attack, notes=notes,
    )  # fmt: skip


def quiet(mod, ep: Endpoint, seconds: float) -> ClientStats:
    stop = threading.Event()
    timer = threading.Timer(seconds, stop.set)
    timer.start()
    st = _client_loop(mod.Client, ep, stop)
    timer.cancel()
    return st


def run(w: Workload, impls: list[Impl], seconds: float, seed: int, probe_names: list[str],
        on_done) -> dict:  # fmt: skip
    """Every probe against every chosen implementation of `w`; results as a document."""
    mod = adapter(w)
    table = probes.UDP_PROBES if mod.TRANSPORT == "udp" else probes.TCP_PROBES
    chosen = {n: f for n, f in table.items() if not probe_names or n in probe_names}
    cpus = sorted(os.sched_getaffinity(0))
    impl_cpu, driver_cpus = cpus[-1], cpus[:-1] or cpus
    c = caps(w)
    cap_kb = int(c["rss_growth_mib"] * 1024)
    doc: dict = {"workload": w.name, "seconds_per_probe": seconds, "seed": seed, "caps": c,
                 "placement": {"impl_cpu": impl_cpu, "driver_cpus": driver_cpus},
                 "impls": {}}  # fmt: skip
    own = os.sched_getaffinity(0)
    os.sched_setaffinity(0, driver_cpus)
    try:
        for impl in impls:
            # A fresh server for the quiet measurement and for each probe: one probe's damage
            # (or held connections) never weighs on the next one's verdict.
            with mod.server(impl, impl_cpu) as ep:
                q = quiet(mod, ep, min(seconds, 5.0))
            rows = []
            for name, fn in chosen.items():
                with mod.server(impl, impl_cpu) as ep:
                    r = run_probe(mod, ep, name, fn, seconds, seed, cap_kb, w, impl)
                rows.append(asdict(r))
                on_done(r)
            doc["impls"][impl.id] = {"quiet": asdict(q), "probes": rows}
    finally:
        os.sched_setaffinity(0, own)
    return doc
