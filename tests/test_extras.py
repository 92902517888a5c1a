"""The core install works without the optional packages, and a feature that needs an extra says
which one. Each check runs in a fresh interpreter where those packages cannot be imported
(``sys.modules[name] = None``, Python's documented way to make an import fail)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

NOT_CORE = ("grpc", "nltk", "rouge_score", "numpy", "wrapt", "requests", "opentelemetry.exporter.otlp.proto.http")
GRPC_HINT = "needs the 'grpc' extra: pip install 'agenteval-otel[grpc]'"
OTLP_HINT = "needs the 'otlp' extra: pip install 'agenteval-otel[otlp]'"


def _without(modules: tuple[str, ...], code: str, cwd: Path,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``code`` where ``modules`` cannot be imported, in ``cwd``, with only ``env`` (and the
    path to this checkout) in its environment."""
    prelude = f"import sys\nfor name in {modules!r}:\n    sys.modules[name] = None\n"
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, cwd=cwd,
                          env={"PYTHONPATH": str(REPO_ROOT), **(env or {})}, timeout=120)


def test_the_quickstart_runs_on_the_core_alone(tmp_path: Path) -> None:
    """Capture, conversion and the default criteria (ROUGE included) with none of the packages
    the core no longer depends on."""
    examples = REPO_ROOT / "examples"
    done = _without(NOT_CORE, (
        "from agenteval_otel.cli import main\n"
        f"code = main(['run', {str(examples / 'weather_agent.evalset.json')!r}, '--agent', "
        f"{str(examples / 'weather_agent.py') + ':weather_agent'!r}, '--config', "
        f"{str(examples / 'weather_agent.config.json')!r}, '--report', 'report.json', '--quiet'])\n"
        "from agenteval_otel.criteria._rouge import adk_rouge1_f\n"
        "assert abs(adk_rouge1_f('The skies are clearing', 'sky clears') - 2 / 3) < 1e-12\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {NOT_CORE!r} and sys.modules[m]))\n"
        "sys.exit(code)\n"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    scores = [r["score"] for case in report["results"] for r in case["criterion_results"]
              if r["criterion"] == "response_match"]
    assert scores and all(score > 0.7 for score in scores)
    assert (tmp_path / "agenteval-traces.jsonl").stat().st_size > 0


def test_configure_logs_the_missing_grpc_extra_and_writes_the_file(tmp_path: Path) -> None:
    done = _without(("grpc",), (
        "import logging\nlogging.basicConfig(level=logging.ERROR, format='%(message)s')\n"
        "from agenteval_otel import configure, tool\n"
        "handle = configure('svc', set_global=False)\n"
        "@tool\ndef ping(x): return x\nping(1)\nassert handle.shutdown(5)\n"
        "print(handle.traces_file)\n"), tmp_path,
        env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert done.returncode == 0, done.stderr
    assert f"cannot create the OTLP exporter: OTLP over gRPC {GRPC_HINT}; spans will not be sent" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.strip() == "agenteval-traces.jsonl"
    assert "execute_tool ping" in (tmp_path / "agenteval-traces.jsonl").read_text(encoding="utf-8")


def test_configure_logs_the_missing_otlp_extra_and_writes_the_file(tmp_path: Path) -> None:
    done = _without(("opentelemetry.exporter.otlp.proto.http",), (
        "import logging\nlogging.basicConfig(level=logging.ERROR, format='%(message)s')\n"
        "from agenteval_otel import configure, tool\n"
        "from agenteval_otel.errors import ConfigError\n"
        "from agenteval_otel.tracing import providers_for\n"
        "handle = configure('svc', set_global=False)\n"
        "@tool\ndef ping(x): return x\nping(1)\nassert handle.shutdown(5)\n"
        "print(handle.traces_file)\n"
        "try:\n    providers_for('http://127.0.0.1:4318')\nexcept ConfigError as exc:\n    print(exc)\n"), tmp_path,
        env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert done.returncode == 0, done.stderr
    assert f"cannot create the OTLP exporter: OTLP over HTTP {OTLP_HINT}; spans will not be sent" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.strip().splitlines() == ["agenteval-traces.jsonl", f"OTLP over HTTP {OTLP_HINT}"]
    assert "execute_tool ping" in (tmp_path / "agenteval-traces.jsonl").read_text(encoding="utf-8")


def test_a_grpc_target_or_receiver_without_the_extra_is_a_config_error(tmp_path: Path) -> None:
    done = _without(("grpc",), (
        "from agenteval_otel.errors import ConfigError\n"
        "from agenteval_otel.tracing import providers_for\n"
        "from agenteval_otel.traces.receiver import OtlpReceiver\n"
        "for make in (lambda: providers_for('grpc://127.0.0.1:4317'),\n"
        "             lambda: OtlpReceiver(print, http_port=None, grpc_port=0)):\n"
        "    try:\n        make()\n    except ConfigError as exc:\n        print(exc)\n"
        "receiver = OtlpReceiver(print, http_port=0).start()  # OTLP/HTTP alone needs no grpc\n"
        "print(receiver.stop(2.0))\n"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"OTLP over gRPC {GRPC_HINT}", f"the OTLP/gRPC receiver {GRPC_HINT}", "True"]


def test_serve_with_a_grpc_port_names_the_extra(tmp_path: Path) -> None:
    done = _without(("grpc",), (
        "from agenteval_otel.cli import main\n"
        f"sys.exit(main(['serve', '--port', '0', '--grpc-port', '0', '--config', "
        f"{str(REPO_ROOT / 'examples' / 'production_policies.json')!r}, '--export-results', 'verdicts.jsonl']))\n"
    ), tmp_path)
    assert done.returncode == 2, done.stderr
    assert GRPC_HINT in done.stderr


def test_the_ray_engine_without_the_extra_names_it(tmp_path: Path) -> None:
    """Before anything is read: the command exits 2 with the install command."""
    done = _without(("ray",), (
        "from agenteval_otel.cli import main\n"
        f"sys.exit(main(['eval', '--traces', 'spans.jsonl', '--config', "
        f"{str(REPO_ROOT / 'examples' / 'production_policies.json')!r}, '--engine', 'ray', '--quiet']))\n"
    ), tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == "agenteval: error: the Ray engine needs the 'ray' extra: pip install 'agenteval-otel[ray]'"


CLICKHOUSE_HINT = "reading ClickHouse needs the 'clickhouse' extra: pip install 'agenteval-otel[clickhouse]'"


def test_clickhouse_without_the_extra_names_it(tmp_path: Path) -> None:
    """The trace I/O package and its ClickHouseSource import without clickhouse-connect (and,
    where it is installed, do not load it); a URL to read is then a one-line error naming the
    extra, exit 2."""
    loaded = _without((), "import agenteval_otel.traces\nfrom agenteval_otel.traces import ClickHouseSource\n"
                          "print(sorted(m for m in sys.modules if m.startswith('clickhouse_connect')))\n", tmp_path)
    assert loaded.stdout.strip() == "[]", loaded.stderr
    done = _without(("clickhouse_connect",), (
        "from agenteval_otel.traces import ClickHouseSource\n"
        "print(ClickHouseSource.__name__)\n"
        "from agenteval_otel.cli import main\n"
        f"sys.exit(main(['eval', '--clickhouse', 'http://127.0.0.1:9', '--config', "
        f"{str(REPO_ROOT / 'examples' / 'production_policies.json')!r}, '--quiet']))\n"), tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout.strip() == "ClickHouseSource"
    assert done.stderr.strip() == f"agenteval: error: {CLICKHOUSE_HINT}"
