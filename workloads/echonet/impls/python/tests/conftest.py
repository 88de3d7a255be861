"""Load the implementation's modules for the tests without leaving them importable by name.

The implementation is a folder of plain modules (node_main.py and controller_main.py run with
their folder first on sys.path). Other Python implementations in the lab have modules of the
same names (frame, ...), and one pytest process may collect several suites; so the modules are
imported once with this folder first on sys.path, then taken out of sys.modules again (whatever
held those names before is put back) and handed to the tests as the package `echonet_py`:
`from echonet_py import frame`.
"""

from __future__ import annotations

import importlib
import socket
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

IMPL_DIR = Path(__file__).resolve().parent.parent
MODULES = [
    "frame", "propmap", "objects", "responder", "transport", "options", "controller",
    "node_main", "controller_main",
]  # fmt: skip

# The loopback addresses these tests may use (the lab gives each suite its own block).
NODE_ADDR = "127.0.50.1"
CONTROLLER_ADDR = "127.0.50.2"
OTHER_ADDR = "127.0.50.3"


def _load() -> types.ModuleType:
    saved = {name: sys.modules.pop(name) for name in MODULES if name in sys.modules}
    sys.path.insert(0, str(IMPL_DIR))
    try:
        loaded = {name: importlib.import_module(name) for name in MODULES}
    finally:
        sys.path.remove(str(IMPL_DIR))
        for name in MODULES:
            sys.modules.pop(name, None)
        sys.modules.update(saved)
    package = types.ModuleType("echonet_py")
    package.__path__ = []  # a package, so `from echonet_py.frame import x` works too
    package.IMPL_DIR = IMPL_DIR
    for name, module in loaded.items():
        setattr(package, name, module)
        sys.modules["echonet_py." + name] = module
    sys.modules["echonet_py"] = package
    return package


if "echonet_py" not in sys.modules:
    _load()


@pytest.fixture
def interpreter() -> list[str]:
    """How the harness runs the programs (profiles.toml's {python}): standard library only."""
    return [sys.executable, "-E", "-S"]


def free_port(*addrs: str) -> int:
    """A UDP port free on every one of `addrs` right now (node and controller share a port)."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.bind((addrs[0], 0))
            port = probe.getsockname()[1]
            others = []
            try:
                for addr in addrs[1:]:
                    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                    others.append(s)
                    s.bind((addr, port))
                return port
            except OSError:
                continue
            finally:
                for s in others:
                    s.close()
    raise RuntimeError("no UDP port free on " + ", ".join(addrs))


@pytest.fixture
def port() -> int:
    return free_port(NODE_ADDR, CONTROLLER_ADDR, OTHER_ADDR)


class NodeProcess:
    """node_main.py run as the harness runs it, on NODE_ADDR:port."""

    def __init__(self, interpreter: list[str], port: int, *extra: str) -> None:
        self.port = port
        self.proc = subprocess.Popen(
            [*interpreter, "node_main.py", "--bind", NODE_ADDR, "--port", str(port), *extra],
            cwd=IMPL_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        line = self.proc.stdout.readline()
        assert line == "READY\n", (line, self.proc.stderr.read() if self.proc.poll() else "")

    def stop(self, sig: int = 15, timeout: float = 5.0) -> tuple[int, str, str]:
        """Signal the node; (exit status, rest of stdout, stderr)."""
        start = time.monotonic()
        self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=timeout)
        self.stop_s = time.monotonic() - start
        return self.proc.returncode, out, err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


@pytest.fixture
def start_node(interpreter):
    started: list[NodeProcess] = []

    def start(port: int, *extra: str) -> NodeProcess:
        node = NodeProcess(interpreter, port, *extra)
        started.append(node)
        return node

    yield start
    for node in started:
        node.kill()


@pytest.fixture
def client(port):
    """A UDP socket on CONTROLLER_ADDR:port, as a peer sends from (1 s receive timeout)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((CONTROLLER_ADDR, port))
    s.settimeout(1.0)
    yield s
    s.close()
