#!/usr/bin/env python3
"""Fail when a file of the repository names an absolute path of the machine it was written on.

A clone must be complete in itself: a path into one checkout, into a home directory, into the
lab's workspace tree or into a scratch copy of the tree under the temporary directory works on
the machine that wrote it and nowhere else. System paths (the proc file system, programs under
the usr tree, the null device, a throw-away file directly under the temporary directory) are
fine: every machine has them.

What is flagged (see patterns()):
- the repository's own absolute path (and its resolved form), wherever it sits;
- home directories: root's, anything under the home tree with a user name, and $HOME;
- the workspace tree this lab was built in (paths that start with the `work` root folder);
- a temporary-directory path that names a checkout: one of its folders is a top-level folder of
  this repository (harness, workloads, .venv, ...) or has "msgbench" in its name.

Usage: scripts/check_paths.py [FILE...]
Without FILE: every file git tracks or would add (`git ls-files --cached --others
--exclude-standard`), text files only. Prints FILE:LINE: PATH (what it is) per finding and exits
1, or exits 0 when clean. A line that must name such a path carries the marker
`paths-lint: allow`; the few exceptions that cannot carry it are in ALLOW, each with its reason.
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = "paths-lint: allow"

# (file glob, regex the whole finding must match, why it is allowed). Keep it short: a path that
# can be written relative to the repository, or built at run time, is never allowed here.
ALLOW: list[tuple[str, str, str]] = []

# A path starts where no other path or word character comes before it (so a URL's path such as
# example.org/home/x is not one), or right after a scheme's "://" (a file URL's path is one).
_START = r"(?:(?<![\w.~/-])|(?<=://))"
# A path goes on until whitespace, a quote or a closing bracket.
_REST = r"[^\s\"'`<>()\[\]{},;]*"
# The fixed patterns. Each names what it finds, hence the marker on its line.
_ROOT_HOME = r"/root(?![\w-])"  # paths-lint: allow
_USER_HOME = r"/home/[A-Za-z_][\w.-]*"
_WORKSPACE = r"/work(?![\w-])"  # paths-lint: allow
# Folders under the repository root that git never lists but a checkout has.
_UNLISTED_DIRS = (".git", ".venv", "build", "results", "target")


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    path: str
    what: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.path} ({self.what})"


def patterns(
    root: Path, top_dirs: list[str], home: str | None
) -> list[tuple[re.Pattern[str], str]]:
    """The regexes of machine-specific absolute paths, each with what it names."""
    pats: list[tuple[str, str]] = []
    for form in dict.fromkeys([str(root), str(root.resolve())]):
        if form != "/":
            pats.append((_START + re.escape(form) + r"(?![\w-])" + _REST, "this checkout"))
    pats.append((_START + _ROOT_HOME + _REST, "a home directory"))
    pats.append((_START + _USER_HOME + _REST, "a home directory"))
    if home and home != "/":  # wherever this machine keeps it (a duplicate finds nothing twice)
        pats.append((_START + re.escape(home) + r"(?![\w-])" + _REST, "a home directory"))
    pats.append((_START + _WORKSPACE + _REST, "the lab's workspace"))
    dirs = "|".join(re.escape(d) for d in sorted({*top_dirs, *_UNLISTED_DIRS}))
    name_char = r"[^\s\"'`<>()\[\]{},;/]"
    checkout = rf"(?:{dirs}|{name_char}*(?i:msgbench){name_char}*)"
    pats.append((_START + rf"/tmp/(?:{name_char}+/)*?{checkout}/" + _REST, "a temporary checkout"))
    return [(re.compile(p), w) for p, w in pats]


def allowed(file: str, path: str, allow: list[tuple[str, str, str]]) -> bool:
    return any(fnmatch.fnmatch(file, g) and re.fullmatch(rx, path) for g, rx, _ in allow)


def scan_text(
    file: str,
    text: str,
    pats: list[tuple[re.Pattern[str], str]],
    allow: list[tuple[str, str, str]] = ALLOW,
) -> list[Finding]:
    """Every machine-specific path in text, one finding per path (the first pattern wins)."""
    found = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if MARKER in line:
            continue
        taken: list[tuple[int, int]] = []
        for rx, what in pats:
            for m in rx.finditer(line):
                if any(a <= m.start() < b for a, b in taken):
                    continue
                taken.append(m.span())
                path = m.group(0).rstrip(".:")
                if not allowed(file, path, allow):
                    found.append(Finding(file, lineno, path, what))
    return found


def repo_files(root: Path) -> list[str]:
    """Tracked files and untracked ones git would add: what the next commit can contain."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout
    return sorted({f for f in out.decode().split("\0") if f})


def read_text(path: Path) -> str | None:
    """The file's text; a symbolic link's target (that is what git stores); None for a binary
    file or one that is gone from the working tree."""
    if path.is_symlink():
        return os.readlink(path)
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def top_level_dirs(files: list[str]) -> list[str]:
    return sorted({f.split("/", 1)[0] for f in files if "/" in f})


def check(root: Path, files: list[str] | None = None, home: str | None = None) -> list[Finding]:
    listed = repo_files(root)
    pats = patterns(root, top_level_dirs(listed), home)
    found = []
    for name in files if files is not None else listed:
        text = read_text(root / name)
        if text is not None:
            found += scan_text(name, text, pats)
    return found


def main(argv: list[str]) -> int:
    files = [str(Path(f).resolve().relative_to(ROOT)) for f in argv] or None
    found = check(ROOT, files, os.environ.get("HOME"))
    for f in found:
        print(f)
    if found:
        print(
            f"check_paths: {len(found)} absolute path(s) of this machine; write them relative "
            f"to the repository (or build them at run time)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
