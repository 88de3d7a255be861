"""Load the implementation's modules for the tests without leaving them importable by name.

The implementation is a folder of plain modules (server_main.py and client_main.py run with
their folder first on sys.path). Other Python implementations in the lab have modules of their
own in the same style, and one pytest process may collect several suites; so the modules are
imported once with this folder first on sys.path, then taken out of sys.modules again (whatever
held those names before is put back) and handed to the tests as the package `comm_py`:
`from comm_py import frame`.
"""

from __future__ import annotations

import asyncio
import importlib
import socket
import sys
import threading
import types
from pathlib import Path

import pytest

IMPL_DIR = Path(__file__).resolve().parent.parent
MODULES = [
    "frame", "bounded_queue", "handler", "listener", "connector", "pattern", "server_main",
    "client_main",
]  # fmt: skip


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
    package = types.ModuleType("comm_py")
    package.__path__ = []  # a package, so `from comm_py.frame import x` works too
    package.IMPL_DIR = IMPL_DIR
    for name, module in loaded.items():
        setattr(package, name, module)
        sys.modules["comm_py." + name] = module
    sys.modules["comm_py"] = package
    return package


if "comm_py" not in sys.modules:
    _load()


class RunningServer:
    """The implementation's Listener on an ephemeral port, serving in a thread of this process."""

    def __init__(self, pool: int = 2, max_body: int | None = None) -> None:
        from comm_py.frame import DEFAULT_MAX_BODY
        from comm_py.listener import Listener

        self.lines: list[str] = []
        self.listener = Listener(0, pool, max_body or DEFAULT_MAX_BODY, self.lines.append)
        self.port = self.listener.port
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._ready.wait(5)

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = self._loop.create_future()
            self._ready.set()
            await self.listener.serve(self._stop)

        asyncio.run(main())

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        self._loop.call_soon_threadsafe(self._stop.set_result, None)
        self._thread.join(5)
        assert not self._thread.is_alive()


@pytest.fixture
def interpreter() -> list[str]:
    """How the harness runs the programs (profiles.toml's {python}): standard library only."""
    return [sys.executable, "-E", "-S"]


@pytest.fixture
def free_port() -> int:
    """A loopback port nothing listens on (bound once, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server():
    s = RunningServer()
    yield s
    s.stop()


@pytest.fixture
def start_server():
    """Factory for a server with other settings (pool, cap)."""
    started: list[RunningServer] = []

    def start(**kwargs) -> RunningServer:
        s = RunningServer(**kwargs)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()
