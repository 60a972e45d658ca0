"""The CEL rules (and cross references) the exporter checks itself before writing: crafted bad input fails."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplan.errors import ExportError
from gpuplan.export import ExportOptions, export, parse_plan, quantity
from gpuplan.export.kueue import build
from gpuplan.export.validate import check_kueue, check_volcano
from gpuplan.export.volcano import build as build_volcano

FIXTURE = Path(__file__).resolve().parents[2] / "tests/golden/export/seed-hybrid.plan.json"


def objs(api: str = "v1beta2", **kw: Any) -> list[dict[str, Any]]:
    plan = parse_plan(json.loads(FIXTURE.read_text(encoding="utf-8")), "fixture")
    return build(plan, ExportOptions(api=api, **kw))


def cq(objects: list[dict[str, Any]], name: str = "gpuplan-hybrid") -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == name)


@pytest.mark.parametrize("api", ["v1beta1", "v1beta2"])
def test_generated_objects_pass(api: str) -> None:
    check_kueue(objs(api, autoscale=True), api)


def test_flavor_must_list_exactly_covered_resources() -> None:
    o = objs()
    cq(o)["spec"]["resourceGroups"][0]["flavors"][1]["resources"].pop()  # drop the GPU from elastic
    with pytest.raises(ExportError, match="coveredResources") as info:
        check_kueue(o, "v1beta2")
    assert "flavors[1].resources" in str(info.value.field)
    o = objs()
    res = cq(o)["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    res[0]["name"] = "nvidia.com/gpu"  # same count, wrong names
    with pytest.raises(ExportError, match="coveredResources"):
        check_kueue(o, "v1beta2")


def test_borrowing_limit_needs_a_cohort() -> None:
    for api, key in (("v1beta2", "cohortName"), ("v1beta1", "cohort")):
        o = objs(api)
        spec = cq(o)["spec"]
        assert any(
            "borrowingLimit" in r for f in spec["resourceGroups"][0]["flavors"] for r in f["resources"]
        )
        del spec[key]
        with pytest.raises(ExportError, match="borrowingLimit must be nil"):
            check_kueue(o, api)


def test_wrong_cohort_field_for_the_version() -> None:
    o = objs("v1beta2")
    spec = cq(o)["spec"]
    spec["cohort"] = spec.pop("cohortName")
    with pytest.raises(ExportError, match="not a field of v1beta2"):
        check_kueue(o, "v1beta2")


@pytest.mark.parametrize("bad", ["4 GPUs", "1.2.3", "Gi", "12gb", "", True, 1.5])
def test_quotas_must_be_quantities(bad: Any) -> None:
    o = objs()
    cq(o)["spec"]["resourceGroups"][0]["flavors"][1]["resources"][1]["nominalQuota"] = bad
    with pytest.raises(ExportError, match="not a Kubernetes quantity"):
        check_kueue(o, "v1beta2")


def test_fungibility_and_preemption_rules() -> None:
    o = objs()
    cq(o)["spec"]["flavorFungibility"]["preference"] = "BorrowingOverPreemption"
    with pytest.raises(ExportError, match="preference"):
        check_kueue(o, "v1beta2")
    o = objs()
    cq(o)["spec"]["preemption"]["borrowWithinCohort"] = {"policy": "LowerPriority"}
    with pytest.raises(ExportError, match="reclaimWithinCohort=Never"):
        check_kueue(o, "v1beta2")


def test_references_must_resolve() -> None:
    o = [
        x for x in objs() if not (x["kind"] == "ResourceFlavor" and x["metadata"]["name"].endswith("elastic"))
    ]
    with pytest.raises(ExportError, match="no ResourceFlavor named 'ascend-910b-elastic'"):
        check_kueue(o, "v1beta2")
    o = [x for x in objs() if x["metadata"]["name"] != "gpuplan-bare-metal"]
    with pytest.raises(ExportError, match="no ClusterQueue"):
        check_kueue(o, "v1beta2")
    o = [x for x in objs(autoscale=True) if x["kind"] != "AdmissionCheck"]
    with pytest.raises(ExportError, match="no AdmissionCheck"):
        check_kueue(o, "v1beta2")


def test_volcano_guarantee_within_capability_and_quantities() -> None:
    plan = parse_plan(json.loads(FIXTURE.read_text(encoding="utf-8")), "fixture")
    q = build_volcano(plan, ExportOptions())
    check_volcano(q)
    bad = copy.deepcopy(q)
    bad[0]["spec"]["guarantee"]["resource"]["huawei.com/Ascend910"] = 99
    with pytest.raises(ExportError, match=r"exceeds spec\.capability"):
        check_volcano(bad)
    bad = copy.deepcopy(q)
    del bad[0]["spec"]["deserved"]  # the queue the exporter wrote before Volcano 1.14 refused it
    with pytest.raises(ExportError, match=r"exceeds spec\.deserved"):
        check_volcano(bad)
    bad = copy.deepcopy(q)
    bad[0]["spec"]["capability"]["memory"] = "lots"
    with pytest.raises(ExportError, match="quantity"):
        check_volcano(bad)


def test_bad_option_quantity_is_refused_before_writing() -> None:
    plan = parse_plan(json.loads(FIXTURE.read_text(encoding="utf-8")), "fixture")
    with pytest.raises(ExportError, match="--memory-per-gpu"):
        export("kueue", plan, ExportOptions(memory_per_gpu="128GB"))


# --- quantities -------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["0", "16", "1500m", "128Gi", "1e3", "0.5", ".5", "+2", "1E-2", "64k"])
def test_valid_quantities(text: str) -> None:
    assert quantity.is_quantity(text)


@pytest.mark.parametrize("text", ["", "Gi", "1.5.2", "12gb", "1 Gi", "1KiB", "e3", "--1"])
def test_invalid_quantities(text: str) -> None:
    assert not quantity.is_quantity(text)


def test_scale_examples() -> None:
    assert quantity.scale("128Gi", 4) == "512Gi"
    assert quantity.scale("16", 4) == "64"
    assert quantity.scale("1500m", 3) == "4500m"
    assert quantity.scale("1.5", 3) == "4500m"
    assert quantity.scale("0.5", 4) == "2"
    assert quantity.scale("1e3", 2) == "2000"
    assert quantity.scale("128Gi", 0) == "0"
    assert quantity.mib("512Gi") == 524288


@given(
    number=st.integers(min_value=0, max_value=10**6),
    suffix=st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "Ti"]),
    factor=st.integers(min_value=0, max_value=4096),
)
def test_scale_is_exact_and_valid(number: int, suffix: str, factor: int) -> None:
    text = f"{number}{suffix}"
    out = quantity.scale(text, factor)
    assert quantity.is_quantity(out)
    assert quantity.to_decimal(out) == quantity.to_decimal(text) * factor


def test_object_names_and_label_values_are_checked() -> None:
    from gpuplan.export.validate import check_names

    objects = objs()
    for o in objects:
        check_names(o)
    bad = copy.deepcopy(objects[2])
    bad["metadata"]["name"] = "Ascend_910B-leased"
    with pytest.raises(ExportError, match="RFC 1123"):
        check_names(bad)
    bad = copy.deepcopy(objects[2])
    bad["spec"]["nodeLabels"]["gpuplan.io/gpu"] = "x" * 64
    with pytest.raises(ExportError, match="label value"):
        check_names(bad)
