"""SPEC §1: how browsers start hosts — connectionless (one process per message), Chromium's and
Firefox's argv, the host's folder as working directory."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from checks import PING, assert_echo, assert_pong, echo_body

FIREFOX_EXTENSION_ID = "nativemsg@msgbench.lab"


def test_spawn_mode_one_message_per_process(impl, start_host):
    """sendNativeMessage: start, one request, read the reply with stdin open, close stdin,
    exit 0 — 20 times, alternating ping and echo.
    Catches: a host that only answers at EOF (unflushed), writes anything after its reply,
    exits non-zero when the port closes, or needs a second message to make progress."""
    for i in range(20):
        h = start_host()
        if i % 2:
            assert_pong(h.request(PING), f"spawn {i}")
        else:
            data = b'{"spawn":%d}' % i
            assert_echo(h.request(echo_body(data)), data)
        rc = h.finish()
        h.assert_no_crash()
        assert rc == 0, f"spawn {i}: exit status must be 0 after EOF {h.describe()}"
        assert h.unread_stdout() == b"", f"spawn {i}: stdout after the reply: {h.unread_stdout()!r}"
        h.kill()


def test_spawn_mode_request_then_eof(start_host):
    """The request and the EOF arrive together (the caller closes stdin right after writing):
    the reply must still come, then exit 0. Catches: a host that checks for EOF before
    answering what it already read."""
    for i in range(5):
        h = start_host()
        h.send_frame(PING)
        h.close_stdin()
        assert_pong(h.read_reply(), f"spawn {i}")
        rc = h.wait_exit()
        assert rc == 0, f"spawn {i}: exit status must be 0 {h.describe()}"
        h.kill()


def _firefox_manifest(tmp_path: Path, argv: list[str]) -> str:
    path = tmp_path / "msgbench.nativemsg.json"
    path.write_text(
        json.dumps(
            {
                "name": "msgbench.nativemsg",
                "description": "msgbench nativemsg host",
                "path": argv[0],
                "type": "stdio",
                "allowed_extensions": [FIREFOX_EXTENSION_ID],
            }
        )
    )
    return str(path)


def _firefox_argv(argv: list[str], origin: str, manifest_path: str) -> list[str]:
    """Firefox passes the host manifest's path and the extension id instead of the origin."""
    firefox = [manifest_path, FIREFOX_EXTENSION_ID]
    if origin in argv:
        i = argv.index(origin)
        return [*argv[:i], *firefox, *argv[i + 1 :]]
    return [*argv, *firefox]


@pytest.mark.parametrize("browser", ["chromium", "chromium-windows-style", "firefox"])
def test_browser_argv_accepted(impl, origin, start_host, tmp_path, browser):
    """The same host must work with every browser's argv: Chromium passes the origin
    (chrome-extension://<id>/), Chromium on Windows adds --parent-window=<n>, Firefox passes
    the host manifest's path and the extension id instead. Catches: a host that insists on
    exactly one argument, validates the origin, or parses its arguments as options."""
    argv = impl.argv()
    if browser == "chromium-windows-style":
        argv = [*argv, "--parent-window=0"]
    elif browser == "firefox":
        argv = _firefox_argv(argv, origin, _firefox_manifest(tmp_path, argv))
    h = start_host(argv=argv)
    assert_pong(h.request(PING), f"{browser} argv {argv[1:]}")
    rc = h.finish()
    assert rc == 0, f"{browser} argv: exit status must be 0 {h.describe()}"


def test_cwd_is_the_host_folder(impl, start_host):
    """Browsers start the host with its own folder as working directory; the manifest's cwd
    must be that folder (it holds the program), and the host must serve from there.
    Catches: a manifest whose cwd does not exist or does not hold the host."""
    cwd = Path(impl.cwd()).resolve()
    assert cwd.is_dir(), f"cwd {cwd} is not a directory"
    argv = impl.argv()
    program = Path(shutil.which(argv[0]) or argv[0]).resolve()
    files = [program] + [Path(a).resolve() for a in argv[1:] if os.path.isfile(a)]
    # The host is the last file named on the command line (the script for an interpreter).
    assert files[-1].parent == cwd or cwd in files[-1].parents, (
        f"cwd {cwd} does not hold the host program {files[-1]}"
    )
    h = start_host(cwd=str(cwd))
    assert_pong(h.request(PING))
