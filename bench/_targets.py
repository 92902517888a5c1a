"""Every bench's figures beside their targets, its exit status, and its record for the README.

    targets = Targets("convert")
    ratio = targets.figure("ours: convert × floor", 2.4, unit="×", at_most=3.0)
    print(f"convert {ratio}")            # "convert 2.40× (target ≤ 3×: met)"
    targets.figure("ours: spans", 52_000, digits=0)   # reported, no target
    sys.exit(targets.finish())           # the recap of the targets; 1 when one is missed

A figure is a value with at most one target (``at_most`` or ``at_least``); ``str(figure)`` is the
value beside its target and verdict, ``figure.cell`` the value alone and ``figure.verdict`` the
target and verdict, for tables. ``finish()`` prints every target with its verdict and, when the
environment names a file in ``AGENTEVAL_BENCH_RECORD``, writes every figure and note there as
JSON: ``bench/tables.py`` renders the README's tables from those records.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

RECORD_ENV = "AGENTEVAL_BENCH_RECORD"
"""Names the JSON file ``Targets.finish`` writes the bench's figures and notes to."""


@dataclass(frozen=True)
class Figure:
    """One measured value, its unit (``"×"``, ``" s"``, ``" KB"``, ...) and its target, if any."""

    name: str
    value: float
    unit: str = ""
    digits: int = 2
    at_most: float | None = None
    at_least: float | None = None

    @property
    def met(self) -> bool:
        """Whether the value meets its target (a figure with no target always does)."""
        return ((self.at_most is None or self.value <= self.at_most)
                and (self.at_least is None or self.value >= self.at_least))

    @property
    def target(self) -> str:
        """``≤ 3×``, ``≥ 1.6×``, or empty when there is none."""
        if self.at_most is not None:
            return f"≤ {self.at_most:g}{self.unit}"
        return "" if self.at_least is None else f"≥ {self.at_least:g}{self.unit}"

    @property
    def cell(self) -> str:
        """The value in its unit."""
        return f"{self.value:,.{self.digits}f}{self.unit}"

    @property
    def verdict(self) -> str:
        """``≤ 3×: met`` or ``≤ 3×: MISSED``; ``reported`` when there is no target."""
        return f"{self.target}: {'met' if self.met else 'MISSED'}" if self.target else "reported"

    def __str__(self) -> str:
        return f"{self.cell} (target {self.verdict})" if self.target else self.cell


class Targets:
    """The figures of one bench run, in the order they were measured."""

    def __init__(self, bench: str) -> None:
        self.bench = bench
        self.figures: dict[str, Figure] = {}
        self.notes: dict[str, str] = {}

    def figure(self, name: str, value: float, *, unit: str = "", digits: int = 2, at_most: float | None = None,
               at_least: float | None = None) -> Figure:
        """Record ``value`` under ``name`` (unique in the bench) with its target; returns the figure."""
        if name in self.figures:
            raise ValueError(f"figure {name!r} recorded twice in bench {self.bench!r}")
        self.figures[name] = found = Figure(name, float(value), unit, digits, at_most, at_least)
        return found

    def note(self, name: str, text: str) -> None:
        """Record a fact about the run that its tables name (a version, a workload's size)."""
        self.notes[name] = text

    @property
    def missed(self) -> list[Figure]:
        """The figures whose target was missed."""
        return [f for f in self.figures.values() if not f.met]

    def finish(self) -> int:
        """Print every target with its verdict; write the record if asked; the exit status (1: a miss)."""
        targeted = [f for f in self.figures.values() if f.target]
        print()
        print(f"{self.bench}: {len(targeted)} targets" if targeted else f"{self.bench}: figures reported, no target")
        for figure in targeted:
            print(f"  {figure.name}: {figure}")
        missed = self.missed
        if missed:
            print(f"targets MISSED: {'; '.join(f.name for f in missed)}")
        elif targeted:
            print("every target met")
        record = os.environ.get(RECORD_ENV)
        if record:
            Path(record).write_text(json.dumps({
                "bench": self.bench,
                "figures": {name: asdict(f) for name, f in self.figures.items()},
                "notes": self.notes,
            }, ensure_ascii=False, indent=1))
        return 1 if missed else 0
