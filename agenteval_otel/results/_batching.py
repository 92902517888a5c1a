"""``BatchQueue``: verdicts on their way out, in a bounded queue drained in batches by one
background thread, with every item counted as ``exported``, ``failed``, ``dropped`` (queue full,
after shutdown, or unsent at the shutdown deadline) or still ``queued``. The export of verdicts
into traces (``DeliveryProcessor``) and the backend-native sinks deliver through it.

>>> sent = []
>>> queue = BatchQueue(lambda batch: sent.extend(batch) or len(batch), name="doc")
>>> queue.put([1, 2, 3])
>>> queue.flush(5), sent, queue.counters.exported
(True, [1, 2, 3], 3)
>>> queue.close(5)
True
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["BatchQueue", "DeliveryCounters"]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class DeliveryCounters:
    """What became of the items given for delivery (``received`` is the sum)."""

    received: int = 0
    exported: int = 0
    failed: int = 0
    dropped: int = 0
    queued: int = 0

    @property
    def lost(self) -> int:
        """Items that will never reach the target: failed or dropped."""
        return self.failed + self.dropped


class BatchQueue(Generic[T]):
    """Items ``put`` are handed to ``deliver`` in batches of at most ``batch_size``, at most
    ``delay_s`` seconds apart, one batch at a time, from a queue of at most ``max_queue``;
    ``deliver(batch)`` returns how many it delivered (the rest failed) and should not raise (what
    it raises fails the batch). ``warn(kind, message)`` is told of the first drop of each kind
    (``"full"``, ``"closed"``). Never raises into the caller, never blocks ``put``."""

    def __init__(self, deliver: Callable[[list[T]], int], *, name: str, max_queue: int = 8192,
                 batch_size: int = 512, delay_s: float = 0.5,
                 warn: Callable[[str, str], object] = lambda kind, message: _log.warning(message)) -> None:
        if max_queue < 1 or batch_size < 1 or delay_s <= 0:
            raise ValueError("max_queue and batch_size must be at least 1, delay_s positive")
        self._deliver = deliver
        self._warn = warn
        self.max_queue = max_queue
        self._batch = batch_size
        self._delay = delay_s
        self._queue: deque[T] = deque()
        self._lock = threading.Condition()
        self._counts = {"received": 0, "exported": 0, "failed": 0, "dropped": 0}
        self._sending = 0
        self._flush_asked = False
        self._closed = False
        self._dropped_kinds: set[str] = set()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def counters(self) -> DeliveryCounters:
        """A snapshot of the counters."""
        with self._lock:
            return DeliveryCounters(**self._counts, queued=len(self._queue) + self._sending)

    @property
    def waiting(self) -> int:
        """Items queued and not taken for delivery yet."""
        with self._lock:
            return len(self._queue)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def put(self, items: Iterable[T]) -> None:
        """Queue ``items``; past the bound, or once closed, drop and count them."""
        first_drop: str | None = None
        with self._lock:
            for item in items:
                self._counts["received"] += 1
                if self._closed or len(self._queue) >= self.max_queue:
                    self._counts["dropped"] += 1
                    kind = "closed" if self._closed else "full"
                    if kind not in self._dropped_kinds:
                        self._dropped_kinds.add(kind)
                        first_drop = kind
                    continue
                self._queue.append(item)
            if len(self._queue) >= self._batch:
                self._lock.notify_all()
        if first_drop is not None:
            self._warn(first_drop, "a verdict was dropped: " + (
                "the export has shut down" if first_drop == "closed" else f"{self.max_queue} wait to be exported")
                + " (further drops are counted, not logged)")

    def _run(self) -> None:
        while True:
            with self._lock:
                if len(self._queue) < self._batch and not self._closed and not self._flush_asked:
                    self._lock.wait(self._delay)
                if not self._queue:
                    self._flush_asked = False
                    if self._closed:
                        return
                    continue
                batch = [self._queue.popleft() for _ in range(min(self._batch, len(self._queue)))]
                self._sending = len(batch)
            try:
                delivered = max(0, min(len(batch), self._deliver(batch)))
            except Exception:  # noqa: BLE001 - a delivery's failure is counted, never raised
                _log.debug("BatchQueue: the delivery raised", exc_info=True)
                delivered = 0
            with self._lock:
                self._counts["exported"] += delivered
                self._counts["failed"] += len(batch) - delivered
                self._sending = 0
                self._lock.notify_all()

    def flush(self, timeout_s: float) -> bool:
        """Deliver everything queued within ``timeout_s`` seconds; whether that happened."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            self._flush_asked = True
            self._lock.notify_all()
            while self._queue or self._sending:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._lock.wait(min(remaining, self._delay))
                self._lock.notify_all()
            return True

    def close(self, timeout_s: float) -> bool:
        """Flush within ``timeout_s`` seconds, count what is left as dropped, stop the thread;
        later items are dropped. Whether nothing was left sending at the deadline."""
        deadline = time.monotonic() + timeout_s
        self.flush(timeout_s)
        with self._lock:
            self._closed = True
            self._counts["dropped"] += len(self._queue)
            self._queue.clear()
            self._lock.notify_all()
        self._thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            return not self._sending
