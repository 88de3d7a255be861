"""Toolchain and package facts: versions for run records, and what `doctor` checks."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from . import paths

APT_PACKAGES_FILE = paths.ROOT / "scripts" / "apt-packages.txt"
# The exact Python packages scripts/setup.sh installs (written by scripts/lock.sh).
LOCK_FILE = paths.ROOT / "requirements" / "lock.txt"


@dataclass(frozen=True)
class Tool:
    name: str
    command: list[str]
    pattern: str  # regex whose first group is the version
    fix: str


TOOLS = [
    Tool("gcc", ["gcc", "--version"], r"(\d+\.\d+\.\d+)", "apt-get install -y build-essential"),
    Tool("g++", ["g++", "--version"], r"(\d+\.\d+\.\d+)", "apt-get install -y build-essential"),
    Tool("cmake", ["cmake", "--version"], r"(\d+\.\d+\.\d+)", "apt-get install -y cmake"),
    Tool("ninja", ["ninja", "--version"], r"(\d+\.\d+\.\d+)", "apt-get install -y ninja-build"),
    Tool("rustc", ["rustc", "--version"], r"(\d+\.\d+\.\d+)", "install Rust with rustup"),
    Tool("cargo", ["cargo", "--version"], r"(\d+\.\d+\.\d+)", "install Rust with rustup"),
    Tool("go", ["go", "version"], r"go(\d+\.\d+(?:\.\d+)?)", "install Go from go.dev/dl"),
    Tool(
        "python",
        [str(paths.VENV_PYTHON), "--version"],
        r"(\d+\.\d+\.\d+)",
        "make setup  (creates .venv)",
    ),
    Tool(
        "pkg-config",
        ["pkg-config", "--version"],
        r"(\d+\.\d+(?:\.\d+)?)",
        "apt-get install -y pkg-config",
    ),
    Tool(
        "clang-format",
        ["clang-format", "--version"],
        r"version (\d+\.\d+\.\d+)",
        "apt-get install -y clang-format",
    ),
]


def version(tool: Tool) -> str | None:
    """The tool's version string, or None when it is missing or does not answer."""
    exe = tool.command[0]
    if shutil.which(exe) is None and not exe.startswith("/"):
        return None
    try:
        out = subprocess.run(tool.command, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(tool.pattern, out.stdout + out.stderr)
    return m.group(1) if m else None


def versions() -> dict[str, str | None]:
    return {t.name: version(t) for t in TOOLS}


def normalize(name: str) -> str:
    """A package name as PEP 503 compares them: `Typing_Extensions` is `typing-extensions`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_packages(lock: Path = LOCK_FILE) -> dict[str, str]:
    """{name: version} of every `name==version` pin in the lock file, names normalized."""
    pins = re.findall(r"^([A-Za-z0-9][\w.-]*)==([^\s;\\]+)", lock.read_text(), re.MULTILINE)
    return {normalize(name): version for name, version in pins}


def python_packages(lock: Path = LOCK_FILE) -> dict[str, str | None]:
    """The installed version of each locked package (None: not installed), for run records:
    a package's version can change a result (uvloop's, the Python redis server's)."""
    out: dict[str, str | None] = {}
    for name in locked_packages(lock):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def apt_packages() -> list[str]:
    lines = APT_PACKAGES_FILE.read_text().splitlines()
    return [ln.split("#")[0].strip() for ln in lines if ln.split("#")[0].strip()]


def missing_apt_packages() -> list[str]:
    """Packages from scripts/apt-packages.txt that dpkg does not report as installed."""
    missing = []
    for pkg in apt_packages():
        r = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True
        )
        if "install ok installed" not in r.stdout:
            missing.append(pkg)
    return missing
