"""Finding, starting and killing headless Chromium with the DevTools protocol on a pipe.

Chromium is started directly (not through a shell) in a new session, so its pid is also its
process group id; every process of one launch also carries a private environment marker, so
the ones that left the group or were re-parented can still be found and killed (see procfs).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import procfs
from .cdp import CdpClient

#: Programs tried in this order on PATH; MSGBENCH_CHROMIUM overrides them.
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Debian's /usr/bin/chromium is a shell script that sources /etc/chromium.d and adds flags of
#: its own (GPU rasterisation, system extensions); the program it execs is used instead, so
#: the flags below are the whole command line.
DEBIAN_REAL_BINARY = Path("/usr/lib/chromium/chromium")

#: The environment variable whose value marks every process of one launch.
MARK_VAR = "MSGBENCH_BROWSER_RUN"

#: fds Chromium expects for --remote-debugging-pipe: it reads commands on 3, writes on 4.
CHILD_READ_FD = 3
CHILD_WRITE_FD = 4
#: The parent keeps its ends above this, so that they never sit on 3 or 4 themselves.
HIGH_FD = 100

FLAGS = (
    "--headless",
    "--no-sandbox",  # root in a container: the setuid/namespace sandbox is unavailable
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-default-apps",
    "--disable-breakpad",
    "--mute-audio",
    "--password-store=basic",
    # The bench page must never be throttled: its timers bound every wait in bench.js.
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
    "--remote-debugging-pipe",
    # Extensions.loadUnpacked needs it; it answers with the id, so we know the extension is in.
    "--enable-unsafe-extension-debugging",
)


class LaunchError(Exception):
    pass


def find_binary() -> Path:
    """The Chromium program to run, or LaunchError naming what was tried."""
    override = os.environ.get("MSGBENCH_CHROMIUM")
    if override:
        path = Path(override)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise LaunchError(f"MSGBENCH_CHROMIUM={override} is not an executable file")
        return path
    for name in CANDIDATES:
        found = shutil.which(name)
        if found is None:
            continue
        path = Path(found).resolve()
        if _is_script(path) and DEBIAN_REAL_BINARY.is_file():
            return DEBIAN_REAL_BINARY
        return path
    raise LaunchError(f"no Chromium found (tried {', '.join(CANDIDATES)} on PATH)")


def _is_script(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


@dataclass
class Launched:
    proc: subprocess.Popen
    cdp: CdpClient
    binary: Path
    argv: list[str]
    mark: str  # value of MARK_VAR in every process of this launch

    @property
    def pid(self) -> int:
        return self.proc.pid


def launch(
    binary: Path,
    user_data_dir: Path,
    home: Path,
    tmpdir: Path,
    mark: str,
    stderr_path: Path,
    cpus: list[int] | None,
) -> Launched:
    """Start Chromium headless with a fresh profile. `cpus`: pin it (its children inherit).
    `tmpdir` must be short: Chromium puts its singleton socket there (sun_path: 108 bytes)."""
    argv = [str(binary), *FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"]
    env = dict(os.environ)
    # The crash reporter and caches write under HOME/XDG dirs: keep them in the temp tree.
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        TMPDIR=str(tmpdir),
        **{MARK_VAR: mark},
    )
    # Our ends of the two pipes, and the child's ends moved above HIGH_FD: dup2 onto 3/4 in
    # the child must not clobber an end it still needs (os.pipe may return 3 or 4 itself).
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()
    child_r = _move_high(to_browser_r)
    child_w = _move_high(from_browser_w)

    prctl = procfs.prctl_function()  # looked up before fork: no dlopen in the child

    def in_child() -> None:  # between fork and exec: only plain system calls
        os.dup2(child_r, CHILD_READ_FD)  # dup2 clears close-on-exec on the target
        os.dup2(child_w, CHILD_WRITE_FD)
        if cpus:
            os.sched_setaffinity(0, cpus)
        # If the driver dies without cleaning up (SIGKILL from a harness timeout), Chromium
        # dies with it even if it missed its DevTools pipe closing; its children follow, and
        # hosts see EOF.
        if prctl is not None:
            prctl(procfs.PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    try:
        with open(stderr_path, "ab") as stderr:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=stderr,  # Chromium prints nothing useful on stdout; keep it with stderr
                stderr=stderr,
                env=env,
                cwd=str(home),
                start_new_session=True,  # pgid = pid: the whole group can be killed at once
                close_fds=False,  # our other fds are close-on-exec (PEP 446); 3/4 must survive
                preexec_fn=in_child,
            )
    except OSError as e:
        raise LaunchError(f"cannot start {binary}: {e}") from None
    finally:
        os.close(child_r)
        os.close(child_w)
    return Launched(proc, CdpClient(from_browser_r, to_browser_w), binary, argv, mark)


def _move_high(fd: int) -> int:
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, HIGH_FD)
    os.close(fd)
    return high


def shut_down(browser: Launched, grace_s: float = 3.0) -> list[str]:
    """End Chromium and everything it started; return what had to be forced (for the log).

    First Browser.close (Chromium closes native ports, so hosts see EOF and exit as they would
    in real use), then SIGKILL to the process group, then SIGKILL to every process that still
    carries this launch's marker (a host in its own group, a re-parented child), and last
    reaping the ones re-parented to us (we are their child subreaper), so that no zombie is
    left to a PID 1 that may not reap. Bounded: about grace_s + 4 s in the worst case.
    """
    forced: list[str] = []
    # Every process of the launch, while Chromium is alive to say which are its: (pid, start
    # time) pairs, so that a pid reused later is never taken for one of them.
    tree = set(procfs.descendants(browser.pid)) | set(procfs.pids_with_env(MARK_VAR, browser.mark))
    identity = {pid: s.starttime for pid in tree if (s := procfs.stat(pid)) is not None}
    try:
        browser.cdp.call("Browser.close", timeout=min(grace_s, 1.0))
    except Exception:  # noqa: BLE001 - a browser that cannot close is killed below
        pass
    try:
        browser.proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        forced.append(f"chromium {browser.pid} did not exit within {grace_s:g} s: SIGKILL")
    _kill_group(browser.pid)
    browser.cdp.close()
    try:
        browser.proc.wait(timeout=2.0)
    except subprocess.TimeoutExpired:
        forced.append(f"chromium {browser.pid} survived SIGKILL for 2 s")
    # Anything of the launch still running (outside the group, or a host ignoring its EOF).
    for pid in set(identity) | set(procfs.pids_with_env(MARK_VAR, browser.mark)):
        s = procfs.stat(pid)
        if s is None or s.state == "Z" or identity.get(pid, s.starttime) != s.starttime:
            continue
        forced.append(f"pid {pid} ({s.comm}) outlived chromium: SIGKILL")
        _kill(pid)
        identity[pid] = s.starttime
    left = _reap(identity, until=time.monotonic() + 2.0)
    if left:
        forced.append(f"processes not gone after 2 s: {sorted(left)}")
    return forced


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _reap(identity: dict[int, int], until: float) -> set[int]:
    """Wait until each process (pid -> start time) is gone: reap it once it is our child
    (re-parented to us when its parent died), else leave it to its parent. Returns the ones
    still there at `until`."""
    me = os.getpid()
    left = set(identity)
    while left:
        for pid in list(left):
            s = procfs.stat(pid)
            if s is None or s.starttime != identity[pid]:
                left.discard(pid)
            elif s.ppid == me:
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done = pid  # reaped elsewhere in the meantime
                if done:
                    left.discard(pid)
        if not left or time.monotonic() >= until:
            break
        time.sleep(0.01)
    return left
