"""The sandbox grader templates render in: plain data only, bounded in size and in time.

Reading: attribute access and subscripts read the keys and items of plain data, nothing else.
Size: every value a template builds (``*``, ``+``, ``%``, ``~``, ``**``, ``range``, filters) is
checked before it is built, nested containers counted as often as they appear, against the
render's ``max_size`` (characters and items); what does not fit raises
:class:`TemplateLimitError`. Operators checked this way are never folded at compile time, so a
huge constant is never built while a template loads. Time: the sandbox's hooks (attribute
reads, calls, operators, filters, ``range`` iterations) check the render's deadline.
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from agenteval_otel.errors import GraderError

__all__ = ["DEFAULT_MAX_SIZE", "RenderBudget", "TemplateLimitError", "bounded", "environment"]

DEFAULT_MAX_SIZE = 4_000_000
"""The most characters (and items) a grader template may build or render, by default."""
_MAX_INT_BITS = 100_000
_CHECK_EVERY = 1024
_FORMAT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


class TemplateLimitError(Exception):
    """A grader template went past its size or time limit."""


@dataclass
class RenderBudget:
    """What one render may use: ``max_size`` characters or items per value and in all, until
    ``deadline`` (``time.monotonic``; ``None``: no deadline); ``cancelled`` stops it at the
    next check."""

    max_size: int = DEFAULT_MAX_SIZE
    deadline: float | None = None
    timeout_s: float | None = None
    cancelled: threading.Event = field(default_factory=threading.Event)

    def check_time(self) -> None:
        """``TemplateLimitError`` once the deadline passed or the render was cancelled."""
        if self.cancelled.is_set() or (self.deadline is not None and time.monotonic() > self.deadline):
            self.cancelled.set()
            raise TemplateLimitError(f"rendering took longer than {self.timeout_s:g} s, the time limit")

    def check_size(self, size: int, what: str) -> None:
        """``TemplateLimitError`` when ``size`` passes ``max_size``."""
        if size > self.max_size:
            raise TemplateLimitError(f"{what} would hold {size:,} characters or items, more than the limit "
                                     f"of {self.max_size:,}")


_local = threading.local()
_UNBOUNDED_TIME = RenderBudget()  # compile time: sizes bounded, no deadline


def _budget() -> RenderBudget:
    return getattr(_local, "budget", None) or _UNBOUNDED_TIME


@contextmanager
def bounded(budget: RenderBudget) -> Iterator[RenderBudget]:
    """Render under ``budget`` in this thread for the block's duration."""
    _local.budget = budget
    try:
        yield budget
    finally:
        _local.budget = None


def weight(value: Any, limit: int, memo: dict[int, int] | None = None) -> int:
    """Characters and items in ``value``, nested containers counted as often as they appear;
    the count stops soon after passing ``limit``."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value.bit_length() // 3
    if isinstance(value, (bytes, range)):
        return len(value)
    if not isinstance(value, (list, tuple, dict, set, frozenset)):
        return 1
    memo = {} if memo is None else memo
    known = memo.get(id(value))
    if known is not None:
        return known
    memo[id(value)] = 0  # a container inside itself counts once
    total = len(value)
    items: Iterable[Any] = value.items() if isinstance(value, dict) else value
    for item in items:
        total += weight(item, limit, memo)
        if total > limit:
            break
    memo[id(value)] = total
    return total


def _check(value: Any, what: str) -> Any:
    budget = _budget()
    budget.check_size(weight(value, budget.max_size), what)
    return value


def _repeated(left: Any, right: Any) -> int | None:
    """The weight of ``left * right`` when it repeats a sequence, else ``None``."""
    for sequence, times in ((left, right), (right, left)):
        if isinstance(times, int) and isinstance(sequence, (str, list, tuple, bytes)):
            return max(times, 0) * weight(sequence, _budget().max_size)
    return None


def _check_format(fmt: str, what: str) -> None:
    for width, precision in _FORMAT_SPEC.findall(fmt):
        for number in (width, precision):
            if number == "*":
                raise TemplateLimitError(f"{what}: a '*' width or precision is not allowed")
            if number:
                _budget().check_size(int(number), f"{what} (a width of {number})")


class _BoundedRange(Sequence[int]):
    """``range`` whose iteration checks the render's deadline."""

    def __init__(self, values: range) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, index: Any) -> Any:
        return self.values[index]

    def __iter__(self) -> Iterator[int]:
        budget = _budget()
        for number, value in enumerate(self.values):
            if number % _CHECK_EVERY == 0:
                budget.check_time()
            yield value


