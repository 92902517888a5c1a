"""Running our coroutines from synchronous code (``evaluate``, ``evaluate_traces``, the CLI)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T], async_name: str) -> T:
    """Run ``coroutine`` to completion; refuse inside a running event loop (naming the async
    function to await there).

    The result travels in a box: ``asyncio.run`` may ``repr`` its main task, and with it the
    task's result, which for a large report costs seconds.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        coroutine.close()
        raise RuntimeError(f"called inside a running event loop; use 'await {async_name}(...)' there")
    box: list[T] = []

    async def main() -> None:
        box.append(await coroutine)

    asyncio.run(main())
    return box[0]
