"""Case results held compactly: a long offline run keeps one small entry per case instead of
every case's models.

A result can be held as it is, or *slim* and compressed: its actual trajectory (the steps, with
their metadata) left out, everything else (criteria, evidence, turns, metrics, trace ids) kept,
as JSON compressed against the first result encoded (cases of one eval set look alike, so a
result costs a few hundred bytes). :class:`CaseResults` is the sequence a report holds; reading
an item decodes a compressed entry into a new ``EvalCaseResult`` each time, so change a result
before it is added, not after.

>>> from agenteval_otel.evaluation.results import EvalCaseResult
>>> from agenteval_otel.trajectory.steps import TrajectoryStep
>>> results = CaseResults()
>>> results.append(EvalCaseResult(eval_id="a", passed=True,
...                               actual_trajectory=[TrajectoryStep.tool("f", {})]), compact=True)
>>> [(r.eval_id, r.passed, r.actual_trajectory) for r in results]
[('a', True, [])]
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Union, overload

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

if TYPE_CHECKING:  # results.py holds these in its reports
    from agenteval_otel.evaluation.results import EvalCaseResult

__all__ = ["CaseResults", "ResultCodec", "slim"]

_WITHOUT_TRAJECTORIES: Any = {"actual_trajectory": True, "run_results": {"__all__": {"actual_trajectory"}}}
_LEVEL = 3
_MEMORY_LEVEL = 6


def slim(result: EvalCaseResult) -> EvalCaseResult:
    """``result`` without its actual trajectory (nor its runs' trajectories)."""
    if not result.actual_trajectory and not any(run.actual_trajectory for run in result.run_results):
        return result
    return result.model_copy(update={
        "actual_trajectory": [],
        "run_results": [run.model_copy(update={"actual_trajectory": []}) for run in result.run_results],
    })


class ResultCodec:
    """Encodes slim results as compressed JSON, against the first result it encodes.

    The compressor is primed with that dictionary once and copied for each result; its window
    is just large enough for the dictionary and a result like it (setting up a full 32 KB
    window and hashing the dictionary anew cost more than compressing a result).
    """

    def __init__(self) -> None:
        self._dictionary: bytes | None = None
        self._primed: Any = None

    def encode(self, result: EvalCaseResult) -> bytes:
        """``result`` slim, as compressed JSON."""
        text = result.model_dump_json(exclude=_WITHOUT_TRAJECTORIES).encode()
        if self._primed is None:
            self._dictionary = text
            window_bits = min(15, max(9, (2 * len(text)).bit_length()))
            self._primed = zlib.compressobj(_LEVEL, zlib.DEFLATED, window_bits, _MEMORY_LEVEL, zdict=text)
        packer = self._primed.copy()
        return packer.compress(text) + packer.flush()

    def decode(self, data: bytes) -> EvalCaseResult:
        """The slim result ``data`` holds."""
        from agenteval_otel.evaluation.results import EvalCaseResult

        unpacker = zlib.decompressobj(zdict=self._dictionary or b"")
        return EvalCaseResult.model_validate_json(unpacker.decompress(data) + unpacker.flush())


Entry = Union["EvalCaseResult", bytes]


class CaseResults(Sequence["EvalCaseResult"]):
    """Case results in order, each held as it is or slim and compressed (see the module)."""

    def __init__(self, results: Iterable[EvalCaseResult] = (), codec: ResultCodec | None = None) -> None:
        self.codec = codec or ResultCodec()
        self._ids: list[str] = []
        self._entries: list[Entry] = []
        for result in results:
            self.append(result)

    def append(self, result: EvalCaseResult, *, compact: bool = False) -> None:
        """Add ``result``, slim and compressed with ``compact``, else as it is."""
        self.append_entry(result.eval_id, self.codec.encode(result) if compact else result)

    def append_entry(self, eval_id: str, entry: Entry) -> None:
        """Add a result already encoded with this sequence's codec (or held as it is)."""
        self._ids.append(eval_id)
        self._entries.append(entry)

    @property
    def eval_ids(self) -> Sequence[str]:
        """The cases' ids, in order, without decoding anything."""
        return self._ids

    def _item(self, entry: Entry) -> EvalCaseResult:
        return self.codec.decode(entry) if isinstance(entry, bytes) else entry

    @overload
    def __getitem__(self, index: int) -> EvalCaseResult: ...

    @overload
    def __getitem__(self, index: slice) -> list[EvalCaseResult]: ...

    def __getitem__(self, index: int | slice) -> EvalCaseResult | list[EvalCaseResult]:
        if isinstance(index, slice):
            return [self._item(entry) for entry in self._entries[index]]
        return self._item(self._entries[index])

    def __iter__(self) -> Iterator[EvalCaseResult]:
        return (self._item(entry) for entry in self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)) or len(other) != len(self):
            return NotImplemented if not isinstance(other, Sequence) else False
        return all(mine == theirs for mine, theirs in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CaseResults({len(self)} case(s))"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        from agenteval_otel.evaluation.results import EvalCaseResult

        listed = core_schema.list_schema(handler.generate_schema(EvalCaseResult))
        return core_schema.json_or_python_schema(
            json_schema=listed,
            python_schema=core_schema.union_schema([core_schema.is_instance_schema(cls), listed]),
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda value: list(value), return_schema=listed),
        )
