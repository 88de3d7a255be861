"""One headless Chromium with the lab's extension and its bench page open, ready to evaluate.

    with BrowserSession(deadline) as browser:
        reg = browser.register("msgbench.nativemsg", host_argv)
        browser.bench("open", reg.name)

Everything lives in one temporary directory (profile, HOME, host manifests, launchers);
leaving the `with` block, however it is left, shuts Chromium down (procfs-checked), and
removes that directory.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import shutil
import tempfile
import time
from pathlib import Path

from . import chromium, hostreg, procfs
from .cdp import BrowserGone, CdpError
from .deadline import Deadline, Timeout

EXTENSION_DIR = Path(__file__).resolve().parent.parent / "extension"
PAGE = "bench.html"
#: Poll interval while the bench page loads.
_READY_POLL_S = 0.02
#: Bound of the start-up steps (launch, extension, page), each also within the deadline.
STARTUP_STEP_S = 30.0
#: Chromium puts "<TMPDIR>/org.chromium.Chromium.XXXXXX/SingletonSocket" in a Unix socket
#: address (107 usable bytes) and dies at start-up when it does not fit: our TMPDIR for it
#: (<root>/tmp) may be this long at most.
_TMPDIR_MAX = 107 - len("/org.chromium.Chromium.XXXXXX/SingletonSocket")


class PageError(Exception):
    """A bench function threw or rejected; the message is the page's error message."""


def extension_id(extension_dir: Path = EXTENSION_DIR) -> str:
    """Chromium's id for an extension with a fixed "key": the first 32 hex digits of SHA-256
    of the DER public key, each digit 0-f written as a letter a-p."""
    manifest = json.loads((extension_dir / "manifest.json").read_text())
    digest = hashlib.sha256(base64.b64decode(manifest["key"])).hexdigest()[:32]
    return "".join(chr(ord("a") + int(d, 16)) for d in digest)


def origin(extension_dir: Path = EXTENSION_DIR) -> str:
    return f"chrome-extension://{extension_id(extension_dir)}/"


