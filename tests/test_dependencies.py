"""requirements/lock.txt: every Python dependency pinned with hashes; .venv installed from it."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from msgbench import toolchains

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def lock_entries(text: str) -> dict[str, list[str]]:
    """{requirement line: its hashes} for every requirement of a pip requirements file, the
    backslash-continued lines of one requirement joined."""
    entries: dict[str, list[str]] = {}
    joined = re.sub(r"\\\n", " ", text)
    for line in joined.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        head, *options = re.split(r"\s+(?=--)", line)
        entries[head.strip()] = [o.split("=", 1)[1] for o in options if o.startswith("--hash=")]
    return entries


def names(requirements: list[str]) -> set[str]:
    return {toolchains.normalize(Requirement(r).name) for r in requirements}


RAY_LOCK = ROOT / "requirements" / "ray-lock.txt"
#: The extra that only requirements/ray-lock.txt holds (the optional cluster runner).
OPTIONAL = "ray"


def declared(optional: bool = False) -> list[Requirement]:
    """Every requirement pyproject.toml declares: run time, each extra, the build backend;
    with optional=True, those of the `ray` extra too."""
    project = PYPROJECT["project"]
    reqs = list(project["dependencies"])
    for name, extra in project.get("optional-dependencies", {}).items():
        if name != OPTIONAL or optional:
            reqs += extra
    reqs += PYPROJECT["build-system"]["requires"]
    return [Requirement(r) for r in reqs]


@pytest.mark.parametrize(("lock", "optional"), [(toolchains.LOCK_FILE, False), (RAY_LOCK, True)])
def test_every_declared_dependency_is_locked_at_a_version_it_allows(lock, optional):
    locked = toolchains.locked_packages(lock)
    for req in declared(optional):
        name = toolchains.normalize(req.name)
        assert name in locked, f"{req} is not in {lock.name}: run scripts/lock.sh"
        assert req.specifier.contains(locked[name], prereleases=True), (
            f"{lock.name} pins {name}=={locked[name]}, pyproject asks {req}: run scripts/lock.sh"
        )


def test_the_ray_lock_is_the_lock_and_ray():
    """make setup-ray adds Ray without moving any package of the lock (scripts/lock.sh
    resolves ray-lock.txt with lock.txt as constraints), and the lock itself has no Ray."""
    base, with_ray = toolchains.locked_packages(), toolchains.locked_packages(RAY_LOCK)
    assert "ray" not in base and "ray" in with_ray
    moved = {n: (v, with_ray.get(n)) for n, v in base.items() if with_ray.get(n) != v}
    assert not moved, f"(lock, ray-lock) differ: {moved}; run scripts/lock.sh"


@pytest.mark.parametrize("lock", [toolchains.LOCK_FILE, RAY_LOCK], ids=["lock", "ray-lock"])
def test_every_lock_entry_is_pinned_exactly_with_a_sha256_hash(lock):
    entries = lock_entries(lock.read_text())
    assert len(entries) == len(toolchains.locked_packages(lock)) > 0
    for head, hashes in entries.items():
        assert re.fullmatch(r"[A-Za-z0-9][\w.-]*==[\w.!+-]+", head), f"not an exact pin: {head}"
        assert hashes, f"{head} has no hash (setup installs with --require-hashes)"
        assert all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes), head


def test_the_checks_see_a_missing_hash_and_a_loose_pin():
    entries = lock_entries("a==1.0 \\\n    --hash=sha256:" + "0" * 64 + "\nb==2.0\nc>=3\n")
    assert entries == {"a==1.0": ["sha256:" + "0" * 64], "b==2.0": [], "c>=3": []}


def test_the_lock_is_closed_under_the_installed_packages_requirements():
    """Every dependency of a locked package (on this Python) is locked too: --require-hashes
    would refuse an install that needs one more."""
    locked = toolchains.locked_packages()
    for name in locked:
        for spec in metadata.requires(name) or []:
            req = Requirement(spec)
            if req.marker and not req.marker.evaluate({"extra": ""}):
                continue
            assert toolchains.normalize(req.name) in locked, f"{name} needs {req}, not locked"


def test_the_venv_has_exactly_the_locked_versions():
    installed = toolchains.python_packages()
    locked = toolchains.locked_packages()
    wrong = {n: (v, installed[n]) for n, v in locked.items() if installed[n] != v}
    assert not wrong, f"(locked, installed) differ: {wrong}; run make setup"


def test_python_packages_reports_a_missing_package_as_none(tmp_path):
    lock = tmp_path / "lock.txt"
    lock.write_text("pytest==0.0.1 \\\n    --hash=sha256:00\nno-such-package-xyz==1.0\n")
    got = toolchains.python_packages(lock)
    assert got == {"pytest": metadata.version("pytest"), "no-such-package-xyz": None}


@pytest.mark.parametrize("extra", ["dev", "redis"])
def test_development_and_workload_needs_are_extras_not_run_time(extra):
    """ruff and one workload's packages stay out of what every run needs."""
    project = PYPROJECT["project"]
    run_time = names(project["dependencies"])
    in_extra = names(project["optional-dependencies"][extra])
    assert in_extra and not in_extra & run_time
