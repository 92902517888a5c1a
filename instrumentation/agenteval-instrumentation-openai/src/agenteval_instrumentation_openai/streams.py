"""Transparent proxies for the client's streams that end the model call's step exactly once.

The proxy is the user's stream (``wrapt.ObjectProxy``: attributes, ``isinstance``, iteration and
``with`` all behave as the stream's own) and ends the step when the stream is exhausted, closed,
left by its ``with`` block, garbage-collected unfinished, or raises (then the step fails with
that very exception, which goes on unchanged). Each chunk is shown to the call's reader, so the
reply, with the usage of the final chunk, is recorded when the stream ends.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any

import wrapt

if TYPE_CHECKING:
    from agenteval_instrumentation_openai.patch import ModelCall

__all__ = ["AsyncStreamProxy", "StreamProxy", "proxy"]


class StreamProxy(wrapt.ObjectProxy):  # type: ignore[misc]
    """A sync stream (``openai.Stream``) whose end ends the model call."""

    def __init__(self, stream: Any, call: ModelCall) -> None:
        super().__init__(stream)
        self._self_call = call

    def __iter__(self) -> StreamProxy:
        return self

    def __next__(self) -> Any:
        try:
            item = self.__wrapped__.__next__()
        except StopIteration:
            self._self_call.stream_ended(None)
            raise
        except BaseException as error:
            self._self_call.stream_ended(error)
            raise
        self._self_call.observe(item)
        return item

    def __enter__(self) -> StreamProxy:
        self.__wrapped__.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> Any:
        try:
            return self.__wrapped__.__exit__(exc_type, error, traceback)
        finally:
            self._self_call.stream_ended(None)

    def close(self) -> Any:
        try:
            return self.__wrapped__.close()
        finally:
            self._self_call.stream_ended(None)

    def __del__(self) -> None:  # abandoned: garbage-collected before it ended
        call = getattr(self, "_self_call", None)
        if call is not None:
            call.stream_ended(None)


class AsyncStreamProxy(wrapt.ObjectProxy):  # type: ignore[misc]
    """An async stream (``openai.AsyncStream``) whose end ends the model call."""

    def __init__(self, stream: Any, call: ModelCall) -> None:
        super().__init__(stream)
        self._self_call = call

    def __aiter__(self) -> AsyncStreamProxy:
        return self

    async def __anext__(self) -> Any:
        try:
            item = await self.__wrapped__.__anext__()
        except StopAsyncIteration:
            self._self_call.stream_ended(None)
            raise
        except BaseException as error:
            self._self_call.stream_ended(error)
            raise
        self._self_call.observe(item)
        return item

    async def __aenter__(self) -> AsyncStreamProxy:
        await self.__wrapped__.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> Any:
        try:
            return await self.__wrapped__.__aexit__(exc_type, error, traceback)
        finally:
            self._self_call.stream_ended(None)

    async def close(self) -> Any:
        try:
            return await self.__wrapped__.close()
        finally:
            self._self_call.stream_ended(None)

    async def aclose(self) -> Any:
        try:
            return await self.__wrapped__.aclose()
        finally:
            self._self_call.stream_ended(None)

    def __del__(self) -> None:
        call = getattr(self, "_self_call", None)
        if call is not None:
            call.stream_ended(None)


def proxy(stream: Any, call: ModelCall) -> Any:
    """``stream`` in the proxy of its kind."""
    if hasattr(stream, "__anext__"):
        return AsyncStreamProxy(stream, call)
    return StreamProxy(stream, call)
