"""What the commands read from their arguments: the ``--criteria-module`` files, the eval set, the
criteria config and the ``--readers`` mappings."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agenteval_otel.errors import ConfigError

if TYPE_CHECKING:
    from agenteval_otel.criteria import EvalConfig
    from agenteval_otel.evalsets import EvalSet
    from agenteval_otel.trajectory.conventions import Reader

__all__ = ["add_readers_option", "convention_readers", "criteria_config", "load_criteria_modules", "load_eval_set"]


def load_criteria_modules(args: argparse.Namespace) -> None:
    """Import the ``--criteria-module`` modules or files, whose ``@criterion`` functions a config
    may name."""
    from agenteval_otel.criteria import load_criteria_module

    for module in args.criteria_module or ():
        load_criteria_module(module)


def load_eval_set(path: str | None) -> EvalSet | None:
    """The eval set at ``path``; ``None`` when none is named."""
    from agenteval_otel.evalsets import EvalSet

    return EvalSet.load(path) if path else None


def criteria_config(args: argparse.Namespace, eval_set: EvalSet | None) -> EvalConfig:
    """The ``--config`` named (after :func:`load_criteria_modules`), else the default criteria of
    ``eval_set`` (Google ADK's for an ADK file); with neither, a ``ConfigError``."""
    from agenteval_otel.criteria import EvalConfig

    load_criteria_modules(args)
    if args.config:
        return EvalConfig.load(args.config)
    if eval_set is None:
        raise ConfigError("without an eval set, give the criteria to score every invocation with: "
                          "--config FILE (policies such as max_tool_calls, forbidden_tools, no_tool_errors; "
                          "see examples/production_policies.json)")
    return EvalConfig.default_for(eval_set)


def add_readers_option(parser: argparse.ArgumentParser) -> None:
    """``--readers FILE`` (repeatable): declarative readers, tried before the built-in ones."""
    parser.add_argument("--readers", action="append", metavar="FILE",
                        help="a JSON or YAML mapping from a producer's span keys to steps (repeatable), "
                             "tried before the built-in readers; see examples/readers/")


def convention_readers(args: argparse.Namespace) -> Sequence[Reader] | None:
    """The ``--readers`` mappings' readers, then the default ones; ``None`` (the default) when
    none is given."""
    if not args.readers:
        return None
    from agenteval_otel.trajectory.conventions import default_readers, load_readers

    return (*load_readers(*args.readers), *default_readers())
