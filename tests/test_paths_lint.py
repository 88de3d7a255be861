"""scripts/check_paths.py: no file of the repository names an absolute path of this machine."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "check_paths.py"

spec = importlib.util.spec_from_file_location("check_paths", SCRIPT)
check_paths = importlib.util.module_from_spec(spec)
sys.modules["check_paths"] = check_paths  # dataclasses look their module up by name
spec.loader.exec_module(check_paths)

# The machine paths below are put together at run time, so that this file names none itself:
# any checker reading the tracked files literally (not only ours, with its allow marker) sees
# "/" + "root", never the path.
ROOT_HOME, HOME, WORK, TMP = ("/" + name for name in ("root", "home", "work", "tmp"))

# Paths every machine has, and paths that only look like the flagged ones: never findings.
SYSTEM_TEXT = f"""\
cpu time from /proc/self/stat, #!/usr/bin/env bash, 2>/dev/null, --impl-stderr {TMP}/e
mkstemp("{TMP}/nativemsg-cpp-test-XXXXXX"); see https://example.org{HOME}/alice/ and {ROOT_HOME}fs
the lab's workloads/redis/SPEC.md, ../build/cargo, ~/.cargo/bin, /etc/chromium/x.json
"""
# One line per kind of machine path.
PLANTED = {
    "home.md": f"cd {ROOT_HOME}/src && make",
    "user.py": f'DATA = "{HOME}/alice/msgbench/data"',
    "work.txt": f"the lab-wide spec: `{WORK}/shared/specs/redis.md`.",
    "tmp.sh": f"cp -r {TMP}/copy/workloads/redis/ out",
    "tmp2.sh": f"cd {TMP}/MSGBENCH-clone/ && ls",
    "url.md": f"[spec](file://{ROOT_HOME}/spec.md)",
}


def git_repo(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "workloads").mkdir()
    (root / "workloads" / "keep.txt").write_text("a top-level folder: workloads\n")


def git_add(root: Path, *names: str) -> None:
    subprocess.run(["git", "add", "--", *names], cwd=root, check=True)


def found(root: Path, **kw) -> set[tuple[str, str]]:
    return {(f.file, f.path) for f in check_paths.check(root, **kw)}


def test_the_repository_names_no_absolute_path_of_this_machine():
    findings = check_paths.check(ROOT, home=str(Path.home()))
    assert not findings, "\n".join(map(str, findings))


def test_planted_paths_are_found_and_system_paths_are_not(tmp_path):
    git_repo(tmp_path)
    (tmp_path / "system.txt").write_text(SYSTEM_TEXT)
    for name, text in PLANTED.items():
        (tmp_path / name).write_text(f"clean line\n{text}\n")
    git_add(tmp_path, "system.txt", "workloads", "home.md", "user.py", "work.txt")
    # tmp.sh, tmp2.sh and url.md stay untracked: a new file is checked before it is committed.
    assert found(tmp_path) == {
        ("home.md", f"{ROOT_HOME}/src"),
        ("user.py", f"{HOME}/alice/msgbench/data"),
        ("work.txt", f"{WORK}/shared/specs/redis.md"),
        ("tmp.sh", f"{TMP}/copy/workloads/redis/"),
        ("tmp2.sh", f"{TMP}/MSGBENCH-clone/"),
        ("url.md", f"{ROOT_HOME}/spec.md"),
    }
    assert {f.line for f in check_paths.check(tmp_path)} == {2}


def test_the_checkouts_own_path_and_home_are_found_wherever_they_are(tmp_path):
    git_repo(tmp_path)
    (tmp_path / "notes.md").write_text(f"run {tmp_path}/msgbench bench\nlog in /srv/u/bob/x\n")
    git_add(tmp_path, "notes.md")
    findings = check_paths.check(tmp_path, home="/srv/u/bob")
    assert [(f.line, f.path, f.what) for f in findings] == [
        (1, f"{tmp_path}/msgbench", "this checkout"),
        (2, "/srv/u/bob/x", "a home directory"),
    ]


def test_ignored_binary_and_marked_files_are_not_findings_but_symlinks_are(tmp_path):
    git_repo(tmp_path)
    (tmp_path / ".gitignore").write_text("scratch.txt\n")
    (tmp_path / "scratch.txt").write_text(PLANTED["home.md"])
    (tmp_path / "blob.bin").write_bytes(b"\0\1" + PLANTED["home.md"].encode())
    (tmp_path / "marked.md").write_text(PLANTED["home.md"] + "  <!-- paths-lint: allow -->\n")
    (tmp_path / "link").symlink_to(f"{ROOT_HOME}/.config/x")
    assert found(tmp_path) == {("link", f"{ROOT_HOME}/.config/x")}


def test_allow_list_entries_match_by_file_and_whole_path():
    pats = check_paths.patterns(Path("/nowhere"), [], None)
    text = PLANTED["work.txt"]
    allow = [("docs/*.md", WORK + r"/shared/specs/\w+\.md", "an example")]
    assert check_paths.scan_text("docs/a.md", text, pats, allow) == []
    assert len(check_paths.scan_text("README.md", text, pats, allow)) == 1
    partial = [("docs/*", WORK, "a pattern that matches part of the path")]
    assert len(check_paths.scan_text("docs/a.md", text, pats, partial)) == 1


@pytest.mark.parametrize("planted", [True, False])
def test_the_script_exits_1_with_the_finding_or_0_when_clean(tmp_path, planted):
    git_repo(tmp_path)
    (tmp_path / "scripts").mkdir()
    shutil.copy(SCRIPT, tmp_path / "scripts" / "check_paths.py")
    (tmp_path / "README.md").write_text(PLANTED["work.txt"] if planted else SYSTEM_TEXT)
    git_add(tmp_path, ".")
    r = subprocess.run(
        [sys.executable, "scripts/check_paths.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if planted:
        assert r.returncode == 1
        expected = f"README.md:1: {WORK}/shared/specs/redis.md (the lab's workspace)\n"
        assert r.stdout == expected
    else:
        assert (r.returncode, r.stdout) == (0, "")
