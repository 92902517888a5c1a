"""Reading what the product reads: JSON, YAML and JSON Lines files, with errors that name the
file, the line or JSON path, and what was expected; writing the documents it writes (JSON or
YAML, with a ``$schema`` reference for editors); and users' own Python files (agents, criteria,
parsers), imported under private names so they never disturb another module.

One loader serves eval sets, configs, query sets, simulations, experiments and agents.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> (folder / "json.py").write_text("ANSWER = 42\\n")
12
>>> import_file(folder / "json.py", "agenteval_example_").ANSWER, __import__("json").dumps([1])
(42, '[1]')
>>> _ = (folder / "q.jsonl").write_text('{"content": "hi"}\\n\\n[1]\\n')
>>> next(read_jsonl(folder / "q.jsonl", ValueError, "a query"))
(1, {'content': 'hi'})
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import pydantic_core
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from agenteval_otel.errors import AgentEvalError, ConfigError, EvalSetLoadError

__all__ = [
    # JSON and JSON Lines files
    "MAX_JSON_DEPTH",
    "check_depth",
    "json_path",
    "read_json",
    "read_jsonl",
    "validate_file_data",
    "validation_message",
    "write_json",
    # YAML files
    "YAML_SUFFIXES",
    "is_yaml",
    "read_yaml",
    "write_yaml",
    # documents in either (eval sets, configs, query sets) and their JSON Schemas
    "SCHEMA_KEY",
    "Document",
    "SchemaReferenced",
    "json_schema",
    "read_document",
    "schema_reference",
    "write_document",
    # users' Python files
    "import_file",
    "load_object",
]

ModelT = TypeVar("ModelT", bound=BaseModel)

_MAX_LISTED_ERRORS = 5
MAX_JSON_DEPTH = 256
"""How deeply an eval set or config file may nest its JSON (objects and lists)."""


def read_json(path: str | Path, error: type[AgentEvalError] = EvalSetLoadError) -> Any:
    """Parse a JSON file; a missing, unreadable or invalid file raises ``error``.

    Read from bytes, with equal strings of the document held once; a file that does not parse
    so is read again by the standard library, whose errors say where and why.
    """
    file = Path(path)
    try:
        data = pydantic_core.from_json(file.read_bytes())
    except (OSError, ValueError):
        return _read_json_checked(file, error)
    check_depth(data, file, error)
    return data


def _read_json_checked(file: Path, error: type[AgentEvalError]) -> Any:
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{file}: no such file") from None
    except IsADirectoryError:
        raise error(f"{file}: is a directory; expected a JSON file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{file}: cannot be read ({exc})") from None
    if not text.strip():
        raise error(f"{file}: the file is empty; expected a JSON document")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(
            f"{file}: line {exc.lineno}, column {exc.colno}: invalid JSON ({exc.msg})\n"
            f"{_pointed_at(text, exc.lineno, exc.colno)}"
        ) from None
    except RecursionError:
        raise error(_too_deep(file)) from None
    check_depth(data, file, error)
    return data


YAML_SUFFIXES = (".yaml", ".yml")
"""The extensions of files read and written as YAML; any other is JSON (or JSON Lines)."""
_YAML_EXTRA = "pip install 'agenteval-otel[yaml]'"


def is_yaml(path: str | Path) -> bool:
    """Whether ``path`` names a YAML file (``.yaml`` or ``.yml``)."""
    return Path(path).suffix.lower() in YAML_SUFFIXES


def _yaml_module(path: str | Path, error: type[AgentEvalError], hint: str, doing: str) -> Any:
    try:
        import yaml
    except ImportError:
        raise error(f"{path}: {doing} YAML needs PyYAML ({_YAML_EXTRA}){hint}") from None
    return yaml


def read_yaml(path: str | Path, error: type[AgentEvalError] = EvalSetLoadError, *, hint: str = "") -> Any:
    """The YAML document in ``path`` (safe loading: data, never objects), or ``error`` naming the
    file and, for a syntax error, the line and column. PyYAML is optional: without it, ``error``
    says so and names the extra to install (``hint``: what else the user can do, e.g. write JSON)."""
    return _read_yaml_nodes(Path(path), error, hint)[0]


def _read_yaml_nodes(file: Path, error: type[AgentEvalError], hint: str) -> tuple[Any, Any]:
    """The data of a YAML file and its node tree (``None`` for an empty file), parsed once."""
    yaml = _yaml_module(file, error, hint, "reading")
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{file}: no such file") from None
    except IsADirectoryError:
        raise error(f"{file}: is a directory; expected a YAML file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{file}: cannot be read ({exc})") from None
    try:
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            data = None if node is None else loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        raise error(f"{file}: {where}invalid YAML ({getattr(exc, 'problem', None) or exc})") from None
    except RecursionError:
        raise error(_too_deep(file)) from None
    check_depth(data, file, error)
    return data, node


def write_yaml(path: str | Path, data: Any, *, comment: str = "",
               error: type[AgentEvalError] = ConfigError) -> Path:
    """Write ``data`` as block-style UTF-8 YAML (keys in their order), after ``comment`` as a
    first ``#`` line when given, creating parent folders; returns the path. Without PyYAML,
    ``error`` names the extra to install."""
    yaml = _yaml_module(path, error, "", "writing")
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100)
    file.write_text((f"# {comment}\n" if comment else "") + text, encoding="utf-8")
    return file


# --- documents: eval sets, configs and query sets, in JSON or YAML -------------------------------
SCHEMA_KEY = "$schema"
"""The key of a document's reference to its JSON Schema; loading ignores it."""


