"""A size limit on the bodies the judge's HTTP client reads.

:func:`size_limit_hook` is an ``httpx`` response event hook (the ``openai`` package's HTTP
client, under either of its names): it refuses a body whose ``Content-Length`` passes the limit
before any of it is read, a compressed body (whose decoded size its length does not bound; the
client asks for none with :data:`IDENTITY_ENCODING`), and counts the bytes of every other body as
they arrive, raising :class:`ResponseTooLarge` as soon as they pass the limit, so no more than
the limit is ever held.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

__all__ = ["IDENTITY_ENCODING", "ResponseTooLarge", "size_limit_hook"]

IDENTITY_ENCODING = {"Accept-Encoding": "identity"}
"""The request header asking for an uncompressed body."""


class ResponseTooLarge(Exception):
    """A response body past the size limit: declared so, compressed, or read so far."""


def size_limit_hook(limit: int) -> Callable[[Any], Awaitable[None]]:
    """A response event hook that keeps every body the client reads within ``limit`` bytes."""

    async def check(response: Any) -> None:
        declared = (response.headers.get("content-length") or "").strip()
        if declared.isdigit() and int(declared) > limit:
            raise ResponseTooLarge(f"an answer of {int(declared):,} bytes (Content-Length), more than the "
                                   f"limit of {limit:,} bytes")
        encoding = (response.headers.get("content-encoding") or "identity").strip().lower()
        if encoding not in ("identity", *_DECOMPRESSED):
            raise ResponseTooLarge(f"an answer compressed as {encoding}, though asked for none: its size "
                                   "once decoded cannot be bounded")
        if encoding in _DECOMPRESSED:
            del response.headers["content-encoding"]  # decoded here, counted as decoded
        response.stream = _capped(response.stream, limit, encoding in _DECOMPRESSED)

    return check


_DECOMPRESSED = ("gzip", "x-gzip", "deflate")


def _capped(stream: Any, limit: int, compressed: bool) -> Any:
    """``stream`` yielding the same chunks (decompressed if ``compressed``), raising once they
    pass ``limit`` bytes."""
    base = next((kind for kind in type(stream).__mro__ if kind.__name__ == "AsyncByteStream"), None)
    if base is None:  # a synchronous stream: the async client never reads one
        return stream
    return _capped_type(base)(stream, limit, zlib.decompressobj(zlib.MAX_WBITS | 32) if compressed else None)


@functools.cache
def _capped_type(base: type) -> type:
    """A subclass of the HTTP library's ``AsyncByteStream`` (its client checks for one)."""

    def __init__(self: Any, inner: Any, limit: int, decoder: Any) -> None:
        self.inner, self.limit, self.decoder = inner, limit, decoder

    async def __aiter__(self: Any) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self.inner:
            if self.decoder is not None:  # at most one byte past the limit is decoded
                chunk = self.decoder.decompress(chunk, self.limit - read + 1)
            read += len(chunk)
            if read > self.limit:
                raise ResponseTooLarge(f"an answer of more than the limit of {self.limit:,} bytes")
            yield chunk
        if self.decoder is not None and (rest := self.decoder.flush()):
            if read + len(rest) > self.limit:
                raise ResponseTooLarge(f"an answer of more than the limit of {self.limit:,} bytes")
            yield rest

    async def aclose(self: Any) -> None:
        await self.inner.aclose()

    return type("CappedStream", (base,), {"__init__": __init__, "__aiter__": __aiter__, "aclose": aclose})
