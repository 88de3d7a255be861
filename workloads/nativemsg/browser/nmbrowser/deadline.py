"""One time budget shared by every wait of a trial, so that no single wait can outlive it."""

from __future__ import annotations

import time


class Timeout(Exception):
    """A bounded wait ran out of time; the message says what was being waited for."""


class Deadline:
    def __init__(self, seconds: float):
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self._end - time.monotonic())

    def expired(self) -> bool:
        return self.remaining() <= 0.0

    def within(self, seconds: float | None) -> float:
        """The smaller of `seconds` and what is left of the budget."""
        left = self.remaining()
        return left if seconds is None else min(seconds, left)

    def check(self, what: str) -> None:
        if self.expired():
            raise Timeout(f"the {self.seconds:g} s budget ran out {what}")
