"""Start-up: what a user waits for before any work, in fresh interpreters.

    python bench/startup.py [--runs 15]

Times, as whole processes, ``agenteval --help`` (the console script installed beside this
interpreter, else ``python -m agenteval_otel.cli --help``), an app importing a decorator
(``python -c "from agenteval_otel import tool"``) and a bare interpreter (``python -c pass``, the
floor), interleaved in a shuffled order, ``--runs`` rounds after a warm-up round. Each figure is
the median wall time, printed beside its target (``--help`` at most 0.5 s, the decorator import at
most 0.35 s) and beside the floor, with the number of the package's modules each loads. The exit
status is 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from _targets import Targets

REPO = Path(__file__).resolve().parent.parent
_SCRIPT = Path(sys.executable).with_name("agenteval")
CASES: dict[str, tuple[list[str], str, float | None]] = {
    # name: (the command, the same work as Python code (to count the modules it loads), target s)
    "agenteval --help": (
        [str(_SCRIPT), "--help"] if _SCRIPT.exists() else [sys.executable, "-m", "agenteval_otel.cli", "--help"],
        "import sys; sys.argv = ['agenteval', '--help']; from agenteval_otel.cli import main; main()", 0.5),
    "from agenteval_otel import tool": (
        [sys.executable, "-c", "from agenteval_otel import tool"], "from agenteval_otel import tool", 0.35),
    "python -c pass (floor)": ([sys.executable, "-c", "pass"], "pass", None),
}


def timed(command: list[str]) -> float:
    """Wall seconds of ``command``, a whole process."""
    started = time.perf_counter()
    subprocess.run(command, cwd=REPO, capture_output=True, check=True)
    return time.perf_counter() - started


def modules_loaded(code: str) -> int:
    """How many of the package's modules a fresh interpreter running ``code`` has loaded."""
    count = "import sys; print(sum(m.startswith('agenteval_otel') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", f"{code}\n{count}"], cwd=REPO, capture_output=True, text=True,
                          check=True)
    return int(done.stdout.split()[-1])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed rounds (15)")
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {name: [] for name in CASES}
    names = list(CASES)
    for round_number in range(args.runs + 1):
        random.shuffle(names)
        for name in names:
            seconds = timed(CASES[name][0])
            if round_number:  # the first round warms the file cache
                times[name].append(seconds)
    targets = Targets("startup")
    floor = statistics.median(times["python -c pass (floor)"])
    print(f"{'':<34}{'median':>9}{'× floor':>9}{'modules':>9}  target")
    for name, (_, code, target) in CASES.items():
        median = targets.figure(f"{name}: wall", statistics.median(times[name]), unit=" s", digits=3,
                                at_most=target)
        modules = targets.figure(f"{name}: modules", modules_loaded(code), digits=0)
        print(f"{name:<34}{median.value:>8.3f}s{median.value / floor:>8.1f}×{modules.cell:>9}  "
              f"{median.verdict if median.target else ''}")
    print(f"wall time, median of {args.runs} interleaved rounds; modules: the package's modules loaded")
    return targets.finish()

if __name__ == "__main__":
    sys.exit(main())
