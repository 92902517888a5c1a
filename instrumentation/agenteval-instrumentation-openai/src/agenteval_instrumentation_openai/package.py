"""The library versions this instrumentation applies to (checked before it patches anything)."""

from __future__ import annotations

_instruments = ("openai >= 1.66",)
"""The Responses API (``openai.resources.responses``) arrived in openai 1.66."""
