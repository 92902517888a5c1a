"""Offline policies at archive scale: ``agenteval eval`` with no eval set, against the converter alone.

    python bench/offline.py [--traces 5000] [--rounds 5]

Writes the ``producers`` workload of ``bench/convert.py`` (the recorded runs of third-party
producers replicated under fresh ids, ~2.5 KB a span) as one OTLP/JSON-lines file of
``--traces`` traces, then times two whole processes in interleaved rounds (CPU time, user +
system, of each child; medians, min and max):

- **convert**: a fresh interpreter reading the file with ``read_spans`` → ``iter_trajectories``
  (``agenteval trajectory``'s pipeline without its output): the converter alone;
- **eval**: ``agenteval eval --traces FILE --config examples/production_policies.json`` (six
  reference-free policies scoring every invocation), with its run file, run history and
  console report, in a scratch folder.

The ratio eval / convert is taken round by round and printed beside its target (≤ 1.3×), with
the bytes the eval prints on the console (≤ 100 KB). The exit status is 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from convert import write_producers  # noqa: E402  (the producers workload)

REPO = Path(__file__).resolve().parent.parent
TARGET_RATIO = 1.3
TARGET_CONSOLE_BYTES = 100_000
CONVERT = ("import sys\nfrom agenteval_otel.traces import read_spans\nfrom agenteval_otel.trajectory import "
           "iter_trajectories\nprint(sum(1 for _ in iter_trajectories(read_spans(sys.argv[1]))))")


def cpu_of(command: Sequence[str], cwd: Path) -> tuple[float, int]:
    """CPU seconds (user + system) of ``command`` run as a child process, and the bytes it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(list(command), cwd=cwd, capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # eval exits 1 when some invocation failed a policy
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    seconds = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return seconds, len(done.stdout) + len(done.stderr)


def _agenteval() -> list[str]:
    script = Path(sys.executable).with_name("agenteval")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agenteval_otel.cli"]


def _span(values: Sequence[float], unit: str = "s") -> str:
    return f"{statistics.median(values):.2f}{unit} ({min(values):.2f}–{max(values):.2f})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=5000, help="traces in the file (5000)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds after one warm-up round (5)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="agenteval-bench-") as folder:
        work = Path(folder)
        traces = work / "producers.jsonl"
        used = write_producers(traces, args.traces)
        megabytes = traces.stat().st_size / 1e6
        commands = {
            "convert": [sys.executable, "-c", CONVERT, str(traces)],
            "eval": [*_agenteval(), "eval", "--traces", str(traces),
                     "--config", str(REPO / "examples" / "production_policies.json")],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        printed = 0
        for round_number in range(args.rounds + 1):
            for name, command in commands.items():
                seconds, size = cpu_of(command, work)
                if round_number:
                    times[name].append(seconds)
                if name == "eval":
                    printed = size
    ratios = [e / c for e, c in zip(times["eval"], times["convert"])]
    ratio = statistics.median(ratios)
    ok_ratio, ok_console = ratio <= TARGET_RATIO, printed <= TARGET_CONSOLE_BYTES
    print(f"{args.traces:,} traces ({used} recorded runs replicated), {megabytes:.0f} MB; "
          f"CPU time of whole processes, median (min–max) of {args.rounds} interleaved rounds")
    print(f"{'convert (read_spans → iter_trajectories)':<44}{_span(times['convert'])}")
    print(f"{'agenteval eval, production policies':<44}{_span(times['eval'])}")
    print(f"{'eval / convert':<44}{_span(ratios, '×'):<28}target ≤ {TARGET_RATIO}×  {'met' if ok_ratio else 'MISSED'}")
    print(f"{'console output of eval':<44}{printed / 1000:.1f} KB{'':<20}target ≤ {TARGET_CONSOLE_BYTES // 1000} KB  "
          f"{'met' if ok_console else 'MISSED'}")
    return 0 if ok_ratio and ok_console else 1


if __name__ == "__main__":
    sys.exit(main())
