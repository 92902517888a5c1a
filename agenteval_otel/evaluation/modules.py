"""Importing users' own Python files (agents, criteria) without disturbing any other module.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> (folder / "json.py").write_text("ANSWER = 42\\n")
12
>>> import_file(folder / "json.py", "agenteval_example_").ANSWER, __import__("json").dumps([1])
(42, '[1]')
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["import_file"]


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
