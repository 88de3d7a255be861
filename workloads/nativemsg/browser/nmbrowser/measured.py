"""What a mode's measurement hands to the report, and helpers both modes share."""

from __future__ import annotations

from dataclasses import dataclass, field

from .deadline import Deadline

#: Bound of one call into the page that does not run a loop.
PAGE_CALL_S = 10.0
#: The page's own timer fires this much before the driver gives up, so its message (how far
#: the loop got) is the one reported.
PAGE_MARGIN_S = 1.0


@dataclass
class Measured:
    run: dict  # the page's result: latenciesUs, elapsedMs, checked
    host: dict  # the `impl` object of the report
    host_cpus: list[int] | None  # where the host actually ran
    placement: str
    extra: dict = field(default_factory=dict)


def loop(config: dict, warmup: int, iterations: int, work: Deadline) -> dict:
    """The page's loop parameters, its timer set to fire before the driver's own wait ends."""
    timeout_ms = max(1, int((work.remaining() - PAGE_MARGIN_S) * 1000))
    return {**config, "warmup": warmup, "iterations": iterations, "timeoutMs": timeout_ms}


def cpus_text(cpus: list[int] | None) -> str:
    return ",".join(str(c) for c in cpus) if cpus else "?"
