"""Query sets: the inputs an agent is run over, one JSON object per line (JSON Lines), or a
YAML (``.yaml``/``.yml``) or JSON document of ``queries``.

>>> Query.model_validate({"content": "Weather in Paris?", "expected": "sunny"}).ground_truth
'sunny'

A query holds ``content`` (the query), optionally its ground truth (``ground_truth``, or
``expected`` / ``expected_output`` / ``expected_response``) and ``metadata``. :func:`expand`
writes new queries in the style of the given ones through the LLM judge.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from agenteval_otel.errors import QuerySetLoadError
from agenteval_otel.judge import DATA_RULE, JudgeClient, data_block
from agenteval_otel.loading import (
    Document,
    SchemaReferenced,
    is_yaml,
    read_document,
    read_json,
    read_jsonl,
    validation_message,
    write_document,
)

__all__ = ["Query", "QuerySet", "aexpand", "expand", "normalised_query"]

_log = logging.getLogger(__name__)

_EXAMPLES_SHOWN = 30
_MAX_ROUNDS = 5


class Query(BaseModel):
    """One query: its content, optionally the expected answer, and anything else about it."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    content: str
    ground_truth: Any | None = Field(
        default=None,
        validation_alias=AliasChoices("ground_truth", "expected", "expected_output", "expected_response"))
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("expected the query's text, got a blank string")
        return value

    def to_json(self) -> dict[str, Any]:
        """The query as a line of a query set: absent ground truth and empty metadata left out."""
        line: dict[str, Any] = {"content": self.content}
        if self.ground_truth is not None:
            line["ground_truth"] = self.ground_truth
        if self.metadata:
            line["metadata"] = self.metadata
        return line


_QUERY_FIELDS = "a query holds content, ground_truth (or expected, expected_output, expected_response) and metadata"


class QuerySetDocument(SchemaReferenced):
    """A query set as one document (YAML or JSON): ``{"queries": [...]}``."""

    model_config = ConfigDict(extra="forbid")

    queries: list[Query] = Field(min_length=1)


@dataclass
class QuerySet:
    """Queries in order; ``source`` is the file they were loaded from."""

    queries: list[Query] = field(default_factory=list)
    source: Path | None = None

    def __len__(self) -> int:
        return len(self.queries)

    def __iter__(self) -> Iterator[Query]:
        return iter(self.queries)

    def __getitem__(self, index: int) -> Query:
        return self.queries[index]

    @classmethod
    def load(cls, path: str | Path) -> QuerySet:
        """The queries of ``path``: a YAML file (``.yaml``/``.yml``), or a JSON file holding one
        document (``{"queries": [...]}`` or a list of queries), holds the queries as a document;
        any other file holds one JSON object per line. A query that is not one raises
        :class:`QuerySetLoadError` naming the file, the line (and path) and what was expected."""
        document = _whole_document(Path(path))
        if document is not None:
            return cls(queries=_document_queries(document), source=Path(path))
        queries = []
        for number, data in read_jsonl(path, QuerySetLoadError, 'a query ({"content": ...})'):
            try:
                queries.append(Query.model_validate(data))
            except ValidationError as exc:
                message = validation_message(f"{path}: line {number}", exc)
                if any(err["type"] == "extra_forbidden" for err in exc.errors()):
                    message += f"; {_QUERY_FIELDS}"
                raise QuerySetLoadError(message) from None
        if not queries:
            raise QuerySetLoadError(f"{path}: holds no query; expected one JSON object per line")
        return cls(queries=queries, source=Path(path))

    def save(self, path: str | Path) -> Path:
        """Write the queries: as JSON Lines (creating parent folders), or, to a ``.yaml``/``.yml``
        or ``.json`` file, as one document with its ``$schema`` (``agenteval schema queryset``);
        returns the path."""
        file = Path(path)
        if is_yaml(file) or file.suffix.lower() == ".json":
            return write_document(file, {"queries": [query.to_json() for query in self.queries]}, "queryset")
        file.parent.mkdir(parents=True, exist_ok=True)
        with file.open("w", encoding="utf-8") as handle:
            for query in self.queries:
                handle.write(json.dumps(query.to_json(), ensure_ascii=False) + "\n")
        return file

    @staticmethod
    def model_json_schema() -> dict[str, Any]:
        """The JSON Schema of a query set written as one document (:class:`QuerySetDocument`)."""
        return QuerySetDocument.model_json_schema()


