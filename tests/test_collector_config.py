"""collector-config.yaml and its scale-out variant: every component is one the Collector's contrib
distribution ships, every pipeline uses defined components and every component is used, and
evaluation results never flow back into the pipelines that feed `agenteval serve`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from agenteval_otel import semconv
from tests.conftest import REPO_ROOT

CONFIGS = [REPO_ROOT / "collector-config.yaml", REPO_ROOT / "collector-config.loadbalancing.yaml"]

CONTRIB = "github.com/open-telemetry/opentelemetry-collector-contrib"
CORE = "go.opentelemetry.io/collector"
SHIPPED: dict[str, dict[str, str]] = {
    # component type -> its module in the otelcol-contrib distribution's manifest
    # (opentelemetry-collector-releases, distributions/otelcol-contrib/manifest.yaml, v0.135.0)
    "receivers": {
        "otlp": f"{CORE}/receiver/otlpreceiver",
        "nop": f"{CORE}/receiver/nopreceiver",
        "filelog": f"{CONTRIB}/receiver/filelogreceiver",
    },
    "processors": {
        "batch": f"{CORE}/processor/batchprocessor",
        "memory_limiter": f"{CORE}/processor/memorylimiterprocessor",
        "filter": f"{CONTRIB}/processor/filterprocessor",
        "attributes": f"{CONTRIB}/processor/attributesprocessor",
        "groupbytrace": f"{CONTRIB}/processor/groupbytraceprocessor",
        "tail_sampling": f"{CONTRIB}/processor/tailsamplingprocessor",
        "transform": f"{CONTRIB}/processor/transformprocessor",
    },
    "exporters": {
        "debug": f"{CORE}/exporter/debugexporter",
        "nop": f"{CORE}/exporter/nopexporter",
        "otlp": f"{CORE}/exporter/otlpexporter",
        "otlphttp": f"{CORE}/exporter/otlphttpexporter",
        "file": f"{CONTRIB}/exporter/fileexporter",
        "loadbalancing": f"{CONTRIB}/exporter/loadbalancingexporter",
    },
}
KINDS = ("receivers", "processors", "exporters")
TO_AGENTEVAL = ("otlphttp/agenteval", "loadbalancing/agenteval")


def _load(path: Path) -> dict[str, Any]:
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(config, dict), f"{path}: expected a mapping at the top"
    return config


@pytest.fixture(params=CONFIGS, ids=lambda path: path.name)
def config(request: pytest.FixtureRequest) -> dict[str, Any]:
    return _load(request.param)


def test_every_component_is_one_the_contrib_distribution_ships(config: dict[str, Any]) -> None:
    for kind in KINDS:
        for name in config[kind]:
            assert name.split("/")[0] in SHIPPED[kind], f"{kind}: {name} is not in otelcol-contrib"


def test_pipelines_use_only_defined_components_and_every_component_is_used(config: dict[str, Any]) -> None:
    pipelines = config["service"]["pipelines"]
    used: dict[str, set[str]] = {kind: set() for kind in KINDS}
    for name, pipeline in pipelines.items():
        assert name.split("/")[0] in ("traces", "logs", "metrics"), name
        assert pipeline["receivers"] and pipeline["exporters"], name
        for kind in KINDS:
            for component in pipeline.get(kind, []):
                assert component in config[kind], f"pipeline {name} uses undefined {kind[:-1]} {component}"
                used[kind].add(component)
        assert pipeline["processors"][0] == "memory_limiter", f"{name}: memory_limiter comes first"
    for kind in KINDS:
        assert used[kind] == set(config[kind]), f"{kind} defined but unused: {set(config[kind]) - used[kind]}"


def test_evaluation_results_reach_jaeger_but_never_agenteval_again(config: dict[str, Any]) -> None:
    marker = f'attributes["{semconv.EVALUATION_MARKER}"] != nil'
    drop = config["processors"]["filter/drop-evaluations"]
    assert drop["traces"]["span"] == [marker] and drop["logs"]["log_record"] == [marker]
    pipelines = config["service"]["pipelines"]
    feeding = [name for name, p in pipelines.items() if set(p["exporters"]) & set(TO_AGENTEVAL)]
    assert {name.split("/")[0] for name in feeding} == {"traces", "logs"}
    for name in feeding:
        processors = pipelines[name]["processors"]
        assert "filter/drop-evaluations" in processors, f"{name} would send evaluation results back"
        assert set(pipelines[name]["exporters"]) <= set(TO_AGENTEVAL)
    to_jaeger = [p for p in pipelines.values() if "otlp/jaeger" in p["exporters"]]
    assert to_jaeger and all("filter/drop-evaluations" not in p["processors"] for p in to_jaeger)


def test_ports_and_the_trace_file_format(config: dict[str, Any]) -> None:
    protocols = config["receivers"]["otlp"]["protocols"]
    assert (protocols["grpc"]["endpoint"], protocols["http"]["endpoint"]) == ("0.0.0.0:4317", "0.0.0.0:4318")
    files = {name: spec for name, spec in config["exporters"].items() if name.startswith("file")}
    assert files and all(spec["format"] == "json" for spec in files.values())
    assert config["exporters"]["otlp/jaeger"]["endpoint"].endswith("jaeger:4317}")


def test_the_single_worker_config_sends_to_agenteval_serve_on_4319() -> None:
    exporter = _load(CONFIGS[0])["exporters"]["otlphttp/agenteval"]
    assert exporter["endpoint"] == "${env:AGENTEVAL_SERVE_ENDPOINT:-http://localhost:4319}"


def test_the_scale_out_routes_by_trace_id_to_several_workers() -> None:
    balancer = _load(CONFIGS[1])["exporters"]["loadbalancing/agenteval"]
    assert balancer["routing_key"] == "traceID"
    hostnames = balancer["resolver"]["static"]["hostnames"]
    assert len(hostnames) > 1 and all(host.endswith(":4320") for host in hostnames)
