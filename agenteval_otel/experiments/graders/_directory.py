"""A grader directory: the three parts of a grader as files in one folder.

::

    my_grader/
      template.j2          the input formatter (one file named template.*: .j2, .jinja, .txt or .md)
      model_config.json    the model configuration, e.g. {"model": "gpt-4o"}
      parser.py            optional: parse_grader_response(response: str) -> dict

Without ``parser.py`` the first JSON object in the reply is read. ``parser.py`` is code: it is
imported only with ``trust_code=True`` (``--trust-grader-code`` on the command line); without
it, a directory holding one is refused. Templates and model configurations are data.
"""

from __future__ import annotations

from pathlib import Path

from agenteval_otel.errors import GraderError
from agenteval_otel.experiments.graders._grader import Grader
from agenteval_otel.judge import JudgeClient

__all__ = ["MODEL_CONFIG_FILE", "PARSER_FILE", "PARSER_FUNCTION", "TEMPLATE_SUFFIXES", "load_grader_dir"]

TEMPLATE_SUFFIXES = (".j2", ".jinja", ".txt", ".md")
MODEL_CONFIG_FILE = "model_config.json"
PARSER_FILE = "parser.py"
PARSER_FUNCTION = "parse_grader_response"


def load_grader_dir(path: str | Path, *, judge: JudgeClient | None = None, trust_code: bool = False) -> Grader:
    """The grader whose parts are the files in the directory ``path`` (see the module docstring);
    ``GraderError`` naming the directory and the file missing or in excess, or the ``parser.py``
    not trusted (``trust_code``)."""
    folder = Path(path)
    if not folder.is_dir():
        raise GraderError(f"grader directory {folder}: not a directory (expected a folder holding template.j2, "
                          f"{MODEL_CONFIG_FILE} and optionally {PARSER_FILE})")
    templates = sorted(p for p in folder.iterdir() if p.stem == "template" and p.suffix in TEMPLATE_SUFFIXES)
    if len(templates) != 1:
        found = f"found {', '.join(p.name for p in templates)}" if templates else "found none"
        raise GraderError(f"grader directory {folder}: expected one template file "
                          f"(template{' | template'.join(TEMPLATE_SUFFIXES)}), {found}")
    model_config = folder / MODEL_CONFIG_FILE
    if not model_config.is_file():
        raise GraderError(f"grader directory {folder}: {MODEL_CONFIG_FILE} is missing "
                          "(expected a JSON object such as {\"model\": \"gpt-4o\"})")
    parser_file = folder / PARSER_FILE
    parser = f"{parser_file}:{PARSER_FUNCTION}" if parser_file.is_file() else None
    if parser is not None and not trust_code:
        raise GraderError(f"grader directory {folder}: {parser_file} is Python code and is not run unless trusted: "
                          "pass --trust-grader-code (trust_code=True in Python) if you trust it, or remove it to "
                          "read the first JSON object in the reply")
    grader = Grader.from_files(templates[0], model_config, parser, judge=judge)
    grader.source = str(path)
    return grader
