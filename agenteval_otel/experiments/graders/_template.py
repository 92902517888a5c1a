"""A grader's input formatter: a Jinja2 template rendered in a sandbox, over plain data only.

The template sees one name, ``entry`` (the query-set entry or the run's data, a dict).
``entry.content`` and ``entry["content"]`` read the key ``content``; an index or a slice reads
a list or a string. Nothing else is reachable: no attribute or method of any object (so
``{{ entry.__class__ }}`` or ``{{ entry.items() }}`` fail), and a key the entry does not hold
fails too (``StrictUndefined``), never renders as an empty string. Filters (``tojson``,
``dictsort``, ``join``, ``truncate``, ...) do the rest. Every failure is a
:class:`~agenteval_otel.errors.GraderError` naming the template, the line and what was reached for.

>>> InputTemplate("Judge this:\\n{{ entry.content }}").render({"content": "Hi!"})
'Judge this:\\nHi!'
>>> InputTemplate("{{ entry.__class__ }}", name="grader.j2").render({})
Traceback (most recent call last):
...
agenteval_otel.errors.GraderError: grader template grader.j2, line 1: access to attribute '__class__' of 'dict' object is unsafe.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from agenteval_otel.errors import GraderError

__all__ = ["InputTemplate"]


@functools.lru_cache(maxsize=1)
def _environment() -> Any:
    """The sandboxed environment every grader template renders in (built once)."""
    try:
        from jinja2 import StrictUndefined, Undefined
        from jinja2.sandbox import SandboxedEnvironment
    except ImportError:
        raise GraderError("grader templates need the jinja2 package "
                          "(pip install 'agenteval-otel[judge]')") from None

    class DataOnlyEnvironment(SandboxedEnvironment):
        """Attribute access and subscripts read the keys and items of plain data, nothing else."""

        def getattr(self, obj: Any, attribute: str) -> Any:
            return self.getitem(obj, attribute)

        def getitem(self, obj: Any, argument: Any) -> Any:
            if isinstance(obj, Undefined):
                return obj  # the first thing that was not there is what the error names
            if isinstance(obj, Mapping):
                if argument in obj:
                    return obj[argument]
            elif isinstance(obj, Sequence) and isinstance(argument, (int, slice)) and not isinstance(argument, bool):
                try:
                    return obj[argument]
                except IndexError:
                    pass
            if isinstance(argument, str) and argument.startswith("_"):
                return self.unsafe_undefined(obj, argument)
            return self.undefined(obj=obj, name=argument)

    return DataOnlyEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)


def _template_line(traceback: TracebackType | None, name: str) -> int | None:
    """The line of the template where rendering failed (Jinja2 puts the template's lines in the
    traceback under its name)."""
    line = None
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename == name:
            line = traceback.tb_lineno
        traceback = traceback.tb_next
    return line


class InputTemplate:
    """A grader's input formatter (see the module docstring); ``name`` names it in errors."""

    def __init__(self, source: str, *, name: str = "<template>") -> None:
        environment = _environment()  # first: it says how to install jinja2 when it is missing
        from jinja2 import TemplateSyntaxError

        self.source = source
        self.name = name
        try:
            code = environment.compile(source, name=name, filename=name)
            self._template = environment.template_class.from_code(environment, code, environment.make_globals(None))
        except TemplateSyntaxError as exc:
            raise GraderError(f"grader template {name}, line {exc.lineno}: {exc.message}") from None

    @classmethod
    def from_file(cls, path: str | Path) -> InputTemplate:
        """The template in the file at ``path`` (UTF-8)."""
        try:
            source = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise GraderError(f"grader template {path}: cannot be read ({exc})") from None
        return cls(source, name=str(path))

    def render(self, entry: Mapping[str, Any]) -> str:
        """The grader's input for ``entry``; ``GraderError`` when the template reaches for
        something ``entry`` does not hold or may not be reached."""
        if not isinstance(entry, Mapping):
            raise GraderError(f"grader template {self.name}: the entry must be a dict, got {type(entry).__name__}")
        try:
            return str(self._template.render(entry=entry))
        except Exception as exc:
            line = _template_line(exc.__traceback__, self.name)
            where = f", line {line}" if line is not None else ""
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            if type(exc).__module__.split(".")[0] != "jinja2":
                message = f"{type(exc).__name__}: {message}"
            raise GraderError(f"grader template {self.name}{where}: {message}") from None
