"""The two ways a run fails after a good command line (SPEC §5: exit status 1, one line on
stderr): a response that is not the expected one, and a message that cannot be read."""

from __future__ import annotations


class Mismatch(Exception):
    """The client's check of a response failed; the text says what was expected and what came."""


class InvalidMessage(Exception):
    """A message from outside the process broke the stream's framing, a limit of SPEC §6, or
    the schema's rules (an unknown eval op or union member)."""