def _whole_document(file: Path) -> Document | None:
    """The query-set document in ``file``: always for YAML; for ``.json``, when the whole file
    is one JSON list or an object with ``queries`` (a one-line JSON Lines file is read as lines)."""
    if is_yaml(file):
        return read_document(file, QuerySetLoadError)
    if file.suffix.lower() != ".json":
        return None
    try:
        data = read_json(file, QuerySetLoadError)
    except QuerySetLoadError:
        return None  # JSON Lines of several lines: read line by line, with their own errors
    return Document(file, data) if isinstance(data, list) or (isinstance(data, dict) and "queries" in data) else None


def _document_queries(document: Document) -> list[Query]:
    data = {"queries": document.data} if isinstance(document.data, list) else document.data
    if not isinstance(data, dict):
        raise QuerySetLoadError(f"{document.path}: expected an object with 'queries' (a list of queries) "
                                f"or a list of queries, got {type(data).__name__}")
    try:
        return QuerySetDocument.model_validate(data).queries
    except ValidationError as exc:
        message = validation_message(document.path, exc, document)
        if any(err["type"] == "extra_forbidden" for err in exc.errors()):
            message += f"; {_QUERY_FIELDS}"
        raise QuerySetLoadError(message) from None


def normalised_query(text: str) -> str:
    """``text`` as compared for duplicates: Unicode-normalised, case-folded, punctuation and
    repeated spaces dropped."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[^\w\s]", " ", folded).split())


class _WrittenQueries(BaseModel):
    queries: list[str]


_INSTRUCTIONS = (
    "You write test queries for an AI agent. Write new queries a real user could send to the "
    "same agent, in the style, language, length and topics of the example queries, varied "
    "among themselves and different from every example and from every query already written. "
    "Answer with the queries alone.\n" + DATA_RULE
)


async def aexpand(query_set: QuerySet, n: int, *, judge: JudgeClient, model: str | None = None) -> QuerySet:
    """``query_set`` followed by up to ``n`` new queries written by ``judge`` in the style of
    the given ones, none a duplicate (after :func:`normalised_query`) of a given one or of each
    other; each new query's metadata holds ``"synthetic": true``.

    The judge is asked again (up to five rounds) while duplicates leave fewer than ``n``; if
    still short, the queries found are returned and the shortfall is logged as a warning.
    Judge failures raise the judge's errors (``JudgeError``).
    """
    if n < 0:
        raise ValueError(f"n must be 0 or more, got {n}")
    seen = {normalised_query(query.content) for query in query_set}
    written: list[Query] = []
    examples = "\n".join(json.dumps(q.content, ensure_ascii=False) for q in query_set.queries[:_EXAMPLES_SHOWN])
    for round_number in range(_MAX_ROUNDS):
        wanted = n - len(written)
        if wanted <= 0:
            break
        prompt = [f"Write {wanted} new queries, as a JSON object {{\"queries\": [string, ...]}}.",
                  data_block("example_queries", examples)]
        if written:
            prompt.append(data_block("already_written", "\n".join(
                json.dumps(q.content, ensure_ascii=False) for q in written)))
        messages = [{"role": "system", "content": _INSTRUCTIONS}, {"role": "user", "content": "\n\n".join(prompt)}]
        answer = await judge.ajudge(messages, _WrittenQueries, model=model, sample=round_number)
        for text in answer.queries:
            key = normalised_query(text)
            if key and key not in seen and len(written) < n:
                seen.add(key)
                written.append(Query(content=text.strip(), metadata={"synthetic": True}))
    if len(written) < n:
        _log.warning("the judge wrote %d new queries of the %d asked for (the others were duplicates)",
                     len(written), n)
    return QuerySet(queries=[*query_set.queries, *written])


def expand(query_set: QuerySet, n: int, *, judge: JudgeClient, model: str | None = None) -> QuerySet:
    """:func:`aexpand` from synchronous code (not from inside a running event loop)."""
    return asyncio.run(aexpand(query_set, n, judge=judge, model=model))
