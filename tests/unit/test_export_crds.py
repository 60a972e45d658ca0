"""Every Kueue and Volcano object the exporter writes validates against the CRDs' openAPIV3Schema.

The schemas are made strict: `additionalProperties: false` wherever properties are listed (unless
the node preserves unknown fields), int-or-string honoured, Go regex flags moved for Python's re.
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from export_plans import examples, three_gpu

from gpuplan.export import ExportOptions, export, parse_plan
from gpuplan.export.kueue import build as build_kueue
from gpuplan.export.volcano import build as build_volcano

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests/golden/export/seed-hybrid.plan.json"


def strict(node: Any) -> Any:
    """A copy of an openAPIV3Schema that rejects unknown fields and that Python's re can read."""
    if isinstance(node, list):
        return [strict(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: strict(v) for k, v in node.items() if not k.startswith("x-kubernetes-validations")}
    if node.get("x-kubernetes-int-or-string") and "anyOf" not in node:
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        out.pop("type", None)
    if "pattern" in out and isinstance(out["pattern"], str):
        out["pattern"] = python_pattern(out["pattern"])
    if (
        "properties" in node
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def python_pattern(pattern: str) -> str:
    """Go's RE2 allows inline flags anywhere (`^(?i)abc`); Python wants global flags first."""
    for flag in ("(?i)", "(?s)", "(?m)"):
        if flag in pattern and not pattern.startswith(flag):
            pattern = flag + pattern.replace(flag, "")
    return pattern


def load_crds(directory: Path) -> dict[tuple[str, str], Any]:
    """(apiVersion, kind) -> strict schema, for every CRD file in `directory`."""
    schemas = {}
    for path in sorted(directory.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            group, kind = doc["spec"]["group"], doc["spec"]["names"]["kind"]
            for version in doc["spec"]["versions"]:
                schema = strict(version["schema"]["openAPIV3Schema"])
                schemas[(f"{group}/{version['name']}", kind)] = schema
    return schemas


@pytest.fixture(scope="module")
def crds(shared_dir: Path) -> dict[tuple[str, str], Any]:
    out = {}
    for sub in ("kueue-v0.19.2", "volcano"):
        out.update(load_crds(shared_dir / "schemas" / sub))
    return out


def validate(obj: dict[str, Any], crds: dict[tuple[str, str], Any]) -> None:
    schema = crds[(obj["apiVersion"], obj["kind"])]
    jsonschema.Draft7Validator(schema).validate(obj)


def plan_data() -> dict[str, Any]:
    import json

    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def variants() -> list[dict[str, Any]]:
    """The seed plan and variations that exercise other branches (several pools, no bare metal...)."""
    seed = plan_data()
    no_bm = copy.deepcopy(seed)
    for a in no_bm["assignments"]:
        a["placement"] = "container" if a["kind"] == "experiment" else "split"
    two = copy.deepcopy(seed)
    two["queueing"] = "strict-fifo"
    # a second pool and its workloads: complete gpuplan.plan/1 objects, the seed's with other figures
    h100 = copy.deepcopy(seed["pools"][0])
    h100.update(
        gpu="h100-sxm",
        vendor="nvidia",
        offer_bare_metal="bm-h100",
        offer_container="aws-p5-h100",
        reserved_gpus=16,
        nodes=2,
        gpus_per_node=8,
        lease_unit="node",
    )
    h100["demand"].update(peak=20.5, mean=12)
    two["pools"].append(h100)
    two["assignments"].append(
        {
            "workload": "pretrain",
            "placement": "bare-metal",
            "reason": "compliance",
            "gpu": "h100-sxm",
            "gpus": 8,
            "kind": "training",
            "requires": ["compliance"],
            "pool_share": 1.0,
        }
    )
    two["assignments"].append(
        {
            "workload": "serving",
            "placement": "container",
            "reason": "elastic",
            "gpu": "h100-sxm",
            "gpus": 2,
            "kind": "inference",
            "requires": ["elastic"],
            "pool_share": 0.0,
        }
    )
    only_leased = copy.deepcopy(seed)
    only_leased["pools"][0]["demand"]["peak"] = 4
    only_leased["assignments"] = [only_leased["assignments"][0]]
    return [seed, no_bm, two, only_leased, three_gpu(), *(data for _, data in examples())]


OPTION_SETS = [
    ExportOptions(),
    ExportOptions(
        autoscale=True, namespaces=("team-a", "team-b"), cpu_per_gpu="1500m", memory_per_gpu="96Gi"
    ),
]


@pytest.mark.parametrize("api", ["v1beta1", "v1beta2"])
def test_every_kueue_object_validates(crds: dict, api: str) -> None:
    kinds = set()
    for data, opts in itertools.product(variants(), OPTION_SETS):
        plan = parse_plan(data, "fixture")
        options = ExportOptions(**{**opts.__dict__, "api": api})
        objs = build_kueue(plan, options)
        for obj in objs:
            assert obj["apiVersion"] == f"kueue.x-k8s.io/{api}"
            validate(obj, crds)
            kinds.add(obj["kind"])
        # and what the exporter prints is the same objects
        text = export("kueue", plan, options).stdout
        assert [d for d in yaml.safe_load_all(text) if d] == objs
    assert kinds == {
        "WorkloadPriorityClass",
        "ResourceFlavor",
        "ClusterQueue",
        "LocalQueue",
        "AdmissionCheck",
        "ProvisioningRequestConfig",
    }


def test_every_volcano_queue_validates(crds: dict) -> None:
    for data, opts in itertools.product(variants(), OPTION_SETS):
        for obj in build_volcano(parse_plan(data, "fixture"), opts):
            validate(obj, crds)


def test_strict_schema_rejects_unknown_and_wrong_version_fields(crds: dict) -> None:
    """The checker can fail: v1beta2 has no `cohort`, v1beta1 no `cohortName`, and no field is free."""
    plan = parse_plan(plan_data(), "fixture")
    cq = next(o for o in build_kueue(plan, ExportOptions(api="v1beta2")) if o["kind"] == "ClusterQueue")
    bad = copy.deepcopy(cq)
    bad["spec"]["cohort"] = bad["spec"].pop("cohortName")
    with pytest.raises(jsonschema.ValidationError):
        validate(bad, crds)
    bad = copy.deepcopy(cq)
    bad["spec"]["flavorFungibility"]["whenCanBorrow"] = "Borrow"  # v1beta1-only spelling
    with pytest.raises(jsonschema.ValidationError):
        validate(bad, crds)
    bad = copy.deepcopy(cq)
    bad["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "12 cores"
    with pytest.raises(jsonschema.ValidationError):
        validate(bad, crds)
    v1 = next(o for o in build_kueue(plan, ExportOptions(api="v1beta1")) if o["kind"] == "ClusterQueue")
    assert v1["spec"]["cohort"] == "gpuplan" and v1["spec"]["flavorFungibility"]["whenCanBorrow"] == "Borrow"
    bad = copy.deepcopy(v1)
    bad["spec"]["cohortName"] = bad["spec"].pop("cohort")
    with pytest.raises(jsonschema.ValidationError):
        validate(bad, crds)
    queue = build_volcano(plan, ExportOptions())[0]
    bad = copy.deepcopy(queue)
    bad["spec"]["affinity"]["nodeGroupAffinity"]["preferred"] = ["x"]
    with pytest.raises(jsonschema.ValidationError):
        validate(bad, crds)


def test_go_inline_flag_pattern_is_rewritten(crds: dict) -> None:
    schema = crds[("kueue.x-k8s.io/v1beta2", "AdmissionCheck")]
    kind = schema["properties"]["spec"]["properties"]["parameters"]["properties"]["kind"]
    assert kind["pattern"].startswith("(?i)")
    check = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "AdmissionCheck",
        "metadata": {"name": "x"},
        "spec": {
            "controllerName": "c",
            "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "p"},
        },
    }
    validate(check, crds)
    check["spec"]["parameters"]["kind"] = "Provisioning_Request"
    with pytest.raises(jsonschema.ValidationError):
        validate(check, crds)
