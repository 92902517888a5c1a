"""Importing users' own Python files (agents, criteria, parsers) without disturbing any other
module, and finding the objects they name (``module:attr``, ``path/to/file.py:attr``).

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> (folder / "json.py").write_text("ANSWER = 42\\n")
12
>>> import_file(folder / "json.py", "agenteval_example_").ANSWER, __import__("json").dumps([1])
(42, '[1]')
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from agenteval_otel.errors import ConfigError

__all__ = ["import_file", "load_object"]


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
