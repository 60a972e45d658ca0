"""The `-o json` contracts (`gpuplan.contracts`): their schemas, that the engines' outputs validate, and
that the HTML reports read nothing the contracts lack.

The report check renders each report from a contract-validated document whose every mapping refuses a
key the contract does not name (`ContractDict`); the tests below also show that a misspelt key fails.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from _probe_fakes import (
    GOLDEN,
    FakeBackend,
    a100_mig_node,
    bare_metal_tree,
    container_on_vm_tree,
    h100_node,
    k8s_pod_tree,
    pcie_pair_node,
    vm_tree,
)
from pydantic import BaseModel, RootModel, ValidationError
from schema_nodes import object_nodes
from web_inputs import HYBRID, SEED, write_nvsmi, write_trace

from gpuplan import contracts
from gpuplan.contracts import CONTRACTS, json_schema, validate

ROOT = Path(__file__).resolve().parents[2]


# --- schema shape ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CONTRACTS))
def test_schema_is_draft_2020_12_with_properties_and_required_everywhere(name: str) -> None:
    schema = json_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"https://gpuplan.dev/schema/gpuplan.{name}/1.json"
    assert schema["title"] == f"gpuplan.{name}/1" and schema["description"]
    nodes = list(object_nodes(schema))
    assert len(nodes) > 3
    for path, node in nodes:
        assert isinstance(node.get("properties"), dict), f"{name} {path}: no properties"
        assert isinstance(node.get("required"), list), f"{name} {path}: no required"
        assert set(node["required"]) <= set(node["properties"]), path
        # a record is closed; a map (skipped reasons, p2p links) says what its values are
        assert "additionalProperties" in node, f"{name} {path}: neither closed nor a map"


def test_object_walk_sees_a_missing_required() -> None:
    """The walker above can fail: an object without `required` is reported."""
    broken = json_schema("plan")
    del broken["$defs"]["PlanPool"]["required"]
    bad = [p for p, n in object_nodes(broken) if "required" not in n]
    assert bad == ["#/$defs/PlanPool"]


def test_schema_field_is_const_and_matches_the_renderers() -> None:
    from gpuplan import probe
    from gpuplan.contracts import plan_document as plan
    from gpuplan.render import audit as report
    from gpuplan.render import compare

    for name, module in (("compare", compare), ("plan", plan), ("audit", report), ("probe", probe)):
        assert contracts.schema_id(name) == module.SCHEMA
        assert json_schema(name)["properties"]["schema"]["const"] == module.SCHEMA
    from gpuplan.sim.cost import SCHEMA as SIMULATE

    simulate = json_schema("simulate")
    assert simulate["properties"]["schema"]["const"] == contracts.schema_id("simulate") == SIMULATE
    assert {"runs", "recommended", "no_recommendation"} <= set(simulate["required"])


def test_unknown_contract() -> None:
    with pytest.raises(contracts.UnknownContract, match="expected one of compare, plan"):
        json_schema("nope")


def literal(alias: Any) -> set[Any]:
    return set(typing.get_args(alias))


def test_choices_agree_with_the_engines() -> None:
    """The contracts spell their choices out; the engines define them too. They must not drift."""
    from gpuplan import constants
    from gpuplan.contracts import audit, plan, probe
    from gpuplan.inputs import scenario_types as models
    from gpuplan.probe.checks import Status
    from gpuplan.telemetry.analyze import CLASSES
    from gpuplan.telemetry.samples import BAD_KINDS

    assert literal(plan.Kind) == literal(models.Kind)
    assert literal(plan.Requirement) == literal(models.Requirement)
    assert literal(plan.Queueing) == set(constants.QUEUEINGS)
    assert literal(audit.GpuClass) == set(CLASSES)
    assert list(audit.BadByKind.model_fields) == list(BAD_KINDS) == list(audit.BadExamples.model_fields)
    assert list(audit.Classes.model_fields) == list(CLASSES)
    assert literal(probe.CheckStatus) == literal(Status)
    figures = {f"bench_{name}" for name in probe.BenchResults.model_fields}
    assert figures <= literal(probe.CheckId) and "bench" in literal(probe.CheckId)


# --- validation is strict -----------------------------------------------------------------------


def plan_doc() -> dict[str, Any]:
    return json.loads((ROOT / "tests/golden/export/seed-hybrid.plan.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("mutate", "loc"),
    [
        (lambda d: d["pools"][0].update(gpus_per_node="8"), ("pools", 0, "gpus_per_node")),  # no coercion
        (lambda d: d["pools"][0].update(reserved_gpu=4), ("pools", 0, "reserved_gpu")),  # unknown key
        (lambda d: d["pools"][0].pop("marginal"), ("pools", 0, "marginal")),
        (lambda d: d["pools"][0].update(nodes=-1), ("pools", 0, "nodes")),
        (lambda d: d.update(schema="gpuplan.plan/2"), ("schema",)),
    ],
)
def test_validation_catches(mutate: Callable[[dict[str, Any]], None], loc: tuple[Any, ...]) -> None:
    data = plan_doc()
    mutate(data)
    with pytest.raises(ValidationError) as info:
        validate("plan", data)
    assert [e["loc"] for e in info.value.errors()] == [loc]
    assert list(jsonschema.Draft202012Validator(json_schema("plan")).iter_errors(data))  # the schema agrees


def test_whole_floats_are_integers_as_in_json_schema() -> None:
    data = plan_doc()
    data["pools"][0]["reserved_gpus"] = 4.0
    assert validate("plan", data).pools[0].reserved_gpus == 4  # type: ignore[attr-defined]
    jsonschema.validate(data, json_schema("plan"), cls=jsonschema.Draft202012Validator)


def test_money_objects_take_fields_not_yet_named() -> None:
    data = plan_doc()
    data["cost_per_month"]["reserve_fund"] = 1.0
    data["pools"][0]["cost_per_month"]["insurance"] = 2.0
    validate("plan", data)
    data["pools"][0]["insurance"] = 2.0  # but a pool is a closed record
    with pytest.raises(ValidationError):
        validate("plan", data)


def assert_valid(name: str, data: Any) -> BaseModel:
    """`data` passes both the pydantic model and the printed JSON Schema."""
    schema = json_schema(name)
    items = data if isinstance(data, list) else [data]
    for item in items:
        errors = [
            f"{list(e.absolute_path)}: {e.message}" for e in jsonschema.Draft202012Validator(schema).iter_errors(item)
        ]
        assert not errors, errors[:5]
    return validate(name, data)


# --- probe: every shape the engine makes ----------------------------------------------------------


def probe_docs(tmp_path: Path) -> dict[str, dict[str, Any]]:
    from gpuplan.contracts.probe_document import to_json
    from gpuplan.probe import probe_node

    npu_text = (GOLDEN / "npu-smi-info-910b.txt").read_text()

    def tree(make: Callable[[Path], Path], sub: str) -> Path:
        return make(tmp_path / sub)

    reports = {
        "h100": probe_node(tree(bare_metal_tree, "a"), nvml=h100_node()),
        "a100-mig-vm": probe_node(tree(vm_tree, "b"), nvml=a100_mig_node()),
        "l40s-pod": probe_node(tree(k8s_pod_tree, "c"), nvml=pcie_pair_node()),
        "ascend": probe_node(
            tree(bare_metal_tree, "d"), nvml=None, runner=lambda argv: npu_text if argv[0] == "npu-smi" else None
        ),
        "bench-8": probe_node(
            tree(container_on_vm_tree, "e"), nvml=h100_node(), bench=True, bench_backend=FakeBackend()
        ),
        "bench-1": probe_node(
            tree(container_on_vm_tree, "f"), nvml=h100_node(), bench=True, bench_backend=FakeBackend(count=1)
        ),
        "bench-no-gpu": probe_node(tree(vm_tree, "g"), nvml=None, bench=True, torch=None),
    }
    return {k: to_json(r, "en") for k, r in reports.items()}


def test_probe_documents_validate(tmp_path: Path) -> None:
    docs = probe_docs(tmp_path)
    for name, doc in docs.items():
        model = assert_valid("probe", doc)
        assert model.model_dump(mode="json", by_alias=True, exclude_unset=True) == doc, name
    assert docs["ascend"]["gpus"][0]["vendor"] == "huawei" and docs["bench-8"]["bench"]["results"]["p2p"]
    assert docs["bench-1"]["bench"]["results"]["p2p"] is None and docs["bench-no-gpu"]["bench"]["ran"] is False
    # the two GPU shapes are told apart by vendor: NVIDIA fields on an Ascend NPU are refused
    wrong = json.loads(json.dumps(docs["ascend"]))
    wrong["gpus"][0]["mig"] = None
    with pytest.raises(ValidationError):
        validate("probe", wrong)


# --- audit straight from the engine ---------------------------------------------------------------


def test_audit_without_price_and_without_timestamps_validates(tmp_path: Path) -> None:
    from gpuplan.contracts.audit_document import to_json
    from gpuplan.telemetry import Collector, analyze, read_into

    col = Collector()
    read_into([write_nvsmi(tmp_path / "n1.csv")], col)
    doc = to_json(analyze(col.finish()))
    assert_valid("audit", doc)
    assert doc["fleet"]["cost"] is None and "demand" not in doc


# --- the HTML reports read only what the contracts name -----------------------------------------


class OutsideContract(AssertionError):
    """A renderer read a key its contract does not name. Not a LookupError, so Jinja cannot swallow it."""


# Reads of keys outside the contracts that renderers make today, each to be fixed by its owner and
# removed here (the test fails when an entry is no longer hit). They behave as absent keys.
KNOWN_OUTSIDE: dict[tuple[str, str], str] = {
    ("audit", ".gpus[].idle_cost"): "report_data.audit_money: per-GPU idle money that audit/1 never has",
}


class ContractDict(dict[str, Any]):
    """A JSON object that refuses keys its contract does not name (present-but-optional keys are fine)."""

    def __init__(self, data: dict[str, Any], allowed: set[str], kind: str, where: str, hits: set[Any]) -> None:
        super().__init__(data)
        self._allowed, self._kind, self._where, self._hits = allowed, kind, where, hits

    def _outside(self, key: Any) -> None:
        if key in self._allowed:
            return
        ref = (self._kind, f"{self._where}.{key}")
        if ref in KNOWN_OUTSIDE:
            self._hits.add(ref)
            return
        raise OutsideContract(f"{self._kind}: {self._where}.{key} is not in gpuplan.{self._kind}/1")

    def __getitem__(self, key: Any) -> Any:
        self._outside(key)
        return super().__getitem__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._outside(key)
        return super().get(key, default)


def strict_view(kind: str, model: Any, where: str = "", hits: set[Any] | None = None) -> Any:
    """The validated document again, as plain JSON values, with each record a `ContractDict`."""
    hits = set() if hits is None else hits
    if isinstance(model, RootModel):
        return strict_view(kind, model.root, where, hits)
    if isinstance(model, BaseModel):
        fields = type(model).model_fields
        allowed = {f.alias or n for n, f in fields.items()}
        data = {
            (f.alias or n): strict_view(kind, getattr(model, n), f"{where}.{f.alias or n}", hits)
            for n, f in fields.items()
            if n in model.model_fields_set
        }
        # extra keys of the open money records are left out: reading one is reading outside the contract
        return ContractDict(data, allowed, kind, where, hits)
    if isinstance(model, list):
        return [strict_view(kind, v, f"{where}[]", hits) for v in model]
    if isinstance(model, dict):  # a map: any key
        return {k: strict_view(kind, v, f"{where}.*", hits) for k, v in model.items()}
    return model


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Any]]:
    """Per report kind, the contract-validated documents of the bundled examples and fixtures."""
    tmp = tmp_path_factory.mktemp("docs")
    cap = _Capture()
    trace = write_trace(tmp / "t.csv")
    log = write_nvsmi(tmp / "node1.csv")
    return {
        "plan": [cap.json("plan", str(p)) for p in sorted((ROOT / "examples").glob("*.yaml"))],
        "simulate": [
            cap.json("simulate", str(trace), "-r", "0:16:4", "-w", "1h", "-s", str(HYBRID)),
            cap.json("simulate", str(trace), "-r", "4"),
            cap.json("simulate", str(trace), "-r", "8", "-s", str(HYBRID)),
        ],
        "audit": [
            cap.json("audit", str(log), "--price", "8/gpu-hour", "--currency", "CNY"),
            cap.json("audit", str(log)),
        ],
    }


class _Capture:
    """`gpuplan ... -o json` in-process (module-scoped fixtures have no capsys)."""

    def json(self, *args: str) -> Any:
        import contextlib
        import io

        from gpuplan.cli import main

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main([*args, "-o", "json"]) == 0
        return json.loads(buf.getvalue())


@pytest.mark.parametrize("kind", ["plan", "simulate", "audit"])
def test_reports_read_only_contract_fields(kind: str, documents: dict[str, list[Any]]) -> None:
    from gpuplan.render.html import render_report

    hits: set[Any] = set()
    for doc in documents[kind]:
        view = strict_view(kind, assert_valid(kind, doc), hits=hits)
        for lang in ("en", "zh"):
            plain = render_report(kind, doc, lang)
            assert render_report(kind, view, lang) == plain  # the strict view changes nothing else
    assert hits == {ref for ref in KNOWN_OUTSIDE if ref[0] == kind}, "stale KNOWN_OUTSIDE entry"


def compare_for_report(path: Path) -> Any:
    """The compare result with what the report draws (its cost-against-hours curves are opt-in)."""
    from gpuplan import api

    return api.compare(path, hours_curves=True)


def test_compare_report_reads_only_contract_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuplan.render import compare
    from gpuplan.render.html import render_report

    real = compare.compare_json
    monkeypatch.setattr(
        compare,
        "compare_json",
        lambda doc: strict_view("compare", assert_valid("compare", real(doc))),
    )
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        result = compare_for_report(path)
        for lang in ("en", "zh"):
            assert "<svg" in render_report("compare", result, lang)


def test_a_misspelt_key_is_caught(documents: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: in a template, in Python (`[]` and `.get`), and in a real report."""
    from gpuplan.render import report_data
    from gpuplan.render.html import _env, render_report

    doc = documents["plan"][0]
    view = strict_view("plan", validate("plan", doc))
    assert view["currency"] == doc["currency"] and view.get("scenario") == doc["scenario"]
    with pytest.raises(OutsideContract, match=r"plan: \.currrency is not in gpuplan\.plan/1"):
        _env().from_string("{{ data.currrency }}").render(data=view)
    with pytest.raises(OutsideContract):
        view["pools"][0]["reserved"]  # noqa: B018 - the read itself is the test
    with pytest.raises(OutsideContract, match=r"\.pools\[\]\.cost_per_month\.lease_cost"):
        view["pools"][0]["cost_per_month"].get("lease_cost")

    real = report_data.plan_breakdown

    def misspelt(d: dict[str, Any]) -> Any:
        out = real(d)
        out["lease"] = [p["cost_per_month"].get("leese") or 0.0 for p in d["pools"]]
        return out

    monkeypatch.setattr(report_data, "plan_breakdown", misspelt)
    render_report("plan", doc, "en")  # a plain dict hides the typo
    with pytest.raises(OutsideContract, match="leese"):
        render_report("plan", view, "en")


def test_compare_seed_with_the_strict_view_equals_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sanity for the compare patch above: the strict view renders the same page."""
    from gpuplan.render import compare
    from gpuplan.render.html import render_report

    result = compare_for_report(SEED)
    plain = render_report("compare", result, "en")
    real = compare.compare_json
    monkeypatch.setattr(
        compare, "compare_json", lambda doc: strict_view("compare", validate("compare", real(doc)))
    )
    assert render_report("compare", result, "en") == plain
