"""The OTLP/HTTP server's connections: uvicorn (h11) behind its own accept loop, which holds at
most ``max_connections`` open and leaves the rest waiting in the listen backlog, and a deadline
for request headers, which closes the connections that hold a slot without sending a request.

uvicorn alone has neither: a connection may stay silent until the keep-alive timer, which only
starts after a first response, and ``limit_concurrency`` answers 503 to everyone once idle
connections fill it. Here a connection must send complete request headers within
``header_timeout`` of being accepted, and the next request's headers within ``header_timeout``
of its first byte (between requests, uvicorn's keep-alive timeout applies), so idle and
slow-header connections give their slot back and a well-behaved client waits at most about one
``header_timeout`` for one. Imported only when the receiver serves OTLP/HTTP (it needs uvicorn).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
from collections.abc import Callable
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["OtlpHttpServer"]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())


class _Connection(H11Protocol):
    """uvicorn's h11 protocol with a header deadline; ``on_close`` gives the connection's slot back."""

    def __init__(self, config: uvicorn.Config, server_state: Any, app_state: dict[str, Any], *,
                 header_timeout: float, on_header_timeout: Callable[[], None], on_close: Callable[[], None]) -> None:
        super().__init__(config, server_state, app_state)
        self._header_timeout = header_timeout
        self._on_header_timeout = on_header_timeout
        self._on_close: Callable[[], None] | None = on_close
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and self._awaiting_headers():
            self._arm()  # the first byte of the next request (or of what is left of a refused body)
        super().data_received(data)
        if not self._awaiting_headers():
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()

    def _awaiting_headers(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm(self) -> None:
        self._header_timer = self.loop.call_later(self._header_timeout, self._header_deadline)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_deadline(self) -> None:
        self._header_timer = None
        if self._awaiting_headers() and not self.transport.is_closing():
            self._on_header_timeout()
            self.transport.close()


class OtlpHttpServer(uvicorn.Server):
    """A uvicorn server on ``listener`` that accepts a connection only while fewer than
    ``max_connections`` are open, and closes those that send no request headers within
    ``header_timeout`` seconds (``on_header_timeout`` counts them)."""

    def __init__(self, config: uvicorn.Config, listener: socket.socket, *, max_connections: int,
                 header_timeout: float, on_header_timeout: Callable[[], None]) -> None:
        super().__init__(config)
        self.listener = listener
        self._max_connections = max_connections
        self._header_timeout = header_timeout
        self._on_header_timeout = on_header_timeout
        self._accepting: asyncio.Task[None] | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Start uvicorn with no listener of its own, then the accept loop."""
        await super().startup(sockets=[])
        self.listener.setblocking(False)
        self._accepting = asyncio.get_running_loop().create_task(self._accept())

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Stop accepting and close the listener, then shut down as uvicorn does."""
        if self._accepting is not None:
            self._accepting.cancel()
        await super().shutdown(sockets=[self.listener])

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        slots = asyncio.Semaphore(self._max_connections)
        while True:
            await slots.acquire()
            try:
                connection, _ = await loop.sock_accept(self.listener)
            except OSError as exc:  # e.g. out of file descriptors: wait, the way asyncio's own loop does
                slots.release()
                logger.warning("OTLP/HTTP receiver: accept failed (%s)", exc)
                await asyncio.sleep(0.1)
                continue
            except BaseException:
                slots.release()
                raise
            protocol = _Connection(self.config, self.server_state, self.lifespan.state,
                                   header_timeout=self._header_timeout, on_header_timeout=self._on_header_timeout,
                                   on_close=slots.release)
            try:
                await loop.connect_accepted_socket(functools.partial(_same, protocol), connection)
            except OSError:
                connection.close()
                if protocol.transport is None:  # never connected, so connection_lost will not give it back
                    slots.release()


def _same(protocol: _Connection) -> _Connection:
    """``protocol`` itself: the factory ``connect_accepted_socket`` asks for."""
    return protocol
