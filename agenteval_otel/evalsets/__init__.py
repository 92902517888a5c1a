"""Eval sets: what an agent is asked and what it is expected to do.

``EvalSet`` ⊃ ``EvalCase`` ⊃ ``Invocation`` (one conversation turn) ⊃ ``MessageContent`` and
``ToolCall``; ``SessionInput`` and ``ConversationScenario`` for conversations a simulated user
drives; ``EvalSetBuilder`` to write them in code. Google ADK's eval-set files (every form in
the wild) load into the same models.

>>> from agenteval_otel.evalsets import EvalSetBuilder
>>> len(EvalSetBuilder.quick(("Hi", "Hello!"), ("Bye", "Goodbye!")).eval_cases)
2
"""

from agenteval_otel.evalsets._adk import ADK_SOURCE_FORMAT, eval_set_data, is_adk_eval_set
from agenteval_otel.evalsets._builder import EvalSetBuilder
from agenteval_otel.evalsets._models import (
    ConversationScenario,
    EvalCase,
    EvalSet,
    Invocation,
    MessageContent,
    SessionInput,
    ToolCall,
)

__all__ = [
    # the models
    "ConversationScenario",
    "EvalCase",
    "EvalSet",
    "Invocation",
    "MessageContent",
    "SessionInput",
    "ToolCall",
    # writing them in code
    "EvalSetBuilder",
    # Google ADK's file format
    "ADK_SOURCE_FORMAT",
    "eval_set_data",
    "is_adk_eval_set",
]
