"""Query sets, agents run over them (simulations), and the experiments that grade them."""

from agenteval_otel.experiments.simulation import SimulationRecord

__all__ = ["SimulationRecord"]
