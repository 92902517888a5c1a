"""A progress bar for long runs, fed as an evaluation sink: one step per case result, with the
total and the time left when the total is known."""

from __future__ import annotations

from collections.abc import Iterator
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

from agenteval_otel.results import CallbackSink

__all__ = ["progress_sink"]


@contextmanager
def progress_sink(kind: str, total: int | None, completed: int = 0, *, quiet: bool = False) -> Iterator[CallbackSink]:
    """A sink advancing a bar on stderr (``kind``: its label; ``total``: ``None`` when unknown),
    shown only on a terminal and never with ``quiet``; the bar goes when the block ends."""
    console = Console(stderr=True)
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    if total is not None:
        columns.append(TimeRemainingColumn())
    progress = Progress(*columns, console=console, transient=True, disable=quiet or not console.is_terminal)
    task = progress.add_task(kind, total=total, completed=completed)
    with progress:
        yield CallbackSink(lambda _: progress.advance(task))
