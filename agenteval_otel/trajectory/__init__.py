"""Trajectories: the ordered steps of an agent run, read from spans of any producer.

``SpanRecord`` is the source-neutral view of a span; the convention readers say what each span
is; ``TraceBuffer`` groups spans into whole traces; trace assembly builds ``Trajectory`` objects;
``TrajectoryProcessor`` does it live inside an OpenTelemetry SDK pipeline.
"""

from agenteval_otel.trajectory.assemble import (
    build_trajectories,
    iter_trajectories,
    join_conversations,
    trajectories_from_trace,
    tree_order,
)
from agenteval_otel.trajectory.buffer import BufferedTrace, TraceBuffer
from agenteval_otel.trajectory.processor import TrajectoryCallback, TrajectoryProcessor
from agenteval_otel.trajectory.spans import SpanEvent, SpanLink, SpanRecord, SpanStatus
from agenteval_otel.trajectory.steps import StepType, TrajectoryStep
from agenteval_otel.trajectory.trajectory import Trajectory
from agenteval_otel.trajectory.usage import TokenUsage

__all__ = [
    "BufferedTrace",
    "SpanEvent",
    "SpanLink",
    "SpanRecord",
    "SpanStatus",
    "StepType",
    "TokenUsage",
    "TraceBuffer",
    "Trajectory",
    "TrajectoryCallback",
    "TrajectoryProcessor",
    "TrajectoryStep",
    "build_trajectories",
    "iter_trajectories",
    "join_conversations",
    "trajectories_from_trace",
    "tree_order",
]
