"""The library this package instruments, and the versions it supports."""

from __future__ import annotations

_instruments = ("langgraph >= 1.0.0",)
