"""Trajectories: the ordered steps of an agent run, read from spans of any producer."""

from agenteval_otel.trajectory.steps import StepType, TrajectoryStep

__all__ = ["StepType", "TrajectoryStep"]
