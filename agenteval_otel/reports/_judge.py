"""What the LLM judge did in a run, in words every report uses: its cost per criterion (calls,
samples from the cache, tokens, time) and, plainly, how many results it did not score and why.

>>> from agenteval_otel.results._results import EvalReport
>>> judge_lines(EvalReport.from_results("s", []))
[]
"""

from __future__ import annotations

from agenteval_otel.results import EvalReport, JudgeUsage

__all__ = ["judge_lines", "usage_text"]


def usage_text(usage: JudgeUsage) -> str:
    """``4 calls, 2 from cache, 1 retry, 480 in / 60 out tokens, 1.2 s``."""
    parts = [f"{usage.calls} call(s)", f"{usage.cache_hits} from cache"]
    if usage.retries:
        parts.append(f"{usage.retries} retried")
    if usage.failures:
        parts.append(f"{usage.failures} failed")
    parts += [f"{usage.input_tokens} in / {usage.output_tokens} out tokens", f"{usage.seconds:.1f} s"]
    return ", ".join(parts)


def judge_lines(report: EvalReport) -> list[str]:
    """One line per judged criterion with its cost, a total, and a line saying how many results
    the judge did not score (with the first reason); empty when no judge was involved."""
    summary = report.summary
    lines = [f"LLM judge · {name}: {usage_text(usage)}" for name, usage in summary.judge_usage.items()]
    total = summary.judge_total
    if total is not None and len(summary.judge_usage) > 1:
        lines.append(f"LLM judge · total: {usage_text(total)}")
    if summary.judge_errors:
        first = next((r.error for case in report.results for r in case.criterion_results if r.judge_error), "")
        lines.append(f"LLM judge did not score {summary.judge_errors} result(s); those cases are errored, "
                     f"not scored: {first}")
    return lines
