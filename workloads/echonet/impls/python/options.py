"""Command-line values shared by the node and the controller (SPEC §7, §8).

Each parser here is an argparse `type`: it returns the value or raises ArgumentTypeError, and
argparse turns that into one message on stderr and exit status 2.
"""

from __future__ import annotations

import argparse

import frame
from transport import ANY


def _digits(text: str) -> bool:
    # int() would also take "+5", " 5", "5_000" and "٥": only plain ASCII digits are numbers.
    return text.isascii() and text.isdigit()


def ipv4(text: str) -> str:
    """A dotted-quad IPv4 address, four decimal bytes (no shorthand such as 127.1)."""
    parts = text.split(".")
    if len(parts) != 4 or not all(
        _digits(p) and len(p) <= 3 and int(p) <= 255 and (p == "0" or p[0] != "0") for p in parts
    ):
        raise argparse.ArgumentTypeError(f"bad IPv4 address {text!r}")
    return text


def integer(lo: int, hi: int):
    """An argparse type for a decimal integer from lo to hi."""

    def parse(text: str) -> int:
        if not _digits(text) or not lo <= int(text) <= hi:
            raise argparse.ArgumentTypeError(f"bad value {text!r}: expected {lo} to {hi}")
        return int(text)

    return parse


port = integer(1, 65535)


class Parser(argparse.ArgumentParser):
    """argparse without abbreviations: `--bin` is an unknown option, not --bind."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(**kwargs)


def add_network_options(parser: argparse.ArgumentParser, suppress: bool = False) -> None:
    """--bind, --ifaddr, --port. With `suppress`, an absent option sets nothing (so the copy
    accepted after a controller command does not overwrite the one given before it)."""

    def default(value):
        return argparse.SUPPRESS if suppress else value

    parser.add_argument(
        "--bind", type=ipv4, default=default(ANY), metavar="IPV4",
        help="the address to bind (default 0.0.0.0)",
    )  # fmt: skip
    parser.add_argument(
        "--ifaddr", type=ipv4, default=default(None), metavar="IPV4",
        help="the interface address for multicast (default: the --bind address)",
    )  # fmt: skip
    parser.add_argument(
        "--port", type=port, default=default(frame.PORT), metavar="N",
        help=f"the UDP port (default {frame.PORT})",
    )  # fmt: skip
