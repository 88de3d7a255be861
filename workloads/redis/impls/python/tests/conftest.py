"""Load the server's modules for the tests without leaving them importable by name.

The server is a folder of plain modules (main.py runs with its folder first on sys.path).
Another implementation here uses some of the same module names (nativemsg's Python host has
`protocol` and `main`), and scripts/test.sh runs every Python suite in one pytest process.
So the modules are imported once, with this folder first on sys.path, then taken out of
sys.modules again (whatever held those names before is put back), and handed to the tests
as the package `redis_impl`: `from redis_impl import protocol`. Neither suite can then see
the other's modules, whichever is collected first.
"""

import importlib
import sys
import types
from pathlib import Path

IMPL_DIR = Path(__file__).resolve().parent.parent
MODULES = ["protocol", "numeric", "globmatch", "store", "commands", "connection", "server", "main"]


def _ours(name: str) -> bool:
    return name in MODULES or name.startswith("commands.")


def _load() -> types.ModuleType:
    saved = {name: mod for name, mod in sys.modules.items() if _ours(name)}
    for name in saved:
        del sys.modules[name]
    sys.path.insert(0, str(IMPL_DIR))
    try:
        loaded = {name: importlib.import_module(name) for name in MODULES}
        submodules = {n: m for n, m in sys.modules.items() if n.startswith("commands.")}
    finally:
        sys.path.remove(str(IMPL_DIR))
        for name in [n for n in sys.modules if _ours(n)]:
            del sys.modules[name]
        sys.modules.update(saved)
    package = types.ModuleType("redis_impl")
    package.__path__ = []  # a package, so `from redis_impl.protocol import x` works too
    for name, module in loaded.items():
        setattr(package, name, module)
    for name, module in {**loaded, **submodules}.items():
        sys.modules["redis_impl." + name] = module
    sys.modules["redis_impl"] = package
    return package


if "redis_impl" not in sys.modules:
    _load()
