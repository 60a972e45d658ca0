"""Every SkyPilot task the exporter writes validates against SkyPilot's task and resources schemas
(skypilot_schema.py, reproduced from skypilot 0.14.1), asks for whole nodes (num_nodes x per-node
accelerators), and says what Kubernetes needs for accelerators SkyPilot cannot find by itself."""

from __future__ import annotations

import copy

import jsonschema
import pytest
import yaml
from export_plans import all_plans, seed, three_gpu
from skypilot_schema import resources_schema, task_schema

from gpuplan.export import ExportOptions, export, parse_plan

TASK = jsonschema.Draft202012Validator(task_schema())
RESOURCES = jsonschema.Draft7Validator(resources_schema())


def validate(task: dict) -> None:
    TASK.validate(task)
    RESOURCES.validate(task["resources"])


def tasks(data: dict, options: ExportOptions | None = None) -> list[dict]:
    result = export("skypilot", parse_plan(data, "p"), options or ExportOptions())
    out = [yaml.safe_load(f.text) for f in result.files]
    assert [d for d in yaml.safe_load_all(result.stdout) if d] == out  # stdout holds the same tasks
    return out


def test_every_exported_task_validates() -> None:
    count = 0
    for name, data in all_plans():
        plan = parse_plan(data, name)
        for a, task in zip(plan.assignments, tasks(data), strict=True):
            validate(task)
            count += 1
            per_node = int(task["resources"]["accelerators"].rsplit(":", 1)[1])
            nodes = task.get("num_nodes", 1)
            pool = plan.pool(a.gpu)
            assert per_node <= pool.gpus_per_node and nodes * per_node >= a.gpus, (name, task)
            assert (nodes - 1) * per_node < a.gpus  # no whole node too many
    assert count >= 9


def test_multi_node_job_is_nodes_times_per_node() -> None:
    from export_plans import examples

    (data,) = [d for n, d in examples() if n == "h100-multinode.yaml"]
    (task,) = tasks(data)
    assert task["num_nodes"] == 8 and task["resources"]["accelerators"] == "H100:8"
    assert task["resources"]["infra"] == "k8s/gpuplan-leased"  # bare metal, and the plan spills nothing


def test_placement_and_notes_on_three_models() -> None:
    data = three_gpu()
    result = export("skypilot", parse_plan(data, "three"), ExportOptions())
    by = {yaml.safe_load(f.text)["name"]: (yaml.safe_load(f.text), f.text) for f in result.files}
    pretrain, _ = by["pretrain"]
    assert pretrain["num_nodes"] == 2 and pretrain["resources"]["accelerators"] == "H100:8"
    burst, _ = by["burst-finetune"]  # H100 spills: leased first, then elastic
    assert [c["infra"] for c in burst["resources"]["ordered"]] == ["k8s/gpuplan-leased", "k8s/gpuplan-elastic"]
    evaluation, _ = by["eval"]  # A100 spills nothing: no elastic candidate
    assert evaluation["resources"]["infra"] == "k8s/gpuplan-leased"
    notebooks, text = by["notebooks"]  # L40S: nothing leased, elastic only
    assert notebooks["resources"] == {"accelerators": "L40S:4", "infra": "k8s/gpuplan-elastic"}
    assert "# Kubernetes:" not in text  # a canonical name on nvidia.com/gpu needs nothing more


def test_ascend_says_how_kubernetes_can_schedule_it() -> None:
    result = export("skypilot", parse_plan(seed(), "seed"), ExportOptions())
    text = result.files[1].text
    assert "skypilot.co/accelerator=ascend910b" in text
    assert "CUSTOM_GPU_RESOURCE_KEY=huawei.com/Ascend910" in text
    # an H20 (not in SkyPilot's canonical list, but on nvidia.com/gpu): the label only
    data = copy.deepcopy(seed())
    data["pools"][0].update(gpu="h20", vendor="nvidia")
    for a in data["assignments"]:
        a["gpu"] = "h20"
    text = export("skypilot", parse_plan(data, "h20"), ExportOptions()).files[1].text
    assert "skypilot.co/accelerator=h20" in text and "CUSTOM_GPU_RESOURCE_KEY" not in text


@pytest.mark.parametrize(
    "broken",
    [
        {"name": "x", "resources": {"accelerator": "H100:8"}},  # misspelt key
        {"name": "x", "num_nodes": "8", "resources": {}},  # num_nodes not an integer
        {"name": "x", "resources": {"infra": "k9s/ctx"}},  # not an infra SkyPilot knows
        {"name": "x", "resources": {"ordered": [{"infra": "k8s/a", "cpu": 4}]}},  # unknown key in a candidate
        {"name": "x", "nodes": 2, "resources": {}},  # unknown top-level key
    ],
)
def test_the_schema_refuses_broken_tasks(broken: dict) -> None:
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)
