"""The package's shape: one concept per package, imports run one way, no private name crosses a
package border, implementation modules are private, and the light entry points stay light
(checked in fresh interpreters).

Allowed arrows (DESIGN, "The SDK, package by package"): ``semconv``, ``errors`` and ``loading``
are leaves; tracing, trajectory and judge sit on the leaves; traces and evalsets on trajectory;
results on evalsets, trajectory, judge and tracing's public API; criteria on evalsets, results,
trajectory and judge; evaluation on all of these and traces; checks on evaluation; experiments on
evaluation and checks; reports on results, evalsets and trajectory; the CLI, the pytest plugin
and the lazy root on anything public.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "agenteval_otel"
LEAVES = frozenset({"semconv", "errors", "loading"})
_TRACE_IO = LEAVES | {"trajectory"}
_RESULTS = LEAVES | {"evalsets", "trajectory", "judge", "tracing"}
_CRITERIA = LEAVES | {"evalsets", "results", "trajectory", "judge"}
_EVALUATION = _RESULTS | _CRITERIA | {"criteria", "traces"}
ALLOWED: dict[str, frozenset[str]] = {
    "semconv": frozenset(),
    "errors": frozenset(),
    "loading": frozenset({"errors"}),
    "tracing": LEAVES,
    "trajectory": LEAVES,
    "judge": LEAVES,
    "traces": _TRACE_IO,
    "evalsets": _TRACE_IO,
    "results": _RESULTS,
    "criteria": _CRITERIA,
    "evaluation": _EVALUATION,
    "checks": _EVALUATION | {"evaluation"},
    "experiments": _EVALUATION | {"evaluation", "checks"},
    "reports": LEAVES | {"results", "evalsets", "trajectory"},
}
ANYTHING_PUBLIC = frozenset({"cli", "pytest_plugin", "__init__"})
PRIVATE_IMPLEMENTATION = frozenset({"evalsets", "criteria", "results", "evaluation", "checks", "experiments",
                                    "reports", "cli"})
"""Packages whose implementation modules are all private: their ``__init__`` is the public surface."""
LARGEST_SHARE = 0.20


def _part(module: str) -> str:
    """``agenteval_otel.criteria._registry`` -> ``criteria``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    relative = path.relative_to(REPO_ROOT).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(source: str, module: str, is_package: bool) -> list[tuple[str, str | None, int]]:
    """``(imported module, imported name or None, line)`` of every import of ours in ``source``,
    wherever it is (top level, inside functions, under ``TYPE_CHECKING``)."""
    found: list[tuple[str, str | None, int]] = []
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            found += [(base, alias.name, node.lineno) for alias in node.names]
    return [item for item in found if item[0] == "agenteval_otel" or item[0].startswith("agenteval_otel.")]


def problems_in(source: str, module: str, is_package: bool = False) -> list[str]:
    """Every arrow against the order and every private name taken from another package."""
    found = []
    own = _part(module)
    for target, name, line in imports_of(source, module, is_package):
        if target == "agenteval_otel" and name is not None:
            target = f"agenteval_otel.{name}" if name in ALLOWED else target
        other = _part(target)
        where = f"{module}:{line}"
        if other != own and own not in ANYTHING_PUBLIC and other not in ALLOWED.get(own, frozenset()):
            found.append(f"{where}: {own} may not import {target}")
        if other != own:
            private_module = any(p.startswith("_") and not p.startswith("__") for p in target.split(".")[1:])
            private_name = name is not None and name.startswith("_") and not name.startswith("__")
            if private_module or private_name:
                found.append(f"{where}: imports the private {target}{'.' + name if name else ''} of {other}")
    return found


def test_every_module_belongs_to_a_package_of_the_layout() -> None:
    found = {path.relative_to(PACKAGE).parts[0].removesuffix(".py") for path in PACKAGE.glob("*")
             if path.suffix == ".py" or (path / "__init__.py").exists()}
    assert found == set(ALLOWED) | ANYTHING_PUBLIC


def test_implementation_modules_are_private() -> None:
    public = [str(path.relative_to(PACKAGE)) for name in sorted(PRIVATE_IMPLEMENTATION)
              for path in (PACKAGE / name).rglob("*.py")
              if not path.name.startswith("_") and not path.name.startswith("__")]
    assert public == []


