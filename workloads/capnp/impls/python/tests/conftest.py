"""Load the implementation's modules for the tests without leaving them importable by name.

The implementation is a folder of plain modules (main.py runs with its folder first on
sys.path). Other Python implementations in the lab have modules of the same names (main,
stream, ...), and one pytest process may collect several suites; so the modules are imported
once with this folder first on sys.path, then taken out of sys.modules again (whatever held
those names before is put back) and handed to the tests as the package `capnp_py`:
`from capnp_py import stream`.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import types
from pathlib import Path

import capnp
import pytest

IMPL_DIR = Path(__file__).resolve().parent.parent
WORKLOAD_DIR = IMPL_DIR.parent.parent
GOLDEN = json.loads((WORKLOAD_DIR / "conformance" / "golden.json").read_text())
MODULES = ["failures", "rng", "stream", "carsales", "catrank", "eval", "modes", "main"]


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
    package = types.ModuleType("capnp_py")
    package.__path__ = []  # a package, so `from capnp_py.stream import x` works too
    for name, module in loaded.items():
        setattr(package, name, module)
        sys.modules["capnp_py." + name] = module
    sys.modules["capnp_py"] = package
    return package


if "capnp_py" not in sys.modules:
    _load()

capnp.remove_import_hook()
_SCHEMAS: dict[str, object] = {}


def schema(case: str):
    """The case's schema, loaded once per session, as main.py loads it."""
    if case not in _SCHEMAS:
        _SCHEMAS[case] = capnp.load(str(WORKLOAD_DIR / "schema" / f"{case}.capnp"))
    return _SCHEMAS[case]


def make_case(name: str):
    from capnp_py import carsales, catrank
    from capnp_py import eval as eval_case

    cls = {"carsales": carsales.Carsales, "catrank": catrank.Catrank, "eval": eval_case.Eval}
    return cls[name](schema(name))


@pytest.fixture(params=["carsales", "catrank", "eval"])
def case(request):
    return make_case(request.param)


def run_program(
    *words: str, stdin: bytes = b"", timeout: float = 60
) -> subprocess.CompletedProcess:
    """main.py as the harness runs it (the venv's interpreter, -E), to its end."""
    return subprocess.run(
        [sys.executable, "-E", str(IMPL_DIR / "main.py"), *words],
        input=stdin, capture_output=True, timeout=timeout, cwd=IMPL_DIR,
    )  # fmt: skip
