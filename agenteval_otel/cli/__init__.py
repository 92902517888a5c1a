"""The ``agenteval`` command: one module per command family, each parsing its arguments, calling
the library and rendering through :mod:`agenteval_otel.reports`.

=================  =====================================  ==================================
command            what it does                           the library call
=================  =====================================  ==================================
``show``           the cases of an eval set               ``EvalSet.load``
``trajectory``     the trajectories in trace files        ``traces.read_trajectories``
``run``            run an agent over an eval set, score   ``evaluation.LiveRunner`` (``evaluate``)
``eval``           score recorded traces                  ``evaluation.aevaluate_traces``
``serve``          score live traces behind a Collector   ``evaluation.EvaluationWorker``
``simulate``       run an agent over a query set          ``experiments.asimulate``
``experiment``     grade a simulation run; compare two    ``experiments.arun_experiment``,
                                                          ``experiments.compare``
=================  =====================================  ==================================

Exit codes: 0 all passed; 1 some case failed or errored (``experiment compare``: some metric is
significantly lower in B); 2 bad input (one line naming the argument, file or path); 130
interrupted (Ctrl-C).
"""

from agenteval_otel.cli._main import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, main

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "main"]
