"""The README's benchmark tables, rendered from the figures the benches record.

    python bench/tables.py convert startup                  # run those benches, print their tables
    python bench/tables.py --write README.md convert        # ... and rewrite their regions in README.md
    python bench/tables.py --records DIR --no-run convert   # render from records kept by an earlier run
    python bench/tables.py --check README.md                # the regions are well-formed (runs nothing)

Each table sits in README.md between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``, NAME
one of the tables below (every table at most once, regions not nested, each holding one Markdown
table whose header is the one its renderer prints). A bench is run with its default arguments (the
README's workloads), once per run its table needs (``decorators`` twice: as it is, and with the
OpenInference keys and no peers), each run writing its figures to ``DIR/NAME[-K].json``
(``--records``, a temporary folder by default) through ``AGENTEVAL_BENCH_RECORD``. A bench that
misses a target still gives its table: the README shows what was measured. The benches run under
this interpreter: for the peers' columns of ``decorators``, the one with the ``bench`` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _targets import RECORD_ENV, Figure

BENCH = Path(__file__).resolve().parent

Record = dict[str, Any]
"""One run's figures and notes, as ``Targets.finish`` writes them."""


def figures(record: Record) -> dict[str, Figure]:
    """A record's figures by name."""
    return {name: Figure(**fields) for name, fields in record["figures"].items()}


# --- the tables, in the README's format ------------------------------------------------------------


def _decorators(records: list[Record]) -> list[str]:
    plain, with_openinference = figures(records[0]), figures(records[1])
    rows = []
    for name, ours in plain.items():
        if not name.endswith(", agenteval-otel: × raw OTel"):
            continue
        shape, content = name.removesuffix(", agenteval-otel: × raw OTel").split(", content ")
        peers = [plain.get(f"{shape}, content {content}, {peer}: × raw OTel")
                 for peer in ("traceloop-sdk", "openinference", "langfuse")]
        keys = with_openinference[name]
        rows.append(f"| {shape} | {content} | {ours.value:.2f}× | {keys.value:.2f}× | {ours.target} | "
                    + " | ".join("skipped" if peer is None else f"{peer.value:.2f}×" for peer in peers) + " |")
    return rows


def _instrument_openai(records: list[Record]) -> list[str]:
    found, notes = figures(records[0]), records[0]["notes"]

    def ratio(variant: str) -> str:
        return f"{found[variant + ': × bare'].value:.2f}×"

    bare = found["bare openai: µs/call"].value / 1000
    rows = [f"| bare `openai` {notes['openai']} | 1.000× ({bare:.1f} ms) | |",
            f"| agenteval-instrumentation-openai | {ratio('agenteval, content off')} | "
            f"{ratio('agenteval, content on')} |"]
    if "contrib" in notes:
        rows.append(f"| contrib `opentelemetry-instrumentation-openai-v2` {notes['contrib']} | "
                    f"{ratio('contrib openai-v2, content off')} | {ratio('contrib openai-v2, content on')} |")
    return rows


_PHASES = {"parse": "parse only", "convert": "convert (read + assemble)",
           "evaluate": "evaluate (trajectory + response)"}


def _evaluate(records: list[Record]) -> list[str]:
    found = figures(records[0])
    sizes = sorted({int(name.split()[0]) for name in found if name.endswith(" traces, parse: CPU")})
    rows = []
    for n in sizes:
        for phase, label in _PHASES.items():
            at = f"{n} traces, {phase}"
            rows.append(f"| {n:,} | {label} | {found[at + ': CPU'].value:.1f} | {found[at + ': traces/s'].value:,.0f} | "
                        f"{found[at + ': peak memory'].value:.0f} MiB | {found[at + ': × parse'].value:.2f} |")
    return rows


