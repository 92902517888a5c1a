"""Exit codes, and the shape of a command's handler."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "Command"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130

Command = Callable[[argparse.Namespace], int]
"""A command's handler: the parsed arguments in, the exit code out."""