@dataclass(frozen=True)
class Document:
    """A parsed JSON or YAML file: its data and, for YAML, the node tree that says on which line
    each value stands."""

    path: Path
    data: Any
    nodes: Any = None

    def line_of(self, location: tuple[int | str, ...]) -> int | None:
        """The line of the value at ``location`` (a pydantic error location: keys and list
        indexes, union tags skipped), or of the deepest value on the way that the file has (a
        missing field's object); ``None`` for JSON."""
        node = self.nodes
        if node is None:
            return None
        line: int = node.start_mark.line + 1
        for part in location:
            if node.id == "mapping" and isinstance(part, str):
                found = next(((key, value) for key, value in node.value if key.value == part), None)
                if found is not None:
                    line, node = found[0].start_mark.line + 1, found[1]
            elif node.id == "sequence" and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
                line = node.start_mark.line + 1
        return line


def read_document(path: str | Path, error: type[AgentEvalError] = EvalSetLoadError, *,
                  hint: str = "") -> Document:
    """The document in ``path``: YAML for ``.yaml``/``.yml`` (PyYAML needed; ``hint`` as for
    :func:`read_yaml`), else JSON; any problem raises ``error`` naming the file and the line."""
    file = Path(path)
    if not is_yaml(file):
        return Document(file, read_json(file, error))
    data, nodes = _read_yaml_nodes(file, error, hint)
    if nodes is None:
        raise error(f"{file}: the file is empty; expected a YAML document")
    return Document(file, data, nodes)


def schema_reference(name: str) -> str:
    """The ``$schema`` value of a document of kind ``name``: the file ``agenteval schema
    name`` writes, beside the document."""
    return f"./{name}.schema.json"


def write_document(path: str | Path, data: dict[str, Any], schema: str) -> Path:
    """Write a document of kind ``schema`` (``evalset``, ``config``, ``queryset``) to ``path``:
    YAML for ``.yaml``/``.yml`` (headed by the ``yaml-language-server`` comment naming its
    schema), else JSON; both carry ``$schema`` first so editors complete and check them."""
    reference = schema_reference(schema)
    document = {SCHEMA_KEY: reference, **data}
    if is_yaml(path):
        return write_yaml(path, document, comment=f"yaml-language-server: $schema={reference}")
    return write_json(path, document)


def _schema_key_allowed(schema: dict[str, Any]) -> None:
    schema["properties"] = {
        SCHEMA_KEY: {"type": "string", "description": "The JSON Schema of this file (ignored when loading)."},
        **schema.get("properties", {}),
    }