def _estimate(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """How big the result of the filter ``name`` can grow, for the filters that multiply their
    input; ``None`` for the others (checked after the call)."""
    def arg(position: int, key: str, default: Any) -> Any:
        return args[position] if len(args) > position else kwargs.get(key, default)

    limit = _budget().max_size
    value = args[0] if args else ""
    text = str(value) if isinstance(value, str) else ""
    if name == "center":
        width = arg(1, "width", 80)
        return max(len(text), width if isinstance(width, int) else 0)
    if name == "indent":
        width = arg(1, "width", 4)
        return len(text) + (text.count("\n") + 1) * (width if isinstance(width, int) else len(str(width)))
    if name == "wordwrap":
        return len(text) + (len(text) + 1) * len(str(arg(3, "wrapstring", None) or "\n"))
    if name == "replace":
        old, new, count = str(arg(1, "old", "")), str(arg(2, "new", "")), arg(3, "count", None)
        found = text.count(old) if old else len(text) + 1
        if isinstance(count, int) and count >= 0:
            found = min(found, count)
        return len(text) + found * max(0, len(new) - len(old))
    if name == "join":
        items = value if isinstance(value, Sized) else ()
        return weight(value, limit) + len(items) * len(str(arg(1, "d", "")))
    if name == "sum":
        start = arg(2, "start", 0)
        if isinstance(start, (list, tuple)) and isinstance(value, Iterable):
            return weight(start, limit) + weight(list(value) if not isinstance(value, Sized) else value, limit)
    if name in ("batch", "slice"):
        return int(arg(1, "linecount" if name == "batch" else "slices", 0) or 0)
    if name == "format" and isinstance(value, str):
        _check_format(value, "the format filter")
    return None


def _bounded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    skip = 1 if getattr(function, "jinja_pass_arg", None) is not None else 0

    @functools.wraps(function)
    def filtered(*args: Any, **kwargs: Any) -> Any:
        budget = _budget()
        budget.check_time()
        what = f"the {name} filter's result"
        values = args[skip:]
        if name in ("join", "sum") and values and not isinstance(values[0], Sized):
            values = (_check(list(values[0]), f"the {name} filter's input"), *values[1:])
            args = (*args[:skip], *values)
        estimate = _estimate(name, values, kwargs)
        if estimate is not None:
            budget.check_size(estimate, what)
        result = function(*args, **kwargs)
        return _check(result, what) if isinstance(result, (str, list, tuple, dict)) else result

    return filtered


def _bounded_dumps(value: Any, **options: Any) -> str:
    """``json.dumps`` for the ``tojson`` filter, stopped as soon as it passes the size limit."""
    budget = _budget()
    parts: list[str] = []
    size = 0
    for part in json.JSONEncoder(**options).iterencode(value):
        size += len(part)
        budget.check_size(size, "the tojson filter's result")
        parts.append(part)
    return "".join(parts)


def _bounded_range(*args: int) -> _BoundedRange:
    from jinja2.sandbox import safe_range  # at most MAX_RANGE numbers

    values = safe_range(*args)
    _budget().check_size(len(values), "range()")
    return _BoundedRange(values)


@functools.lru_cache(maxsize=1)
def environment() -> Any:
    """The sandboxed environment every grader template renders in (built once)."""
    try:
        from jinja2 import StrictUndefined, Undefined
        from jinja2.compiler import CodeGenerator, Frame
        from jinja2.nodes import Concat
        from jinja2.sandbox import SandboxedEnvironment
    except ImportError:
        raise GraderError("grader templates need the jinja2 package "
                          "(pip install 'agenteval-otel[judge]')") from None

    class BoundedCodeGenerator(CodeGenerator):
        """``a ~ b`` joins through the environment, which checks the size first."""

        def visit_Concat(self, node: Concat, frame: Frame) -> None:
            self.write("environment.concat_bounded((")
            for arg in node.nodes:
                self.visit(arg, frame)
                self.write(", ")
            self.write("))")

    class DataOnlyEnvironment(SandboxedEnvironment):
        """Attribute access and subscripts read the keys and items of plain data, nothing else;
        values built are bounded in size, rendering in time (see the module docstring)."""

        code_generator_class = BoundedCodeGenerator
        intercepted_binops = frozenset(["+", "-", "*", "/", "//", "%", "**"])

        def getattr(self, obj: Any, attribute: str) -> Any:
            return self.getitem(obj, attribute)

        def getitem(self, obj: Any, argument: Any) -> Any:
            _budget().check_time()
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

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            budget = _budget()
            budget.check_time()
            what = f"the result of {operator!r}"
            if operator == "*":
                repeated = _repeated(left, right)
                if repeated is not None:
                    budget.check_size(repeated, what)
            elif operator == "+" and isinstance(left, (str, list, tuple)) and type(left) is type(right):
                budget.check_size(weight(left, budget.max_size) + weight(right, budget.max_size), what)
            elif operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1:
                if right * left.bit_length() > _MAX_INT_BITS:
                    raise TemplateLimitError(f"{what} would be a number of more than {_MAX_INT_BITS:,} bits")
            elif operator == "%" and isinstance(left, str):
                _check_format(left, what)
            result = super().call_binop(context, operator, left, right)
            return _check(result, what) if operator in ("%", "+") else result

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
            _budget().check_time()
            return super().call(__context, __obj, *args, **kwargs)

        def concat_bounded(self, parts: tuple[Any, ...]) -> str:
            texts = [str(part) for part in parts]
            _budget().check_size(sum(len(text) for text in texts), "the result of '~'")
            return "".join(texts)

    sandbox = DataOnlyEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
    sandbox.filters = {name: _bounded_filter(name, function) for name, function in sandbox.filters.items()}
    sandbox.filters["attr"] = lambda obj, name: sandbox.getattr(obj, name)  # data only, as entry.key
    sandbox.globals.pop("lipsum", None)  # text by the paragraph, unbounded
    sandbox.globals["range"] = _bounded_range
    sandbox.policies["json.dumps_function"] = _bounded_dumps
    return sandbox
