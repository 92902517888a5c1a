"""collector-config.yaml and its scale-out variant, against the otelcol-contrib release they are
written for: every component is one that release ships, under its current name (no deprecated
alias); every pipeline uses defined components and every component is used; evaluation results
never flow back into the pipelines that feed `agenteval serve`; file exporters rotate; every
address works outside Docker by default; the scale-out keeps a conversation on one worker.

The release's component list is tests/data/otelcol-contrib-manifest.yaml (its header names the
version and where it comes from). No `otelcol-contrib` binary is installed with the project, so
the configs are checked against that list and the components' documented options here, not run
through `otelcol-contrib validate`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from agenteval_otel import semconv
from tests.conftest import REPO_ROOT

CONFIGS = [REPO_ROOT / "collector-config.yaml", REPO_ROOT / "collector-config.loadbalancing.yaml"]
MANIFEST = Path(__file__).parent / "data" / "otelcol-contrib-manifest.yaml"
RELEASE = "0.159.0"

CONTRIB = "github.com/open-telemetry/opentelemetry-collector-contrib"
CORE = "go.opentelemetry.io/collector"
TYPES: dict[str, dict[str, str]] = {
    # kind -> component type (the `type` of its metadata.yaml in that release) -> its module
    "receivers": {
        "otlp": f"{CORE}/receiver/otlpreceiver",
    },
    "processors": {
        "batch": f"{CORE}/processor/batchprocessor",
        "memory_limiter": f"{CORE}/processor/memorylimiterprocessor",
        "filter": f"{CONTRIB}/processor/filterprocessor",
    },
    "exporters": {
        "debug": f"{CORE}/exporter/debugexporter",
        "otlp_grpc": f"{CORE}/exporter/otlpexporter",
        "otlp_http": f"{CORE}/exporter/otlphttpexporter",
        "file": f"{CONTRIB}/exporter/fileexporter",
        "load_balancing": f"{CONTRIB}/exporter/loadbalancingexporter",
    },
}
DEPRECATED: dict[str, dict[str, str]] = {
    # kind -> a name the release still accepts, or once did, -> what to write instead
    "receivers": {"jaeger": "otlp (Jaeger clients speak OTLP)"},
    "processors": {},
    "exporters": {
        "otlp": "otlp_grpc (the old name is a deprecated alias)",
        "otlphttp": "otlp_http (the old name is a deprecated alias)",
        "loadbalancing": "load_balancing (the old name is a deprecated alias)",
        "logging": "debug (the logging exporter was removed)",
        "jaeger": "otlp_grpc to Jaeger's OTLP port (the jaeger exporters were removed)",
        "jaeger_thrift": "otlp_grpc to Jaeger's OTLP port (the jaeger exporters were removed)",
    },
}
KINDS = ("receivers", "processors", "exporters")
TO_AGENTEVAL = ("otlp_http/agenteval", "load_balancing/agenteval")
ROUTING_KEYS = ("service", "traceID", "resource", "metric", "streamID", "attributes")
"""The `load_balancing` exporter's routing keys in that release (its README)."""
ENV_REFERENCE = re.compile(r"\$\{env:(?P<name>[A-Z0-9_]+)(?::-(?P<default>[^}]*))?\}")


def _load(path: Path) -> dict[str, Any]:
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(config, dict), f"{path}: expected a mapping at the top"
    return config


def _strings(value: Any) -> list[str]:
    """Every string value in a loaded config."""
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return [value] if isinstance(value, str) else []


def _shipped() -> dict[str, set[str]]:
    """The modules of each kind the release ships, without their versions."""
    manifest = _load(MANIFEST)
    assert manifest["dist"]["version"] == RELEASE, "the manifest copy is of another release than the configs"
    return {kind: {entry["gomod"].split()[0] for entry in manifest[kind]} for kind in KINDS}


