"""A progress bar for long runs, fed as an evaluation sink: one step per result (a case result,
a simulation record), with the total and the time left when the total is known."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

__all__ = ["ProgressSink", "progress_sink"]


class ProgressSink:
    """An evaluation sink that advances a progress bar by one for each result it is given."""

    def __init__(self, advance: Callable[[], object]) -> None:
        self._advance = advance

    def submit(self, result: object) -> None:
        """One more result done."""
        self._advance()

    def force_flush(self, timeout: float | None = None) -> bool:
        return True

    def shutdown(self, timeout: float | None = None) -> bool:
        return True


@contextmanager
def progress_sink(kind: str, total: int | None, completed: int = 0, *, quiet: bool = False) -> Iterator[ProgressSink]:
    """A sink advancing a bar on stderr (``kind``: its label; ``total``: ``None`` when unknown),
    shown only on a terminal and never with ``quiet``; the bar goes when the block ends."""
    console = Console(stderr=True)
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    if total is not None:
        columns.append(TimeRemainingColumn())
    progress = Progress(*columns, console=console, transient=True, disable=quiet or not console.is_terminal)
    task = progress.add_task(kind, total=total, completed=completed)
    with progress:
        yield ProgressSink(lambda: progress.advance(task))