def _convert(records: list[Record]) -> list[str]:
    found, notes = figures(records[0]), records[0]["notes"]
    rows = []
    for workload in ("ours", "producers"):
        spans, floor, skeleton, read, convert, held = (found[f"{workload}: {what}"] for what in (
            "spans", "floor", "skeleton × floor", "read × floor", "convert × floor", "held per span beyond its bytes"))
        size = f"{spans.value:,.0f} spans" + (f", {notes[workload]}" if workload in notes else "")
        rows.append(f"| {workload} ({size}) | {floor.value:.1f} µs/span | {skeleton.value:.2f}× | {read.value:.2f}× | "
                    f"{convert.value:.2f}× | {convert.target} | {held.value:.0f} B | {held.target} |")
    return rows


def _startup(records: list[Record]) -> list[str]:
    found = figures(records[0])
    floor = found["python -c pass (floor): wall"].value
    rows = []
    for name, wall in found.items():
        if name.endswith(": wall"):
            command = name.removesuffix(": wall")
            modules = found[f"{command}: modules"].value
            rows.append(f"| `{command.removesuffix(' (floor)')}` | {wall.value:.2f} s | {wall.value / floor:.1f}× | "
                        f"{modules:.0f} | {wall.target} |")
    return rows


@dataclass(frozen=True)
class Table:
    """How a bench's README table is made: the runs it needs and its rows from their records."""

    header: tuple[str, str]
    rows: Callable[[list[Record]], list[str]]
    runs: tuple[tuple[tuple[str, ...], Mapping[str, str]], ...] = (((), {}),)
    """Each run's arguments and extra environment."""
    extra_paths: tuple[str, ...] = ()
    """Source folders the bench imports from (beside this checkout)."""

    def render(self, records: list[Record]) -> str:
        return "\n".join([*self.header, *self.rows(records)])


TABLES: dict[str, Table] = {
    "decorators": Table(
        ("| shape | content | agenteval-otel | with OpenInference keys | target | traceloop-sdk | openinference "
         "| langfuse |", "|---|---|---:|---:|---:|---:|---:|---:|"),
        _decorators,
        runs=(((), {}), (("--no-peers",), {"AGENTEVAL_CONVENTIONS": "gen_ai,openinference"}))),
    "instrument_openai": Table(
        ("| variant | content off | content on |", "|---|---:|---:|"), _instrument_openai,
        extra_paths=("instrumentation/agenteval-instrumentation-openai/src",)),
    "evaluate": Table(
        ("| traces | phase | CPU s | traces/s | peak memory | × parse |", "|---:|---|---:|---:|---:|---:|"), _evaluate),
    "convert": Table(
        ("| workload | floor | skeleton | read | convert | target | held per span beyond its bytes | target |",
         "|---|---:|---:|---:|---:|---:|---:|---:|"), _convert),
    "startup": Table(
        ("| command | median wall time | × `python -c pass` | the package's modules | target |",
         "|---|---:|---:|---:|---:|"), _startup),
}


# --- the README's regions ----------------------------------------------------------------------------

_MARKER = re.compile(r"^<!-- (/?)bench:([\w-]+) -->$", re.MULTILINE)


def regions(text: str, where: str = "README.md") -> dict[str, tuple[int, int]]:
    """Each table's region in ``text``: name -> (start, end) of what lies between its two markers.

    Raises ``ValueError`` naming the line of the first marker out of place, an unknown table, a
    table twice, or a region that does not hold exactly its table.
    """
    found: dict[str, tuple[int, int]] = {}
    opened: tuple[str, int] | None = None
    for marker in _MARKER.finditer(text):
        closing, name = marker.group(1) == "/", marker.group(2)
        line = text.count("\n", 0, marker.start()) + 1
        if name not in TABLES:
            raise ValueError(f"{where}:{line}: unknown table {name!r}; expected one of {', '.join(TABLES)}")
        if not closing and opened is not None:
            raise ValueError(f"{where}:{line}: bench:{name} opens inside bench:{opened[0]}, which is not closed")
        if closing and (opened is None or opened[0] != name):
            raise ValueError(f"{where}:{line}: /bench:{name} closes no open bench:{name}")
        if not closing:
            if name in found:
                raise ValueError(f"{where}:{line}: bench:{name} appears twice")
            opened = (name, marker.end())
            continue
        assert opened is not None
        found[name] = (opened[1], marker.start())
        lines = [row for row in text[opened[1]:marker.start()].splitlines() if row.strip()]
        header = TABLES[name].header
        if len(lines) < 3 or tuple(lines[:2]) != header or not all(row.startswith("|") for row in lines):
            raise ValueError(f"{where}:{line}: bench:{name} must hold one table with the header {header[0]!r} "
                             "and at least one row")
        opened = None
    if opened is not None:
        raise ValueError(f"{where}: bench:{opened[0]} is never closed (<!-- /bench:{opened[0]} -->)")
    return found