def test_no_package_holds_more_than_a_fifth_of_the_lines() -> None:
    lines: dict[str, int] = {}
    for path in PACKAGE.rglob("*.py"):
        top = path.relative_to(PACKAGE).parts[0]
        lines[top] = lines.get(top, 0) + len(path.read_text(encoding="utf-8").splitlines())
    total = sum(lines.values())
    assert {name: f"{count / total:.0%}" for name, count in lines.items() if count > LARGEST_SHARE * total} == {}


def test_imports_run_one_way_and_keep_private_names_private() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        found += problems_in(path.read_text(encoding="utf-8"), module, path.name == "__init__.py")
    assert found == []


@pytest.mark.parametrize(
    ("source", "module", "expected"),
    [
        ("from agenteval_otel.evalsets._models import ToolCall", "agenteval_otel.trajectory.trajectory",
         "trajectory may not import"),
        ("import agenteval_otel.traces.files", "agenteval_otel.tracing.configure", "tracing may not import"),
        ("def f():\n    from agenteval_otel.reports import console", "agenteval_otel.evaluation._live",
         "evaluation may not import"),
        ("from agenteval_otel.tracing._steps import Step", "agenteval_otel.evaluation._capture",
         "private agenteval_otel.tracing._steps"),
        ("from agenteval_otel.tracing.content import _repr", "agenteval_otel.cli", "private"),
        ("from ..evaluation import results", "agenteval_otel.trajectory.assemble", "trajectory may not import"),
    ],
)
def test_the_check_catches_what_it_forbids(source: str, module: str, expected: str) -> None:
    found = problems_in(source, module)
    assert found and expected in found[0]


def _fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


LOADED = "import sys; print(' '.join(sorted(m for m in sys.modules if m.startswith(('agenteval_otel', 'pydantic', 'rich', 'rouge_score', 'nltk', 'openai', 'jinja2')))))"


def test_capture_loads_no_evaluation_conversion_or_pydantic(tmp_path: Path) -> None:
    loaded = _fresh(
        "from agenteval_otel import tool, agent, configure\n"
        f"handle = configure('svc', traces_file={str(tmp_path / 't.jsonl')!r}, set_global=False)\n"
        "@tool\ndef f(x): return x\nf(1)\nhandle.shutdown(5)\n" + LOADED
    ).split()
    assert loaded and all(m == "agenteval_otel" or m.startswith(("agenteval_otel.tracing", "agenteval_otel.semconv",
                                                                      "agenteval_otel.errors"))
                          for m in loaded), loaded


def test_a_decorator_loads_the_step_lifecycle_alone() -> None:
    loaded = _fresh("from agenteval_otel import tool\nimport sys\nprint(' '.join(sorted(sys.modules)))").split()
    heavy = ("agenteval_otel.tracing.configure", "agenteval_otel.tracing.destinations",
             "agenteval_otel.tracing.file_export", "agenteval_otel.tracing.log_file_export",
             "agenteval_otel.tracing.instrumentors", "opentelemetry.sdk._logs", "importlib.metadata", "urllib.request")
    assert "agenteval_otel.tracing.lifecycle" in loaded
    assert not [m for m in loaded if m.startswith(heavy)], loaded
    # a module named like the function it defines: importing the module first keeps the function
    assert _fresh("import agenteval_otel.tracing.configure\nfrom agenteval_otel.tracing import configure\n"
                  "print(configure.__module__, configure.__name__)") == "agenteval_otel.tracing.configure configure"


def test_trajectory_imports_without_the_root_importing_evaluation_first() -> None:
    loaded = _fresh("import agenteval_otel.trajectory\n" + LOADED).split()
    assert "agenteval_otel.trajectory.assemble" in loaded
    assert not [m for m in loaded if m.startswith(("agenteval_otel.evaluation", "agenteval_otel.tracing"))]


def test_evaluation_loads_no_report_renderer_scorer_or_client_until_used() -> None:
    loaded = _fresh("import agenteval_otel\nagenteval_otel.evaluate\nagenteval_otel.EvalConfig.default()\n"
                    + LOADED).split()
    assert "agenteval_otel.evaluation._live" in loaded
    assert not [m for m in loaded if m.split(".")[0] in ("rich", "rouge_score", "nltk", "openai", "jinja2")], loaded


def test_the_root_exports_a_small_surface() -> None:
    import agenteval_otel

    assert len(agenteval_otel.__all__) <= 25
    for name in agenteval_otel.__all__:
        assert getattr(agenteval_otel, name) is not None
    with pytest.raises(AttributeError, match="subpackages"):
        agenteval_otel.NoSuchThing  # noqa: B018
