"""The version of agenteval-instrumentation-langgraph."""

from __future__ import annotations

__version__ = "0.1.0"
