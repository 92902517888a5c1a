"""The agent a simulation runs: an :class:`AgentRunner`, named by ``module:attr`` or by a YAML spec.

A YAML spec names the module, the class (or any attribute) in it, and the requirements file
of the agent's dependencies; paths are relative to the YAML file's folder::

    module: rental_property_agent
    className: RentalPropertyAssistant
    requirementsPath: requirements.txt

A class is instantiated without arguments; anything else is used as it is. The requirements are
checked against the installed distributions and reported (missing, or installed at a version
the file does not allow); nothing is ever installed.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from agenteval_otel.errors import ConfigError
from agenteval_otel.evaluation import load_agent
from agenteval_otel.loading import import_file, read_yaml, validation_message

__all__ = ["AgentRunner", "AgentSpec", "AsyncAgentRunner", "RequirementsReport", "check_requirements",
           "load_runner"]

_log = logging.getLogger(__name__)
_INSTALL_HINT = "pip install 'agenteval-otel[experiments]'"


@runtime_checkable
class AgentRunner(Protocol):
    """An agent run one query at a time: ``run`` takes the query's text and returns the reply
    (a string, a message, or a dict with ``response``/``output``/``content``/``text``/``answer``).
    It may also take ``thread_id``, ``history``, ``state``, ``config`` by name, as in
    :mod:`agenteval_otel.evaluation._agents`; a plain function or coroutine function works too."""

    def run(self, query: str) -> Any:
        """The reply to ``query``."""
        ...


@runtime_checkable
class AsyncAgentRunner(Protocol):
    """An :class:`AgentRunner` whose ``arun`` is a coroutine function (preferred over ``run``)."""

    async def arun(self, query: str) -> Any:
        """The reply to ``query``."""
        ...


@dataclass
class RequirementsReport:
    """How the installed distributions meet a requirements file."""

    path: Path
    missing: list[str] = field(default_factory=list)
    """The requirements of distributions that are not installed."""
    wrong_version: list[str] = field(default_factory=list)
    """``"name>=2 (installed 1.0)"`` for each distribution installed at a version not allowed."""
    unchecked: list[str] = field(default_factory=list)
    """Lines that name no checkable distribution (``-r``, ``-e``, URLs)."""

    @property
    def ok(self) -> bool:
        """Whether every checkable requirement is met."""
        return not self.missing and not self.wrong_version

    def describe(self) -> str:
        """One line: what is missing and what is installed at the wrong version."""
        parts = []
        if self.missing:
            parts.append("not installed: " + ", ".join(self.missing))
        if self.wrong_version:
            parts.append("installed at another version: " + ", ".join(self.wrong_version))
        if self.unchecked:
            parts.append("not checked: " + ", ".join(self.unchecked))
        return f"{self.path}: " + ("; ".join(parts) if parts else "every requirement is met")


def check_requirements(path: str | Path) -> RequirementsReport:
    """Compare the requirements file ``path`` with the installed distributions (environment
    markers are honoured; pre-releases count). A missing file or a line that is not a
    requirement raises :class:`ConfigError` naming the file and the line."""
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:
        raise ConfigError(f"checking {path} needs the 'packaging' package: {_INSTALL_HINT}") from None
    file = Path(path)
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ConfigError(f"{file}: no such requirements file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot be read ({exc})") from None
    report = RequirementsReport(file)
    for number, raw in enumerate(lines, start=1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-") or "://" in line:
            report.unchecked.append(line)
            continue
        try:
            requirement = Requirement(line)
        except InvalidRequirement as exc:
            raise ConfigError(f"{file}: line {number}: expected a requirement such as 'name>=1.0' ({exc})") from None
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        try:
            installed = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            report.missing.append(line)
            continue
        if requirement.specifier and not requirement.specifier.contains(installed, prereleases=True):
            report.wrong_version.append(f"{line} (installed {installed})")
    return report


class AgentSpec(BaseModel):
    """An agent's YAML spec (see the module docstring); ``folder`` is where its paths start."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    module: str
    class_name: str = Field(validation_alias=AliasChoices("className", "class_name"))
    requirements_path: str | None = Field(
        default=None, validation_alias=AliasChoices("requirementsPath", "requirements_path"))
    folder: Path = Field(default=Path("."), exclude=True)

    @classmethod
    def load(cls, path: str | Path) -> AgentSpec:
        """The spec in the YAML file ``path``; bad YAML or fields raise :class:`ConfigError`."""
        file = Path(path)
        data = read_yaml(file, ConfigError, hint=f" or {_INSTALL_HINT}")
        if not isinstance(data, dict):
            raise ConfigError(f"{file}: expected a mapping with module, className and requirementsPath")
        try:
            return cls.model_validate({**data, "folder": file.resolve().parent})
        except ValidationError as exc:
            raise ConfigError(validation_message(file, exc)) from None

    def requirements(self) -> RequirementsReport | None:
        """The check of ``requirementsPath`` (``None`` when the spec names none)."""
        if self.requirements_path is None:
            return None
        return check_requirements(self.folder / self.requirements_path)

    def build(self) -> Any:
        """The agent: ``className`` of ``module``, instantiated without arguments if a class.

        ``module`` is a file (``agent.py``, ``agents/agent.py``), a dotted module found in the
        spec's folder (``rental_property_agent``, ``agents.rental``), or an installed module."""
        label = f"agent spec {self.folder}: module {self.module!r}"
        module = self._import(label)
        try:
            target = getattr(module, self.class_name)
        except AttributeError:
            raise ConfigError(f"{label} has no attribute {self.class_name!r} (className)") from None
        if not inspect.isclass(target):
            return target
        try:
            return target()
        except Exception as exc:
            raise ConfigError(f"{label}: {self.class_name}() failed ({type(exc).__name__}: {exc}); "
                              "expected a class that takes no arguments") from None

    def _import(self, label: str) -> Any:
        folder = str(self.folder)
        try:
            if self.module.endswith(".py") or "/" in self.module:
                if folder not in sys.path:
                    sys.path.append(folder)  # the file's modules import their siblings as in the repository
                return import_file(self.folder / self.module, "agenteval_agent_")
            as_path = self.folder / self.module.replace(".", "/")
            if as_path.with_suffix(".py").is_file() or (as_path / "__init__.py").is_file():
                sys.path.insert(0, folder)  # the spec's folder first, for this import only
                try:
                    return importlib.import_module(self.module)
                finally:
                    sys.path.remove(folder)
                    sys.path.append(folder)  # its modules may import their siblings later
            return importlib.import_module(self.module)
        except Exception as exc:
            raise ConfigError(f"{label}: cannot import it ({type(exc).__name__}: {exc})") from None


def load_runner(spec: str, *, strict: bool = False) -> Any:
    """The agent named by ``spec``: a YAML spec file (``.yaml``/``.yml``), ``module:attr`` or
    ``path/to/file.py:attr``. A YAML spec's requirements are checked: unmet ones are logged as
    a warning, or raise :class:`ConfigError` with ``strict``."""
    if spec.endswith((".yaml", ".yml")):
        agent_spec = AgentSpec.load(spec)
        report = agent_spec.requirements()
        if report is not None and not report.ok:
            if strict:
                raise ConfigError(f"{spec}: the agent's requirements are not met: {report.describe()}")
            _log.warning("%s: the agent's requirements are not met: %s", spec, report.describe())
        return agent_spec.build()
    return load_agent(spec)
