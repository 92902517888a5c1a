"""Argument types that refuse bad values at parse time, and a parser whose errors are one line.

>>> positive_int("3"), fraction("0.5"), duration("30m").total_seconds(), byte_size("512MiB")
(3, 0.5, 1800.0, 536870912)
>>> positive_int("0")
Traceback (most recent call last):
argparse.ArgumentTypeError: expected a whole number of at least 1, got '0'
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable
from datetime import timedelta
from typing import NoReturn, TypeVar

from agenteval_otel.cli._exits import EXIT_BAD_INPUT

__all__ = [
    "EXPORT_AS", "OneLineErrorParser", "add_export_options", "byte_size", "duration", "fraction", "name",
    "non_negative_float", "non_negative_int", "number", "port", "positive_float", "positive_int", "significance",
    "whole_number",
]


class OneLineErrorParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr (``agenteval run: error:
    --concurrency 0: expected ...``) and exit 2: a CI log shows the cause, not the usage."""

    def error(self, message: str) -> NoReturn:
        bad_value = _BAD_VALUE.fullmatch(message)
        if bad_value:  # "argument --runs: expected ..., got '0'" -> "--runs 0: expected ..."
            message = f"{bad_value['name']} {bad_value['value']}: {bad_value['expected']}"
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        sys.exit(EXIT_BAD_INPUT)


_BAD_VALUE = re.compile(r"argument (?P<name>[^:]+): (?P<expected>expected .*), got '(?P<value>.*)'")
_T = TypeVar("_T", int, float)


def _parsed(text: str, kind: Callable[[str], _T]) -> _T | None:
    """``text`` as a ``kind`` (``int`` or ``float``); ``None`` when it is not one."""
    try:
        return kind(text)
    except ValueError:
        return None


def _whole(least: int | None = None, most: int | None = None, what: str = "a whole number") -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = _parsed(text, int)
        if value is None or (least is not None and value < least) or (most is not None and value > most):
            bound = (f" from {least} to {most}" if most is not None else
                     f" of at least {least}" if least is not None else "")
            raise argparse.ArgumentTypeError(f"expected {what}{bound}, got {text!r}")
        return value
    return parse


whole_number = _whole()
positive_int = _whole(1)
non_negative_int = _whole(0)
port = _whole(0, 65535, "a port number")


def _real(accepts: Callable[[float], bool], what: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        value = _parsed(text, float)
        if value is None or not accepts(value):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value
    return parse


number = _real(math.isfinite, "a number")
positive_float = _real(lambda value: 0 < value < math.inf, "a positive number")
non_negative_float = _real(lambda value: 0 <= value < math.inf, "a number of at least 0")
fraction = _real(lambda value: 0 <= value <= 1, "a number in [0, 1]")
significance = _real(lambda value: 0 < value < 1, "a number in (0, 1)")

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration(text: str) -> timedelta:
    """``30m``, ``1h``, ``2d`` as a duration."""
    amount, unit = _parsed(text[:-1], float), text[-1:].lower()
    if amount is None or unit not in _UNITS or not 0 < amount < math.inf:
        raise argparse.ArgumentTypeError(f"expected a duration such as 30m, 1h or 2d, got {text!r}")
    return timedelta(seconds=amount * _UNITS[unit])


_BYTE_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}
_BYTES = re.compile(r"\s*(?P<amount>[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>[a-z]*)\s*", re.IGNORECASE)


def byte_size(text: str) -> int:
    """``512MiB``, ``2GB``, ``1048576`` as a number of bytes (at least 1)."""
    match = _BYTES.fullmatch(text)
    unit = match["unit"].lower() if match else ""
    if match is None or unit not in _BYTE_UNITS or float(match["amount"]) * _BYTE_UNITS[unit] < 1:
        raise argparse.ArgumentTypeError(f"expected a size such as 512MiB, 2GB or 1048576, got {text!r}")
    return int(float(match["amount"]) * _BYTE_UNITS[unit])


def name(text: str) -> str:
    """A name that is not blank (an evaluation run id), stripped."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a name that is not blank, got {text!r}")
    return text.strip()


EXPORT_AS = ("events", "spans", "both")
"""What ``--as`` accepts: ``agenteval_otel.results.EXPORT_MODES`` (not imported: the CLI starts light)."""


def add_export_options(parser: argparse.ArgumentParser, target_help: str, *, repeatable: bool = False) -> None:
    """``--export-results TARGET`` (helped by ``target_help``; a list when ``repeatable``),
    ``--as`` and ``--run-id``."""
    parser.add_argument("--export-results", metavar="TARGET", help=target_help,
                        action="append" if repeatable else "store")
    parser.add_argument("--as", dest="export_as", choices=EXPORT_AS, default=None,
                        help="what --export-results writes per verdict: a gen_ai.evaluation.result log "
                             "record on the judged span (events, the default); also an evaluation span in a "
                             "trace of its own, linked to the judged span (spans, both: the record is always "
                             "written; the judged trace is never changed)")
    parser.add_argument("--run-id", type=name, metavar="NAME",
                        help="the evaluation run the verdicts belong to, part of each verdict's id: the same "
                             "verdict exported twice under one run id is one verdict (default: the eval set's "
                             "id, else the traces' source)")