class SchemaReferenced(BaseModel):
    """A model stored as a document of its own: a ``$schema`` key is accepted (and dropped), and
    its JSON Schema allows one."""

    model_config = ConfigDict(json_schema_extra=_schema_key_allowed)

    @model_validator(mode="before")
    @classmethod
    def _schema_key_dropped(cls, data: Any) -> Any:
        if isinstance(data, dict) and SCHEMA_KEY in data:
            return {key: value for key, value in data.items() if key != SCHEMA_KEY}
        return data


def json_schema(schema: dict[str, Any], name: str, title: str) -> dict[str, Any]:
    """A model's JSON Schema (``model_json_schema()``) as the file ``agenteval schema name``
    writes: the meta-schema, an ``$id`` (the file's name, as documents reference it) and
    ``title`` first."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{name}.schema.json",
        **{key: value for key, value in schema.items() if key != "title"},
        "title": title,
    }


def _too_deep(file: Path) -> str:
    return f"{file}: the JSON is nested more than {MAX_JSON_DEPTH} levels deep; expected at most {MAX_JSON_DEPTH}"


def check_depth(data: Any, file: str | Path, error: type[AgentEvalError] = EvalSetLoadError) -> None:
    """Raise ``error`` when parsed JSON is nested deeper than ``MAX_JSON_DEPTH`` (so that no
    recursive step after reading can fail with ``RecursionError``)."""
    pending: list[tuple[Any, int]] = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if items is None:
            continue
        if depth > MAX_JSON_DEPTH:
            raise error(_too_deep(Path(file)))
        pending.extend((item, depth + 1) for item in items if isinstance(item, (dict, list)))


_SNIPPET = 72


def _pointed_at(text: str, lineno: int, colno: int) -> str:
    """The offending line (a window of it around the column, if long) and a caret under the
    column, both indented."""
    lines = text.splitlines() or [""]
    line = lines[min(lineno, len(lines)) - 1].replace("\t", " ")
    column = colno - 1
    start = max(0, min(column - _SNIPPET // 2, len(line) - _SNIPPET))
    snippet = line[start:start + _SNIPPET]
    prefix = "..." if start > 0 else ""
    suffix = "..." if start + _SNIPPET < len(line) else ""
    return f"    {prefix}{snippet}{suffix}\n    {' ' * (len(prefix) + column - start)}^"


def write_json(path: str | Path, data: Any) -> Path:
    """Write ``data`` as indented UTF-8 JSON, creating parent folders; returns the path."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return file


def json_path(location: tuple[int | str, ...]) -> str:
    """A pydantic error location as a JSON path: ``eval_cases[3].conversation[0].user_content``.

    Union-member tags that pydantic inserts (``str``, ``list[...]``, ``function-after[...]``)
    are left out.
    """
    path = ""
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        elif any(c in part for c in "[]()-") or part in {"str", "int", "float", "bool", "dict"}:
            continue
        else:
            path += f".{part}" if path else part
    return path or "(top level)"


