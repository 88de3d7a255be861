"""One name for one part: every implementation of a workload has the workload's parts under the
same names, and each language keeps its unit tests in one layout across workloads.

The parts are declared twice, for two readers: `[[parts]]` in workload.toml (for this check)
and the `## Parts` table at the end of SPEC.md (for people); both must list the same names.

A part is found among an implementation's `[metrics] sources` (so the code-size figures count
it too) as a file whose stem is the name, or a file inside a folder of that name. A part
`group/member` (e.g. `commands/strings`) is `group/member.<ext>` where modules nest in folders
(Python packages, Rust modules) and `group_member.<ext>` where a folder is one flat unit (C,
C++, Go: a Go folder is one package).

An implementation opts out only in its impl.toml, with a reason: `[layout] exempt = "why"` for
the whole implementation (a deliberately minimal floor, a reference binary), or
`[layout.absent] part = "why"` for one part its language or a library provides. An absent
implementation (top-level `absent = "why"`: the language has none, e.g. no official library) has
no program and so no parts: it must have no sources either.
"""

from __future__ import annotations

import re
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ROOT / "workloads"

EXTENSIONS = {
    "c": {".c", ".h"},
    "cpp": {".cpp", ".hpp"},
    "rust": {".rs"},
    "go": {".go"},
    "python": {".py"},
}
NESTED = {"python", "rust"}  # group members live in <group>/<member>.<ext>


@dataclass
class Impl:
    workload: str
    dir: Path
    language: str
    sources_globs: list[str]
    layout: dict
    absent: str = ""  # impl.toml `absent`: no program in this language (nothing to lay out)

    @property
    def id(self) -> str:
        return self.dir.name

    def sources(self) -> list[Path]:
        found: set[Path] = set()
        for pattern in self.sources_globs:
            found.update(p.resolve() for p in self.dir.glob(pattern) if p.is_file())
        return sorted(found)


def declared_parts(workload_dir: Path) -> list[dict]:
    with open(workload_dir / "workload.toml", "rb") as f:
        return tomllib.load(f).get("parts", [])


