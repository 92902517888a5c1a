"""A grader's input formatter: a Jinja2 template rendered in a sandbox, over plain data only.

The template sees one name, ``entry`` (the query-set entry or the run's data, a dict).
``entry.content`` and ``entry["content"]`` read the key ``content``; an index or a slice reads
a list or a string. Nothing else is reachable: no attribute or method of any object (so
``{{ entry.__class__ }}`` or ``{{ entry.items() }}`` fail), and a key the entry does not hold
fails too (``StrictUndefined``), never renders as an empty string. Filters (``tojson``,
``dictsort``, ``join``, ``truncate``, ...) do the rest. Every failure is a
:class:`~agenteval_otel.errors.GraderError` naming the template, the line and what was reached for.

A template is bounded: no value it builds and not its output may pass ``max_size`` characters
(or items), checked before the value is built (``{{ 'a' * 3000000000 }}`` fails at once, at
render, and allocates nothing), and rendering stops after ``timeout_s`` seconds: the sandbox's
hooks check the deadline, and a render still running past it is interrupted in its thread.

>>> InputTemplate("Judge this:\\n{{ entry.content }}").render({"content": "Hi!"})
'Judge this:\\nHi!'
>>> InputTemplate("{{ entry.__class__ }}", name="grader.j2").render({})
Traceback (most recent call last):
...
agenteval_otel.errors.GraderError: grader template grader.j2, line 1: access to attribute '__class__' of 'dict' object is unsafe.
>>> InputTemplate("{{ 'a' * 3000000000 }}", name="grader.j2").render({})
Traceback (most recent call last):
...
agenteval_otel.errors.GraderError: grader template grader.j2, line 1: the result of '*' would hold 3,000,000,000 characters or items, more than the limit of 4,000,000
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from agenteval_otel.errors import GraderError
from agenteval_otel.experiments.graders._sandbox import (
    DEFAULT_MAX_SIZE,
    RenderBudget,
    TemplateLimitError,
    bounded,
    environment,
)

__all__ = ["DEFAULT_MAX_SIZE", "DEFAULT_RENDER_TIMEOUT_S", "InputTemplate"]

DEFAULT_RENDER_TIMEOUT_S = 10.0
"""How long a grader template may take to render, by default, in seconds."""


def _template_line(traceback: TracebackType | None, name: str) -> int | None:
    """The line of the template where rendering failed (Jinja2 puts the template's lines in the
    traceback under its name)."""
    line = None
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename == name:
            line = traceback.tb_lineno
        traceback = traceback.tb_next
    return line


class _Interrupted(BaseException):
    """Raised inside a render thread that ran past its deadline (never seen outside it)."""


def _interrupt(thread: threading.Thread) -> None:
    """Raise :class:`_Interrupted` in ``thread`` at its next Python instruction."""
    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(_Interrupted))


class _Render:
    """One render in a thread of its own, so that a deadline holds even where the template
    spends its time outside the sandbox's hooks."""

    def __init__(self, template: Any, entry: Mapping[str, Any], budget: RenderBudget) -> None:
        self.template, self.entry, self.budget = template, entry, budget
        self.text: str | None = None
        self.error: BaseException | None = None
        self.finished = False
        self.lock = threading.Lock()

    def run(self) -> None:
        try:
            try:
                with bounded(self.budget):
                    self.text = self._collect()
            finally:
                with self.lock:
                    self.finished = True
        except _Interrupted:
            pass
        except BaseException as exc:  # handed to the caller's thread
            self.error = exc

    def _collect(self) -> str:
        parts: list[str] = []
        size = 0
        for part in self.template.generate(entry=self.entry):
            size += len(part)
            self.budget.check_size(size, "the rendered input")
            self.budget.check_time()
            parts.append(part)
        return "".join(parts)

    def stop(self, thread: threading.Thread) -> None:
        """Cancel the render: its next check fails, and a thread still running is interrupted."""
        self.budget.cancelled.set()
        with self.lock:
            if not self.finished:
                _interrupt(thread)


class InputTemplate:
    """A grader's input formatter (see the module docstring).

    Args:
        source: the Jinja2 source.
        name: how errors name it (the file's path for :meth:`from_file`).
        max_size: the most characters or items a value it builds, or its output, may hold.
        timeout_s: how long one render may take, in seconds.
    """

    def __init__(self, source: str, *, name: str = "<template>", max_size: int = DEFAULT_MAX_SIZE,
                 timeout_s: float = DEFAULT_RENDER_TIMEOUT_S) -> None:
        sandbox = environment()  # first: it says how to install jinja2 when it is missing
        from jinja2 import TemplateSyntaxError

        if max_size < 1 or not timeout_s > 0:
            raise GraderError(f"grader template {name}: max_size and timeout_s must be positive, "
                              f"got {max_size} and {timeout_s}")
        if len(source) > max_size:
            raise GraderError(f"grader template {name}: {len(source):,} characters, more than the limit of "
                              f"{max_size:,}")
        self.source = source
        self.name = name
        self.max_size = max_size
        self.timeout_s = timeout_s
        try:
            code = sandbox.compile(source, name=name, filename=name)
            self._template = sandbox.template_class.from_code(sandbox, code, sandbox.make_globals(None))
        except TemplateSyntaxError as exc:
            raise GraderError(f"grader template {name}, line {exc.lineno}: {exc.message}") from None

    @classmethod
    def from_file(cls, path: str | Path, **limits: Any) -> InputTemplate:
        """The template in the file at ``path`` (UTF-8); ``limits``: ``max_size``, ``timeout_s``."""
        try:
            source = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise GraderError(f"grader template {path}: cannot be read ({exc})") from None
        return cls(source, name=str(path), **limits)

    def render(self, entry: Mapping[str, Any]) -> str:
        """The grader's input for ``entry``; ``GraderError`` when the template reaches for
        something ``entry`` does not hold or may not be reached, or passes its size or time limit."""
        if not isinstance(entry, Mapping):
            raise GraderError(f"grader template {self.name}: the entry must be a dict, got {type(entry).__name__}")
        budget = RenderBudget(max_size=self.max_size, deadline=time.monotonic() + self.timeout_s,
                              timeout_s=self.timeout_s)
        render = _Render(self._template, entry, budget)
        thread = threading.Thread(target=render.run, name="agenteval-grader-template", daemon=True)
        thread.start()
        thread.join(self.timeout_s)
        if thread.is_alive():
            render.stop(thread)
            raise GraderError(f"grader template {self.name}: rendering took longer than {self.timeout_s:g} s, "
                              "the time limit; stopped")
        if render.error is not None:
            raise self._error(render.error) from None
        assert render.text is not None
        return render.text

    def _error(self, exc: BaseException) -> GraderError:
        line = _template_line(exc.__traceback__, self.name)
        where = f", line {line}" if line is not None else ""
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        if type(exc).__module__.split(".")[0] != "jinja2" and not isinstance(exc, TemplateLimitError):
            message = f"{type(exc).__name__}: {message}"
        return GraderError(f"grader template {self.name}{where}: {message}")
