"""Registering a host with Chromium: `<user-data-dir>/NativeMessagingHosts/<name>.json`.

Chromium starts a host from the manifest's absolute `path` with one argument, the caller's
origin, in the directory that holds `path`. A host whose command line is more than a program
and the origin (the Python host: `python -E -S main.py ORIGIN`) gets a generated executable
file instead: a `#!<python> -ES` script that runs main.py exactly as that command line would
(same interpreter, same flags, same argv, sys.path[0] and working directory). It compiles and
executes main.py itself rather than importing runpy, which would add ~6 ms to every start.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

_NAME = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)*$")
#: The kernel keeps the first 15 bytes of the executed file's name as the process's comm.
_COMM_LEN = 15
_SHEBANG_MAX = 255


class HostError(Exception):
    pass


@dataclass(frozen=True)
class Registration:
    name: str
    manifest: Path
    path: Path  # what Chromium executes
    cwd: str  # where the host really runs
    launcher: str | None  # how `path` was made, when it is not the host program itself

    @property
    def comm(self) -> str:
        return self.path.name[:_COMM_LEN]

    def matches(self, argv: list[str]) -> bool:
        """Whether a live process's argv is this host as Chromium started it (directly, or
        through the kernel's shebang: [interpreter, flags, path, origin])."""
        return str(self.path) in argv[:3]

    def as_json(self) -> dict:
        out = {"name": self.name, "manifest_path": str(self.path), "cwd": self.cwd}
        if self.launcher:
            out["launcher"] = self.launcher
        return out


def register(
    user_data_dir: Path,
    launcher_dir: Path,
    name: str,
    host_argv: list[str],
    origin: str,
    cwd: str | None = None,
) -> Registration:
    """Write the manifest for `host_argv` (its last item may be the origin: Chromium adds its
    own). `cwd` is honoured only where a launcher is generated; a plain program always runs
    in its own directory, as in real use."""
    if not _NAME.match(name):
        raise HostError(f"host name {name!r}: only lowercase letters, digits, _ and inner dots")
    argv = list(host_argv)
    if argv and argv[-1] == origin:
        argv.pop()
    if not argv:
        raise HostError("empty host command line")
    program = _absolute_program(argv[0])
    argv[0] = str(program)
    if len(argv) == 1:
        path, launcher, real_cwd = program, None, str(program.parent)
    else:
        launcher_dir.mkdir(parents=True, exist_ok=True)
        path = launcher_dir / name
        real_cwd = str(Path(cwd).resolve()) if cwd else str(program.parent)
        if not Path(real_cwd).is_dir():
            raise HostError(f"the host's working directory {real_cwd} is not a directory")
        launcher = _write_python_launcher(path, argv, real_cwd)
    manifest_dir = user_data_dir / "NativeMessagingHosts"
    manifest_dir.mkdir(parents=True, exist_ok=True)
    manifest = manifest_dir / f"{name}.json"
    manifest.write_text(
        json.dumps(
            {
                "name": name,
                "description": "msgbench nativemsg host under test",
                "path": str(path),
                "type": "stdio",
                "allowed_origins": [origin],
            },
            indent=2,
        )
    )
    return Registration(name, manifest, path, real_cwd, launcher)


def _absolute_program(program: str) -> Path:
    """Chromium needs an absolute `path`: resolve a relative one as exec would (against the
    current directory if it has a slash, else on PATH)."""
    found = program if "/" in program else shutil.which(program)
    if found is None:
        raise HostError(f"host program {program!r} not found on PATH")
    path = Path(found).absolute()
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise HostError(f"host program {path} is not an executable file (not built?)")
    return path


def _write_python_launcher(path: Path, argv: list[str], cwd: str) -> str:
    interpreter = argv[0]
    if not Path(interpreter).name.startswith("python"):
        raise HostError(
            f"{interpreter} takes arguments Chromium cannot pass ({argv[1:]}); only a Python "
            "host (interpreter, flags, script) can be given a generated launcher"
        )
    flags = []
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        if not re.fullmatch(r"-[A-Za-z]+", argv[i]):
            raise HostError(f"interpreter option {argv[i]!r} cannot be expressed in a shebang")
        flags.append(argv[i][1:])
        i += 1
    if i == len(argv):
        raise HostError(f"no script in the host command line {argv}")
    script = str(Path(argv[i]).resolve())
    fixed_args = argv[i + 1 :]
    # The kernel passes everything after the interpreter as ONE argument: combine the flags.
    shebang = f"#!{interpreter}" + (f" -{''.join(flags)}" if flags else "")
    if len(shebang) > _SHEBANG_MAX or " " in interpreter:
        raise HostError(f"the interpreter path {interpreter!r} cannot be used in a shebang")
    source = f"""{shebang}
# Generated by msgbench (workloads/nativemsg/browser/nmbrowser/hostreg.py) for one browser run.
# Chromium runs a host by path with the origin as its only argument; this runs
# {script} as `{" ".join([interpreter, *argv[1:i], script, *fixed_args])} ORIGIN` would.
import os
import sys

sys.argv[:1] = [{script!r}, *{fixed_args!r}]
sys.path[0] = {str(Path(script).parent)!r}
os.chdir({cwd!r})
with open(sys.argv[0], "rb") as source:
    code = compile(source.read(), sys.argv[0], "exec")
exec(code, {{"__name__": "__main__", "__file__": sys.argv[0], "__builtins__": __builtins__}})
"""
    path.write_text(source)
    os.chmod(path, 0o755)
    return f"generated {shebang!r} script running {script}"
