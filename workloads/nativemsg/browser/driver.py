"""nativemsg browser driver: measures a Native Messaging host through real headless Chromium.

Same command line and JSON as drivers/nativemsg (the native driver), so the harness runs it as
`[drivers.browser]` in workload.toml; see README.md here. Exit 0 with the results on stdout,
1 with {"error": "..."} when the trial failed, 2 for a bad command line.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

# Run as a script under `python -E -S`: the package next to this file is importable this way.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from nmbrowser import cli, trial  # noqa: E402


def _terminate(signum, frame):
    # SIGTERM (a harness that gives up) unwinds like Ctrl-C, so Chromium and the temporary
    # directory are cleaned up on the way out.
    raise KeyboardInterrupt


def main(argv: list[str]) -> int:
    args = cli.parse(argv)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        doc = trial.run(args)
        status = 0
    except KeyboardInterrupt:
        doc, status = {"error": "interrupted"}, 1
    except Exception as e:  # noqa: BLE001 - every failure is reported as the driver's JSON
        doc, status = {"error": f"{type(e).__name__}: {e}" if not str(e) else str(e)}, 1
    print(json.dumps(doc, ensure_ascii=False), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
