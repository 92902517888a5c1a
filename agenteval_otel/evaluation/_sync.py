"""Between sync and async code: running our coroutines from synchronous code (``evaluate``,
``evaluate_traces``, the CLI), and the user's synchronous code (sync agents and criteria) from
the event loop, in daemon threads that can be given up on."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["in_daemon_thread", "run_sync"]

T = TypeVar("T")

_log = logging.getLogger(__name__)


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


async def in_daemon_thread(
    call: Callable[[], T], name: str, *, abandoned: list[threading.Thread] | None = None
) -> T:
    """``call()`` in a daemon thread named ``name``, with the caller's context (so its spans
    nest under the caller's); the event loop goes on meanwhile.

    If the awaiting task is cancelled (e.g. past a timeout) while the call still runs, the
    thread is abandoned rather than waited for (logged, and appended to ``abandoned``): it never
    holds up the end of a run or of the process.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome: tuple[Any, BaseException | None] = (context.run(call), None)
        except SystemExit as exc:  # user code calling sys.exit: an error of this call, not the loop's exit
            error = RuntimeError(f"{name} raised SystemExit({exc})")
            error.__cause__ = exc
            outcome = (None, error)
        except BaseException as exc:  # handed to the awaiting task, which raises it
            outcome = (None, exc)
        try:
            loop.call_soon_threadsafe(_settle, future, *outcome)
        except RuntimeError:  # the loop is closed: nobody waits for this call any more
            pass

    thread = threading.Thread(target=work, name=name, daemon=True)
    thread.start()
    try:
        result: T = await future
        return result
    except asyncio.CancelledError:
        if thread.is_alive():
            _log.warning("%s is still running; its thread is abandoned", name)
            if abandoned is not None:
                abandoned.append(thread)
        raise


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