def _described(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _own_words(error: Any) -> str:
    """The message of one pydantic error, without the prefix pydantic puts before the words of
    a validator (``Value error, unknown criterion ...`` -> ``unknown criterion ...``)."""
    raised = (error.get("ctx") or {}).get("error")
    if error["type"] in {"value_error", "assertion_error"} and raised is not None:
        return str(raised)
    return str(error["msg"])


def validation_message(source: str | Path, exc: ValidationError, document: Document | None = None) -> str:
    """One readable message for a pydantic ``ValidationError`` from the file ``source``; with
    the YAML ``document`` validated, each path is preceded by its line."""
    by_path: dict[str, list[str]] = {}
    lines: dict[str, int | None] = {}
    for err in exc.errors(include_url=False):
        expected = _own_words(err)
        if err["type"] not in {"missing", "value_error", "extra_forbidden"}:
            expected += f" (got {_described(err.get('input'))})"
        if err["type"] == "extra_forbidden":
            expected = "unknown field"
        path = json_path(tuple(err["loc"]))
        by_path.setdefault(path, []).append(expected)
        if document is not None and path not in lines:
            lines[path] = document.line_of(tuple(err["loc"]))
    parts = [
        ("" if lines.get(path) is None else f"line {lines[path]}: ") + f"{path}: {' or '.join(dict.fromkeys(msgs))}"
        for path, msgs in list(by_path.items())[:_MAX_LISTED_ERRORS]
    ]
    more = len(by_path) - len(parts)
    if more > 0:
        parts.append(f"... and {more} more")
    return f"{source}: " + "; ".join(parts)


def validate_file_data(
    model: type[ModelT],
    data: Any,
    source: str | Path,
    error: type[AgentEvalError] = EvalSetLoadError,
    document: Document | None = None,
) -> ModelT:
    """Validate parsed file data against ``model``, raising ``error`` with the JSON path (and,
    for the YAML ``document`` the data came from, the line)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(validation_message(source, exc, document)) from None



def read_jsonl(path: str | Path, error: type[AgentEvalError], what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each non-blank line of ``path`` with its line number, parsed as a JSON object (``what``
    names one, e.g. "a query"); anything else raises ``error`` naming the file and the line."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{file}: no such file") from None
    except IsADirectoryError:
        raise error(f"{file}: is a directory; expected a JSONL file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{file}: cannot be read ({exc})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{file}: line {number}, column {exc.colno}: invalid JSON ({exc.msg}); "
                        f"expected {what} as one JSON object per line") from None
        except RecursionError:
            raise error(f"{file}: line {number}: the JSON is nested too deeply") from None
        if not isinstance(data, dict):
            raise error(f"{file}: line {number}: expected {what} as a JSON object, got {_json_kind(data)}")
        check_depth(data, f"{file}: line {number}", error)
        yield number, data


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array"

def import_file(path: Path, prefix: str) -> ModuleType:
    """The module of the ``.py`` file at ``path``, imported under a private name (``prefix`` and
    a hash of the resolved path), so that a file named like another module (``json.py``) never
    replaces it and importing the same file twice gives the same module. The file's folder goes
    at the end of ``sys.path``, so it can import its sibling modules without shadowing any other.

    Raises ``ImportError`` when the file cannot be imported; what the file itself raises
    propagates.
    """
    resolved = path.resolve()
    private_name = prefix + hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
    if private_name in sys.modules:
        return sys.modules[private_name]
    spec = importlib.util.spec_from_file_location(private_name, resolved)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    folder = str(resolved.parent)
    if folder not in sys.path:
        sys.path.append(folder)
    module = importlib.util.module_from_spec(spec)
    sys.modules[private_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[private_name]
        raise
    return module


def load_object(
    spec: str, label: str, *, prefix: str, error: type[ConfigError] = ConfigError, dotted: bool = False
) -> Any:
    """The object ``spec`` names: ``module:attr`` or ``path/to/file.py:attr`` (and, with
    ``dotted``, ``package.module.attr``); the current folder is importable. Anything that goes
    wrong raises ``error`` with ``label`` and what was expected or found."""
    module_name, sep, attribute = spec.rpartition(":") if ":" in spec or not dotted else spec.rpartition(".")
    if not sep or not module_name or not attribute:
        forms = "'module:attribute', 'package.module.attribute'" if dotted else "'module:attribute'"
        raise error(f"{label}: expected {forms} or 'path/to/file.py:attribute'")
    if module_name.endswith(".py") or "/" in module_name or "\\" in module_name:
        path = Path(module_name)
        if not path.is_file():
            raise error(f"{label}: no such file {path}")
        try:
            module = import_file(path, prefix)
        except Exception as exc:
            raise error(f"{label}: cannot import {path} ({type(exc).__name__}: {exc})") from None
    else:
        if "" not in sys.path and str(Path.cwd()) not in sys.path:
            sys.path.insert(0, str(Path.cwd()))
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise error(f"{label}: cannot import {module_name!r} ({type(exc).__name__}: {exc})") from None
    try:
        return functools.reduce(getattr, attribute.split("."), module)
    except AttributeError:
        raise error(f"{label}: {module_name} has no attribute {attribute!r}") from None