@pytest.fixture(params=CONFIGS, ids=lambda path: path.name)
def config_path(request: pytest.FixtureRequest) -> Path:
    path: Path = request.param
    return path


@pytest.fixture
def config(config_path: Path) -> dict[str, Any]:
    return _load(config_path)


def test_every_component_is_one_the_release_ships_under_its_current_name(config: dict[str, Any]) -> None:
    shipped = _shipped()
    for kind in KINDS:
        for name in config[kind]:
            component = name.split("/")[0]
            assert component not in DEPRECATED[kind], f"{kind}: {name}: write {DEPRECATED[kind][component]}"
            assert component in TYPES[kind], f"{kind}: {name} is not a component these configs are checked for"
            assert TYPES[kind][component] in shipped[kind], f"{kind}: {name} is not in otelcol-contrib {RELEASE}"


def test_the_component_table_matches_the_manifest() -> None:
    shipped = _shipped()
    for kind in KINDS:
        assert {module for module in TYPES[kind].values()} <= shipped[kind]


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
    to_jaeger = [p for p in pipelines.values() if "otlp_grpc/jaeger" in p["exporters"]]
    assert to_jaeger and all("filter/drop-evaluations" not in p["processors"] for p in to_jaeger)


def test_ports_and_the_file_exporters_format_and_rotation(config: dict[str, Any]) -> None:
    protocols = config["receivers"]["otlp"]["protocols"]
    assert (protocols["grpc"]["endpoint"], protocols["http"]["endpoint"]) == ("0.0.0.0:4317", "0.0.0.0:4318")
    files = {name: spec for name, spec in config["exporters"].items() if name.startswith("file")}
    assert files and all(spec["format"] == "json" for spec in files.values())
    for name, spec in files.items():
        rotation = spec.get("rotation") or {}
        assert rotation.get("max_megabytes") and rotation.get("max_backups"), f"{name} grows without bound"


def test_every_address_defaults_to_this_host_and_can_be_changed_from_the_environment(config_path: Path) -> None:
    text = config_path.read_text(encoding="utf-8")
    config = yaml.safe_load(text)
    references = [ref for value in _strings(config) for ref in ENV_REFERENCE.finditer(value)]
    assert references and all(ref["default"] for ref in references), "every ${env:...} has a default"
    addresses = [config["exporters"]["otlp_grpc/jaeger"]["endpoint"]]
    addresses += [spec["endpoint"] for name, spec in config["exporters"].items() if name.startswith("otlp_http")]
    balancer = config["exporters"].get("load_balancing/agenteval")
    if balancer is not None:
        addresses += balancer["resolver"]["static"]["hostnames"]
    for address in addresses:
        match = ENV_REFERENCE.fullmatch(address)
        assert match is not None, f"{address}: the address comes from a variable"
        host = match["default"].split("://")[-1].rsplit(":", 1)[0]
        assert host in ("localhost", "127.0.0.1"), f"{address}: its default resolves only inside Docker"
        assert match["name"] in text.split("\n\n")[0], f"{match['name']} is named in the header comment"


def test_the_single_worker_config_sends_to_agenteval_serve_on_4319() -> None:
    exporter = _load(CONFIGS[0])["exporters"]["otlp_http/agenteval"]
    assert exporter["endpoint"] == "${env:AGENTEVAL_SERVE_ENDPOINT:-http://localhost:4319}"


def test_the_scale_out_keeps_a_conversation_on_one_worker_of_several() -> None:
    balancer = _load(CONFIGS[1])["exporters"]["load_balancing/agenteval"]
    assert balancer["routing_key"] in ROUTING_KEYS
    assert (balancer["routing_key"], balancer["routing_attributes"]) == ("attributes", [semconv.GEN_AI_CONVERSATION_ID])
    assert set(balancer["protocol"]) == {"otlp"} and "endpoint" not in balancer["protocol"]["otlp"]
    hostnames = balancer["resolver"]["static"]["hostnames"]
    assert len(set(hostnames)) > 1
