"""Every Volcano Queue the exporter writes, for the seed plan, a three-GPU-model plan and the
examples, is admitted by the port of Volcano's queue webhook (volcano_admission.py, Volcano 1.14+)
and pins one GPU model through its node groups."""

from __future__ import annotations

import copy
import itertools

import pytest
from export_plans import all_plans, three_gpu
from volcano_admission import admit

from gpuplan.errors import ExportError
from gpuplan.export import ExportOptions, export, parse_plan
from gpuplan.export.validate import check_volcano
from gpuplan.export.volcano import build

OPTIONS = [ExportOptions(), ExportOptions(cpu_per_gpu="1500m", memory_per_gpu="96Gi", name="ml")]


def test_every_exported_queue_is_admitted() -> None:
    count = 0
    for (name, data), opts in itertools.product(all_plans(), OPTIONS):
        plan = parse_plan(data, name)
        queues = build(plan, opts)
        assert queues, name
        for q in queues:
            assert admit(q) == [], (name, q)
            count += 1
        # one queue per GPU model that has capacity, each on that model's node groups only
        groups = {q["metadata"]["name"]: q["spec"]["affinity"]["nodeGroupAffinity"] for q in queues}
        for p in plan.pools:
            if p.reserved_gpus + plan.elastic_gpus(p.gpu) == 0:
                continue
            aff = groups.pop(f"{opts.name}-{p.slug}")
            assert set(aff["requiredDuringSchedulingIgnoredDuringExecution"]) <= {
                f"{p.slug}-leased",
                f"{p.slug}-elastic",
            }
            if p.reserved_gpus:
                assert aff["preferredDuringSchedulingIgnoredDuringExecution"] == [f"{p.slug}-leased"]
            if p.spot_gpus:  # the spot tier's own queue: spot nodes first, elastic ones as the fallback
                spot = groups.pop(f"{opts.name}-{p.slug}-spot")
                assert set(spot["requiredDuringSchedulingIgnoredDuringExecution"]) <= {
                    f"{p.slug}-spot", f"{p.slug}-elastic"}
                assert spot["preferredDuringSchedulingIgnoredDuringExecution"] == [f"{p.slug}-spot"]
        assert groups == {}
    assert count >= 12


def test_the_port_refuses_what_volcano_refuses() -> None:
    """The queue the exporter wrote before (guarantee, no deserved) and the other orderings."""
    q = build(parse_plan(three_gpu(), "three"), ExportOptions())[0]
    assert admit(q) == []
    old = copy.deepcopy(q)
    del old["spec"]["deserved"]
    assert admit(old) == ["spec.guarantee: guarantee should less equal than deserved"]
    with pytest.raises(ExportError, match="deserved"):
        check_volcano([old])
    over = copy.deepcopy(q)
    over["spec"]["deserved"]["nvidia.com/gpu"] = 999
    assert admit(over) == ["spec.deserved: deserved should less equal than capability"]
    missing = copy.deepcopy(q)
    del missing["spec"]["capability"]["memory"]  # a resource absent from capability counts as 0
    assert admit(missing) == ["spec.deserved: deserved should less equal than capability"]
    scalar = copy.deepcopy(q)
    del scalar["spec"]["capability"]["nvidia.com/gpu"]
    assert admit(scalar) == ["spec.deserved: deserved should less equal than capability"]
    milli = copy.deepcopy(q)
    milli["spec"]["guarantee"]["resource"]["cpu"] = f"{int(q['spec']['deserved']['cpu']) * 1000 + 1}m"
    assert admit(milli) == ["spec.guarantee: guarantee should less equal than capability"]
    weight = copy.deepcopy(q)
    weight["spec"]["weight"] = 0
    assert admit(weight) == ["spec.weight: should be greater than or equal to 1"]
    with pytest.raises(ExportError, match="weight"):
        check_volcano([weight])


def test_three_gpu_plan_queues() -> None:
    plan = parse_plan(three_gpu(), "three")
    queues = {q["metadata"]["name"]: q["spec"] for q in build(plan, ExportOptions())}
    assert list(queues) == ["gpuplan-h100-sxm", "gpuplan-a100-80g", "gpuplan-l40s"]
    h100 = queues["gpuplan-h100-sxm"]
    assert h100["capability"]["nvidia.com/gpu"] == 24 and h100["guarantee"]["resource"]["nvidia.com/gpu"] == 16
    # the A100 pool spills nothing: no elastic node group, capability = the leased cards
    a100 = queues["gpuplan-a100-80g"]
    assert a100["capability"]["nvidia.com/gpu"] == 8
    assert a100["affinity"]["nodeGroupAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == [
        "a100-80g-leased"
    ]
    # L40S leases nothing: no guarantee, elastic group only
    l40s = queues["gpuplan-l40s"]
    assert "guarantee" not in l40s and l40s["capability"]["nvidia.com/gpu"] == 4
    text = export("volcano", plan, ExportOptions()).stdout
    assert "pretrain (16x h100-sxm, bare-metal): queue gpuplan-h100-sxm; must stay on bare metal" in text