def rewrite(text: str, tables: Mapping[str, str], where: str = "README.md") -> str:
    """``text`` with the regions of ``tables`` holding those tables."""
    spans = regions(text, where)
    missing = [name for name in tables if name not in spans]
    if missing:
        raise ValueError(f"{where} has no region for {', '.join(missing)} (<!-- bench:{missing[0]} --> ... "
                         f"<!-- /bench:{missing[0]} -->)")
    for name, (start, end) in sorted(((n, spans[n]) for n in tables), key=lambda item: -item[1][0]):
        text = text[:start] + "\n\n" + tables[name] + "\n\n" + text[end:]
    return text


# --- running the benches -----------------------------------------------------------------------------


def records_of(name: str, folder: Path, run: bool) -> list[Record]:
    """The records of every run of bench ``name``: made now when ``run``, else read from ``folder``."""
    table, records = TABLES[name], []
    for number, (arguments, environment) in enumerate(table.runs):
        path = folder / (f"{name}.json" if number == 0 else f"{name}-{number}.json")
        if run:
            paths = [str(BENCH.parent / extra) for extra in table.extra_paths]
            env = {**os.environ, **environment, RECORD_ENV: str(path),
                   "PYTHONPATH": os.pathsep.join([str(BENCH.parent), *paths, os.environ.get("PYTHONPATH", "")])}
            print(f"running bench/{name}.py {' '.join(arguments)}".rstrip(), file=sys.stderr, flush=True)
            subprocess.run([sys.executable, str(BENCH / f"{name}.py"), *arguments], env=env, cwd=BENCH.parent,
                           check=False, stdout=sys.stderr)
        if not path.is_file():
            raise SystemExit(f"bench/{name}.py left no record at {path}")
        records.append(json.loads(path.read_text(encoding="utf-8")))
    return records


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benches", nargs="*", metavar="BENCH", help=f"tables to make: {', '.join(TABLES)}")
    parser.add_argument("--write", type=Path, metavar="README", help="rewrite those tables' regions in this file")
    parser.add_argument("--check", type=Path, metavar="README", help="check the regions of this file and stop")
    parser.add_argument("--records", type=Path, metavar="DIR", help="keep the records here (default: a temp folder)")
    parser.add_argument("--no-run", action="store_true", help="render from the records in --records, run nothing")
    args = parser.parse_args(argv)
    unknown = [name for name in args.benches if name not in TABLES]
    if unknown:
        parser.error(f"unknown table {unknown[0]!r}; expected one of {', '.join(TABLES)}")
    if args.no_run and args.records is None:
        parser.error("--no-run needs --records DIR")
    if args.check is not None:
        try:
            print(f"{args.check}: {', '.join(regions(args.check.read_text(encoding='utf-8'), str(args.check)))}")
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
        return 0
    with tempfile.TemporaryDirectory(prefix="agenteval-tables-") as temporary:
        folder = args.records or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        tables = {name: TABLES[name].render(records_of(name, folder, not args.no_run)) for name in args.benches}
    for name, table in tables.items():
        print(f"<!-- bench:{name} -->\n\n{table}\n\n<!-- /bench:{name} -->")
    if args.write is not None:
        try:
            args.write.write_text(rewrite(args.write.read_text(encoding="utf-8"), tables, str(args.write)),
                                  encoding="utf-8")
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
