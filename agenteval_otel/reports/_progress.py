"""Progress of long runs, fed as an evaluation sink: one step per result (a case result, a
simulation record). On a terminal, a bar; elsewhere (CI logs, files), a plain line every
``interval`` seconds. Both show the results done and their rate, the share of the work done and
the time left when the size of the work is known (the results expected, or the bytes or traces a
source has to read), and what ``status`` says (e.g. the judge calls in flight).

>>> state = RunProgress("eval", total=200, started=0.0)
>>> for _ in range(50):
...     state.advance()
>>> state.line(now=10.0)
'eval: 50/200 results (5.0/s), 25%, about 30s left'
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol, TextIO

from rich.console import Console, RenderableType
from rich.progress import Progress, ProgressColumn, Task, TextColumn, TimeElapsedColumn
from rich.progress_bar import ProgressBar
from rich.text import Text

__all__ = ["ProgressSink", "RunProgress", "WorkRead", "progress_sink"]

DEFAULT_INTERVAL_S = 30.0
"""Seconds between two plain progress lines when stderr is not a terminal."""


class WorkRead(Protocol):
    """How far a run's input has been read: ``done`` of ``total`` ``unit`` (a trace source's
    ``ReadProgress``); ``total`` is ``None`` while not known."""

    @property
    def unit(self) -> str: ...

    @property
    def total(self) -> int | None: ...

    @property
    def done(self) -> int: ...


class RunProgress:
    """What a long run has done and how long it has left: ``completed`` results of ``total``
    (``None`` when not known), the input read so far (``work``), and a ``status`` text. The share
    done is the results' when their total is known, else the input's; the time left is the time
    taken so far scaled by the share left (results resumed from a run file are not counted in
    the rate)."""

    def __init__(self, kind: str, total: int | None, completed: int = 0, *, work: WorkRead | None = None,
                 status: Callable[[], str] | None = None, started: float | None = None) -> None:
        self.kind, self.total, self.completed = kind, total, completed
        self.work, self.status = work, status
        self.resumed = completed
        self.started = time.monotonic() if started is None else started

    def advance(self) -> None:
        """One more result."""
        self.completed += 1

    def fraction(self) -> float | None:
        """The share of the work done (``None`` when its size is not known)."""
        if self.total:
            return min(1.0, self.completed / self.total)
        if self.work is not None and self.work.total:
            return min(1.0, self.work.done / self.work.total)
        return None

    def rate(self, now: float | None = None) -> float | None:
        """Results per second in this run so far."""
        elapsed = (time.monotonic() if now is None else now) - self.started
        return (self.completed - self.resumed) / elapsed if elapsed > 0 else None

    def seconds_left(self, now: float | None = None) -> float | None:
        """The time left, when the share done is known and above zero."""
        share = self.fraction()
        elapsed = (time.monotonic() if now is None else now) - self.started
        if share is None or elapsed <= 0:
            return None
        if self.total:  # resumed results took no time in this run
            share = (self.completed - self.resumed) / max(1, self.total - self.resumed)
        if share <= 0:
            return None
        return elapsed * (1 - share) / share

    def counts(self) -> str:
        """``50/200 results`` or ``50 results``, then the input read (``12.0/48.0 MB read``)."""
        text = f"{self.completed}/{self.total} results" if self.total is not None else f"{self.completed} results"
        work = self.work
        if work is not None and work.done and not self.total:
            text += f", {_amount(work.done, work.unit, work.total)} read"
        return text

    def line(self, now: float | None = None) -> str:
        """One plain line: the kind, then :meth:`figures`."""
        return f"{self.kind}: {self.figures(now)}"

    def figures(self, now: float | None = None) -> str:
        """Counts, rate, share done, time left and status."""
        parts = [self.counts()]
        rate = self.rate(now)
        if rate is not None:
            parts[0] += f" ({rate:.1f}/s)"
        share = self.fraction()
        if share is not None:
            parts.append(f"{share:.0%}")
        left = self.seconds_left(now)
        if left is not None:
            parts.append(f"about {_duration(left)} left")
        status = self.status() if self.status is not None else ""
        if status:
            parts.append(status)
        return ", ".join(parts)


def _amount(done: int, unit: str, total: int | None) -> str:
    if unit == "bytes":
        scale, name = (1e9, "GB") if (total or done) >= 1e9 else (1e6, "MB")
        return f"{done / scale:.1f}/{total / scale:.1f} {name}" if total else f"{done / scale:.1f} {name}"
    return f"{done}/{total} {unit}" if total else f"{done} {unit}"


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class ProgressSink:
    """An evaluation sink that advances a run's progress by one for each result it is given."""

    def __init__(self, advance: Callable[[], object]) -> None:
        self._advance = advance

    def submit(self, result: object) -> None:
        """One more result done."""
        self._advance()

    def force_flush(self, timeout: float | None = None) -> bool:
        return True

    def shutdown(self, timeout: float | None = None) -> bool:
        return True


class _Bar(ProgressColumn):
    """The bar of the share done (a pulse while it is not known)."""

    def __init__(self, state: RunProgress) -> None:
        super().__init__()
        self.state = state

    def render(self, task: Task) -> RenderableType:
        share = self.state.fraction()
        if share is None:
            return ProgressBar(total=None, pulse=True, width=40, animation_time=task.get_time())
        return ProgressBar(total=1000, completed=int(share * 1000), width=40)


class _Figures(ProgressColumn):
    """Counts, rate, time left and status, as the plain line says them."""

    def __init__(self, state: RunProgress) -> None:
        super().__init__()
        self.state = state

    def render(self, task: Task) -> RenderableType:
        return Text(self.state.figures(), style="progress.download")


@contextmanager
def progress_sink(kind: str, total: int | None, completed: int = 0, *, quiet: bool = False,
                  work: WorkRead | None = None, status: Callable[[], str] | None = None,
                  interval_s: float = DEFAULT_INTERVAL_S, stream: TextIO | None = None) -> Iterator[ProgressSink]:
    """A sink showing the run's progress on stderr (``kind``: its label; ``total``: the results
    expected, ``None`` when unknown; ``work``: the input read so far, which gives the share done
    when ``total`` is unknown; ``status``: more to show, e.g. the judge calls in flight). A bar
    on a terminal, which goes when the block ends; elsewhere a plain line every ``interval_s``
    seconds; nothing with ``quiet``."""
    state = RunProgress(kind, total, completed, work=work, status=status)
    if quiet:
        yield ProgressSink(state.advance)
        return
    console = Console(stderr=True, file=stream)
    if not console.is_terminal:
        with _lines(state, stream if stream is not None else sys.stderr, interval_s):
            yield ProgressSink(state.advance)
        return
    progress = Progress(TextColumn("{task.description}"), _Bar(state), _Figures(state), TimeElapsedColumn(),
                        console=console, transient=True)
    progress.add_task(kind, total=None)
    with progress:
        yield ProgressSink(state.advance)


@contextmanager
def _lines(state: RunProgress, stream: TextIO, interval_s: float) -> Iterator[None]:
    """A plain progress line on ``stream`` every ``interval_s`` seconds, from a daemon thread."""
    stop = threading.Event()

    def report() -> None:
        while not stop.wait(interval_s):
            try:
                print(state.line(), file=stream, flush=True)
            except (OSError, ValueError):  # the stream went away: no more lines
                return

    thread = threading.Thread(target=report, name="agenteval progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=1)