def spec_parts(workload_dir: Path) -> list[str]:
    """The part names of the `## Parts` table in SPEC.md (first column, in backticks)."""
    text = (workload_dir / "SPEC.md").read_text()
    m = re.search(r"^## Parts\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if m is None:
        return []
    return re.findall(r"^\|\s*`([^`]+)`\s*\|", m.group(1), re.M)


def impls_of(workload_dir: Path) -> list[Impl]:
    out = []
    for manifest in sorted(workload_dir.glob("impls/*/impl.toml")):
        with open(manifest, "rb") as f:
            data = tomllib.load(f)
        out.append(
            Impl(
                workload=workload_dir.name,
                dir=manifest.parent,
                language=data["language"],
                sources_globs=data.get("metrics", {}).get("sources", []),
                layout=data.get("layout", {}),
                absent=data.get("absent", ""),
            )
        )
    return out


def _relative(path: Path, impl: Impl) -> Path:
    """Where a source sits for naming purposes: relative to the implementation, or for a file
    shared from a sibling implementation (../c/src/host.c), relative to that sibling."""
    try:
        return path.relative_to(impl.dir.resolve())
    except ValueError:
        return path.relative_to(impl.dir.resolve().parent)


def part_present(name: str, impl: Impl, sources: list[Path], parts: list[str]) -> bool:
    rels = [_relative(p, impl) for p in sources if p.suffix in EXTENSIONS[impl.language]]
    if "/" in name:
        group, member = name.split("/", 1)
        if impl.language in NESTED:
            return any(r.stem == member and r.parent.name == group for r in rels)
        return any(r.stem == f"{group}_{member}" for r in rels)
    # commands/server.py is a member of the group `commands`, not the part `server`.
    groups = {p.split("/")[0] for p in parts}
    return any(
        (r.stem == name and not groups & set(r.parts[:-1])) or name in r.parts[:-1] for r in rels
    )


def layout_problems(impl: Impl, parts: list[str]) -> list[str]:
    """What is wrong with the parts of one implementation (empty: nothing)."""
    if impl.absent:  # no program, so no parts; and nothing that looks like one (never faked)
        code = [p for p in impl.dir.rglob("*") if p.suffix in EXTENSIONS[impl.language]]
        if impl.sources_globs or code:
            return ["an absent implementation has sources"]
        return []
    if impl.layout.get("exempt"):
        return []
    problems = []
    absent = impl.layout.get("absent", {})
    sources = impl.sources()
    for name, why in absent.items():
        if name not in parts:
            problems.append(f"[layout.absent] names '{name}', which is not a part")
        elif not str(why).strip():
            problems.append(f"[layout.absent] {name}: no reason given")
        elif part_present(name, impl, sources, parts):
            problems.append(f"[layout.absent] {name}: but the part is there (stale exemption)")
    for name in parts:
        if name not in absent and not part_present(name, impl, sources, parts):
            problems.append(f"part '{name}' missing")
    return problems


def _code_stems(impl: Impl) -> set[str]:
    """Stems a unit test may be named after: the sources' file and folder names."""
    stems = set()
    for p in impl.sources():
        rel = _relative(p, impl)
        stems.add(rel.stem)
        stems.update(rel.parts[:-1])
    return stems


def unit_test_problems(impl: Impl) -> list[str]:
    """Unit tests outside the language's one layout (empty: none).

    C: tests/test_<unit>.c; C++: tests/<unit>_test.cpp (GoogleTest's naming); both run by
    ctest, helpers as headers beside them. Go: <file>_test.go beside <file>.go, and a fuzz
    target of that file as <file>_fuzz_test.go (docs/robustness.md). Python:
    tests/test_<module>.py. Rust: `#[cfg(test)] mod tests { ... }` inline at the end of the file
    under test; Cargo's tests/ folder only for black-box tests of a library's public API.
    """
    d, lang = impl.dir, impl.language
    stems = _code_stems(impl)
    problems = []
    if lang in ("c", "cpp"):
        tests = d / "tests"
        for f in sorted(tests.rglob("*")) if tests.is_dir() else []:
            if f.is_dir() or f.suffix in (".h", ".hpp"):
                continue
            m = re.fullmatch(r"test_(\w+)\.c" if lang == "c" else r"(\w+)_test\.cpp", f.name)
            if m is None or m.group(1) not in stems:
                want = "test_<unit>.c" if lang == "c" else "<unit>_test.cpp"
                problems.append(f"{f.relative_to(d)}: not {want} for a source <unit>")
    elif lang == "go":
        for f in sorted(d.rglob("*_test.go")):
            stem = re.sub(r"(_fuzz)?_test\.go$", "", f.name)
            if not (f.parent / f"{stem}.go").exists():
                problems.append(f"{f.relative_to(d)}: no {stem}.go beside it")
    elif lang == "python":
        for f in sorted(d.rglob("*.py")):
            rel = f.relative_to(d)
            if rel.parts[0] != "tests":
                if f.name.startswith("test_"):
                    problems.append(f"{rel}: a test outside tests/")
                continue
            if f.name == "conftest.py":
                continue
            m = re.fullmatch(r"test_(\w+)\.py", f.name)
            if m is None or m.group(1) not in stems:
                problems.append(f"{rel}: not tests/test_<module>.py for a module of the impl")
    elif lang == "rust":
        src = d / "src"
        for f in sorted(src.rglob("*.rs")):
            rel = f.relative_to(d)
            if f.name == "tests.rs" or "tests" in rel.parts[:-1]:
                problems.append(f"{rel}: unit tests belong inline in the file under test")
            text = f.read_text()
            if re.search(r"^\s*#\[path\s*=", text, re.M):
                problems.append(f"{rel}: #[path] module (tests out of line?)")
            if re.search(r"^\s*(pub\s+)?mod tests\s*;", text, re.M):
                problems.append(f"{rel}: `mod tests;` points to another file; inline it")
    return problems


def _all_impls() -> list[Impl]:
    return [i for w in sorted(WORKLOADS.iterdir()) if w.is_dir() for i in impls_of(w)]


def _workloads() -> list[Path]:
    return sorted(p.parent for p in WORKLOADS.glob("*/workload.toml"))


@pytest.mark.parametrize("wdir", _workloads(), ids=lambda p: p.name)
def test_spec_and_manifest_list_the_same_parts(wdir: Path):
    parts = declared_parts(wdir)
    assert parts, f"{wdir.name}: no [[parts]] in workload.toml"
    assert all(p.get("name") and p.get("what") for p in parts), "every part needs name and what"
    names = [p["name"] for p in parts]
    assert len(set(names)) == len(names), f"{wdir.name}: a part is declared twice"
    assert spec_parts(wdir) == names, f"{wdir.name}: SPEC.md's ## Parts differs from workload.toml"


@pytest.mark.parametrize("wdir", _workloads(), ids=lambda p: p.name)
def test_part_names_are_importable_python_modules(wdir: Path):
    # Python implementations import their parts as top-level modules from their own folder: a
    # part named like a standard-library module (queue, glob, numbers) would shadow it.
    for p in declared_parts(wdir):
        top = p["name"].split("/")[0]
        assert re.fullmatch(r"[a-z][a-z0-9_]*", top), f"{p['name']}: not a module name"
        assert top not in sys.stdlib_module_names, f"{p['name']}: shadows the stdlib's {top}"


@pytest.mark.parametrize("impl", _all_impls(), ids=lambda i: f"{i.workload}/{i.id}")
def test_every_part_is_there_under_its_name(impl: Impl):
    if impl.absent:
        assert layout_problems(impl, []) == []
        return
    exempt = impl.layout.get("exempt")
    if exempt is not None:
        assert str(exempt).strip(), "[layout] exempt needs a reason"
        return
    parts = [p["name"] for p in declared_parts(impl.dir.parent.parent)]
    assert impl.sources(), "[metrics] sources match no file"
    assert layout_problems(impl, parts) == []


@pytest.mark.parametrize("impl", _all_impls(), ids=lambda i: f"{i.workload}/{i.id}")
def test_unit_tests_follow_the_language_layout(impl: Impl):
    assert unit_test_problems(impl) == []


# The check itself, on a throw-away copy: it must be able to fail.

PARTS_TOML = """
[[parts]]
name = "protocol"
what = "parsing"

[[parts]]
name = "commands/strings"
what = "string commands"
"""


def _toy(tmp_path: Path, language: str, files: list[str], layout: str = "") -> Impl:
    w = tmp_path / "toy"
    impl_dir = w / "impls" / language
    impl_dir.mkdir(parents=True)
    (w / "workload.toml").write_text(PARTS_TOML)
    ext = sorted(EXTENSIONS[language])[0]
    (impl_dir / "impl.toml").write_text(
        f'id = "{language}"\nlanguage = "{language}"\n[metrics]\nsources = ["**/*{ext}"]\n{layout}'
    )
    for name in files:
        (impl_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (impl_dir / name).write_text("x\n")
    return impls_of(w)[0]


def test_a_missing_or_misnamed_part_is_reported(tmp_path: Path):
    parts = ["protocol", "commands/strings"]
    ok = _toy(tmp_path / "a", "c", ["src/protocol.c", "src/commands_strings.c"])
    assert layout_problems(ok, parts) == []
    # The drift: cmd_strings.cpp beside commands_strings elsewhere.
    drift = _toy(tmp_path / "b", "c", ["src/protocol.c", "src/cmd_strings.c"])
    assert layout_problems(drift, parts) == ["part 'commands/strings' missing"]
    # The flat spelling does not count where modules nest, nor the nested one where they don't.
    flat_py = _toy(tmp_path / "c", "python", ["protocol.py", "commands_strings.py"])
    assert layout_problems(flat_py, parts) == ["part 'commands/strings' missing"]
    nested_go = _toy(tmp_path / "d", "go", ["protocol.go", "commands/strings.go"])
    assert layout_problems(nested_go, parts) == ["part 'commands/strings' missing"]


def test_exemptions_must_be_real(tmp_path: Path):
    parts = ["protocol", "commands/strings"]
    absent = '[layout.absent]\n"commands/strings" = "a library does it"\n'
    ok = _toy(tmp_path / "a", "rust", ["src/protocol.rs"], absent)
    assert layout_problems(ok, parts) == []
    stale = _toy(tmp_path / "b", "rust", ["src/protocol.rs", "src/commands/strings.rs"], absent)
    assert layout_problems(stale, parts) == [
        "[layout.absent] commands/strings: but the part is there (stale exemption)"
    ]
    unknown = _toy(tmp_path / "c", "rust", ["src/protocol.rs"], '[layout.absent]\nglob = "x"\n')
    assert layout_problems(unknown, parts) == [
        "[layout.absent] names 'glob', which is not a part",
        "part 'commands/strings' missing",
    ]


def test_an_absent_implementation_has_no_parts_and_no_sources(tmp_path: Path):
    parts = ["protocol", "commands/strings"]
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "impl.toml").write_text('id = "c"\nabsent = "no official library"\n')
    absent = Impl("toy", tmp_path / "c", "c", [], {}, absent="no official library")
    assert layout_problems(absent, parts) == []
    (tmp_path / "c" / "protocol.c").write_text("x\n")  # a fake one after all
    assert layout_problems(absent, parts) == ["an absent implementation has sources"]
    declared = Impl("toy", tmp_path / "c", "c", ["*.c"], {}, absent="no official library")
    assert layout_problems(declared, parts) == ["an absent implementation has sources"]


def test_misplaced_unit_tests_are_reported(tmp_path: Path):
    go = _toy(tmp_path / "go", "go", ["protocol.go", "protocol_test.go", "fuzz_test.go"])
    assert unit_test_problems(go) == ["fuzz_test.go: no fuzz.go beside it"]
    rust = _toy(tmp_path / "rs", "rust", ["src/protocol.rs", "src/tests/protocol.rs"])
    (rust.dir / "src" / "protocol.rs").write_text(
        '#[cfg(test)]\n#[path = "tests/protocol.rs"]\nmod tests;\n'
    )
    assert unit_test_problems(rust) == [
        "src/protocol.rs: #[path] module (tests out of line?)",
        "src/protocol.rs: `mod tests;` points to another file; inline it",
        "src/tests/protocol.rs: unit tests belong inline in the file under test",
    ]
    py = _toy(tmp_path / "py", "python", ["protocol.py", "tests/test_redis_protocol.py"])
    assert unit_test_problems(py) == [
        "tests/test_redis_protocol.py: not tests/test_<module>.py for a module of the impl"
    ]
    cpp = _toy(tmp_path / "cpp", "cpp", ["src/protocol.cpp", "tests/test_protocol.cpp"])
    assert unit_test_problems(cpp) == [
        "tests/test_protocol.cpp: not <unit>_test.cpp for a source <unit>"
    ]


def test_spec_table_is_read_and_compared(tmp_path: Path):
    w = tmp_path / "toy"
    w.mkdir()
    (w / "workload.toml").write_text(PARTS_TOML)
    (w / "SPEC.md").write_text(
        "# Toy\n\n## Parts\n\n| part | what |\n|---|---|\n| `protocol` | parsing |\n"
    )
    assert spec_parts(w) == ["protocol"]
    assert spec_parts(w) != [p["name"] for p in declared_parts(w)]


def test_a_real_implementation_with_a_part_removed_fails(tmp_path: Path):
    # Guards against a check that silently finds nothing (wrong globs, wrong folder): a copy of
    # a real implementation passes, and fails once one part's file is gone.
    src = WORKLOADS / "redis"
    w = tmp_path / "redis"
    (w / "impls").mkdir(parents=True)
    shutil.copy(src / "workload.toml", w / "workload.toml")
    shutil.copytree(src / "impls" / "go", w / "impls" / "go")
    parts = [p["name"] for p in declared_parts(w)]
    (impl,) = impls_of(w)
    assert layout_problems(impl, parts) == []
    (impl.dir / "globmatch.go").unlink()
    assert layout_problems(impl, parts) == ["part 'globmatch' missing"]