class BrowserSession:
    def __init__(
        self,
        deadline: Deadline,
        *,
        cpus: list[int] | None = None,
        stderr_path: Path | None = None,
        tmp_parent: str | None = None,
        extension_dir: Path = EXTENSION_DIR,
    ):
        self.deadline = deadline
        self.cpus = cpus
        self.stderr_path = stderr_path
        self.tmp_parent = tmp_parent
        self.extension_dir = extension_dir
        self.origin = origin(extension_dir)
        self.root: Path | None = None
        self.browser: chromium.Launched | None = None
        self.session_id: str | None = None
        self.version: dict = {}
        self.forced: list[str] = []  # what shutting down had to force, for the log
        self._stderr: tuple[Path, int] = (Path("/dev/null"), 0)

    # -- life cycle --------------------------------------------------------------------

    def __enter__(self) -> BrowserSession:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start(self) -> None:
        binary = chromium.find_binary()
        self.root = self._make_root()
        stderr_path = Path(self.stderr_path or self.root / "chromium.stderr.log")
        self._stderr = (stderr_path, stderr_path.stat().st_size if stderr_path.exists() else 0)
        procfs.become_child_subreaper()
        self.browser = chromium.launch(
            binary,
            self.profile,
            self.root / "home",
            self.root / "tmp",
            mark=secrets.token_hex(8),
            stderr_path=stderr_path,
            cpus=self.cpus,
        )
        try:
            self.version = self._call("Browser.getVersion")
        except BrowserGone:
            raise chromium.LaunchError(
                f"chromium exited at start-up: {self._chromium_said() or 'no message'}"
            ) from None
        loaded = self._call("Extensions.loadUnpacked", {"path": str(self.extension_dir)}).get("id")
        if f"chrome-extension://{loaded}/" != self.origin:
            raise chromium.LaunchError(
                f"the extension loaded as {loaded}, not {self.origin} (its manifest key changed?)"
            )
        target = self._call("Target.createTarget", {"url": f"{self.origin}{PAGE}"})["targetId"]
        self.session_id = self._call(
            "Target.attachToTarget", {"targetId": target, "flatten": True}
        )["sessionId"]
        self._call("Inspector.enable", session=self.session_id)  # to hear of a page crash
        self._wait_ready()

    def _make_root(self) -> Path:
        """The run's private directory, in TMPDIR (or tmp_parent); in /tmp instead when that
        path is too long for Chromium's singleton socket."""
        root = Path(tempfile.mkdtemp(prefix="msgbench-browser-", dir=self.tmp_parent))
        if len(str(root / "tmp")) > _TMPDIR_MAX:
            root.rmdir()
            root = Path(tempfile.mkdtemp(prefix="msgbench-browser-", dir="/tmp"))
        for sub in ("home", "profile", "tmp"):
            (root / sub).mkdir()
        return root

    def _chromium_said(self) -> str:
        """Chromium's FATAL lines since launch (why it died), else its last line."""
        path, offset = self._stderr
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        fatal = [line for line in lines if ":FATAL:" in line]
        return (fatal or lines or [""])[-1].strip()

    def _wait_ready(self) -> None:
        """Poll until bench.js has run: createTarget returns before the page has loaded."""
        end = Deadline(self.deadline.within(STARTUP_STEP_S))
        while True:
            try:
                if self.evaluate("globalThis.bench?.ready === true", timeout=end.remaining()):
                    return
            except (PageError, CdpError):
                # No execution context yet, or it was replaced while the page committed.
                pass
            end.check(f"waiting for {PAGE} to load")
            time.sleep(min(_READY_POLL_S, end.remaining()))

    def close(self) -> None:
        try:
            if self.browser is not None:
                self.forced = chromium.shut_down(self.browser)
                self.browser = None
        finally:
            if self.root is not None:
                shutil.rmtree(self.root, ignore_errors=True)
                self.root = None

    # -- hosts and the page ------------------------------------------------------------

    @property
    def profile(self) -> Path:
        assert self.root is not None
        return self.root / "profile"

    @property
    def pid(self) -> int:
        assert self.browser is not None
        return self.browser.pid

    def register(self, name: str, host_argv: list[str], cwd: str | None = None):
        assert self.root is not None
        return hostreg.register(
            self.profile, self.root / "hosts", name, host_argv, self.origin, cwd
        )

    def evaluate(self, expression: str, *, timeout: float):
        """The value of `expression` in the bench page (promises awaited); PageError if it
        throws. The wait is bounded by `timeout` and by the session's deadline."""
        wait = self.deadline.within(timeout)
        result = self._call(
            "Runtime.evaluate",
            {
                "expression": expression,
                "awaitPromise": True,
                "returnByValue": True,
                # The page has its own timers; this bounds the evaluation on the page's side too.
                "timeout": int(wait * 1000),
            },
            session=self.session_id,
            timeout=wait + 1.0,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text", "")
            first = text.splitlines()[0] if text else "the page threw"
            raise PageError(first.removeprefix("Error: "))
        return result.get("result", {}).get("value")

    def bench(self, function: str, *args, timeout: float):
        """Call bench.<function>(*args) in the page; arguments travel as JSON literals."""
        call = f"bench.{function}({', '.join(json.dumps(a) for a in args)})"
        return self.evaluate(call, timeout=timeout)

    def _call(self, method: str, params: dict | None = None, *, session=None, timeout=None):
        assert self.browser is not None
        wait = self.deadline.within(STARTUP_STEP_S if timeout is None else timeout)
        if wait <= 0:
            raise Timeout(f"the {self.deadline.seconds:g} s budget ran out before {method}")
        try:
            return self.browser.cdp.call(method, params, session=session, timeout=wait)
        except Timeout:
            raise Timeout(f"no answer to {method} within {wait:.1f} s") from None
