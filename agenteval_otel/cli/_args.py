"""Argument types that refuse bad values at parse time, and a parser whose errors are one line.

>>> positive_int("3"), fraction("0.5"), duration("30m").total_seconds()
(3, 0.5, 1800.0)
>>> positive_int("0")
Traceback (most recent call last):
argparse.ArgumentTypeError: expected a whole number of at least 1, got '0'
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from datetime import timedelta
from typing import NoReturn

from agenteval_otel.cli._exits import EXIT_BAD_INPUT

__all__ = [
    "OneLineErrorParser", "duration", "fraction", "non_negative_int", "port", "positive_float",
    "positive_int", "significance",
]



class OneLineErrorParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr (``agenteval run: error:
    argument --concurrency: ...``) and exit 2: a CI log shows the cause, not the usage."""

    def error(self, message: str) -> NoReturn:
        bad_value = _BAD_VALUE.fullmatch(message)
        if bad_value:  # "argument --runs: expected ..., got '0'" -> "--runs 0: expected ..."
            message = f"{bad_value['name']} {bad_value['value']}: {bad_value['expected']}"
        not_a_number = _NOT_A_NUMBER.fullmatch(message)
        if not_a_number:  # argparse's own "argument --seed: invalid int value: 'x'"
            expected = "a whole number" if not_a_number["type"] == "int" else "a number"
            message = f"{not_a_number['name']} {not_a_number['value']}: expected {expected}"
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        sys.exit(EXIT_BAD_INPUT)


_BAD_VALUE = re.compile(r"argument (?P<name>[^:]+): (?P<expected>expected .*), got '(?P<value>.*)'")
_NOT_A_NUMBER = re.compile(r"argument (?P<name>[^:]+): invalid (?P<type>int|float) value: '(?P<value>.*)'")


def _whole(least: int, most: int | None = None, what: str = "a whole number") -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < least or (most is not None and value > most):
            bound = f"from {least} to {most}" if most is not None else f"of at least {least}"
            raise argparse.ArgumentTypeError(f"expected {what} {bound}, got {text!r}")
        return value
    return parse


positive_int = _whole(1)
non_negative_int = _whole(0)
port = _whole(0, 65535, "a port number")


def positive_float(text: str) -> float:
    """A number of seconds (or any amount) above 0."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _between(open_interval: bool) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (0 < value < 1 if open_interval else 0 <= value <= 1):
            interval = "(0, 1)" if open_interval else "[0, 1]"
            raise argparse.ArgumentTypeError(f"expected a number in {interval}, got {text!r}")
        return value
    return parse


fraction = _between(open_interval=False)
significance = _between(open_interval=True)

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration(text: str) -> timedelta:
    """``30m``, ``1h``, ``2d`` as a duration."""
    number, unit = text[:-1], text[-1:].lower()
    try:
        if unit in _UNITS and float(number) > 0:
            return timedelta(seconds=float(number) * _UNITS[unit])
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"expected a duration such as 30m, 1h or 2d, got {text!r}")
