"""plan's three tiers (issue 26): leased R, spot S for tolerant work, on demand for the rest; and the
exports of such a plan."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from gpuplan import api
from gpuplan.export import ExportOptions, export, parse_plan

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/spot-tiers.yaml"

SCENARIO = """version: 1
currency: USD
offers:
  - {id: bm, gpu: h100-sxm, mode: bare-metal, price: {amount: 110, per: gpu-day}, min_term: 30d}
  - {id: od, gpu: h100-sxm, mode: vm, tenancy: dedicated, price: {amount: 6.88, per: gpu-hour}}
  - id: spot
    gpu: h100-sxm
    mode: vm
    tenancy: dedicated
    capacity: spot
    preemption: {rate: 0.05, per: node-hour}
    price: {amount: 2.064, per: gpu-hour}
workloads:
  - {id: pretrain, kind: training, gpu: h100-sxm, gpus: 64, hours_per_day: 24, duration: 30d,
     checkpoint_interval: 1h, requires: [no-preemption]}
  - {id: sweeps, kind: experiment, gpu: h100-sxm, gpus: 16, hours_per_day: 10, days_per_week: 5, duration: 30d,
     checkpoint_interval: 30m}
"""


def _plan(tmp_path: Path, text: str = SCENARIO) -> dict:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return api.plan_scenario(str(path))


def test_sweeps_go_to_spot_and_the_training_stays_on_the_lease(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    placed = {a["workload"]: a["placement"] for a in plan["assignments"]}
    assert placed == {"pretrain": "bare-metal", "sweeps": "spot"}
    (pool,) = plan["pools"]
    assert pool["reserved_gpus"] == 64  # the lease covers the training only
    spot = pool["spot"]
    assert spot["offer"] == "spot" and spot["gpus"] == 16 and spot["workloads"] == ["sweeps"]
    # by hand: 22 working days (30 days from a Monday) x 10 h x 16 GPUs = 3,520 GPU-hours of schedule; the
    # sweeps' own slowdown s on the spot VM (compare's, for that workload and offer: the pool's
    # container_slowdown is weighted with the 64-GPU pre-training's, slower over the offers' unstated network);
    # each 10.25 h session runs 2 nodes: Lam = 0.1/h, 0.5 h segments:
    # (e^0.05 - 1)(1/0.1 + 0.5 h restart) / 0.5 = 1.076692 running hours per hour of work
    factor = math.expm1(0.05) * 10.5 / 0.5
    doc = api.compare(str(tmp_path / "s.yaml")).document_data()
    (sweeps,) = [w for w in doc["workloads"] if w["id"] == "sweeps"]
    (on_spot,) = [o for o in sweeps["options"] if o["offer"] == "spot"]
    s = on_spot["time"]["slowdown"]
    used = spot["gpu_hours_per_month"]
    assert used == pytest.approx(3520 * s * factor, rel=2e-3)
    assert spot["lost_gpu_hours_per_month"] == pytest.approx(used * (1 - 1 / factor), rel=2e-3)
    assert pool["cost_per_month"]["spot"] == pytest.approx(used * 2.064, rel=1e-6)
    # the leased cards run the training s_b times as long (the offer states no network: compare's assumed
    # cluster network, slower than the reference fabric): 64 x 720 GPU-hours x (s_b - 1) of lease overtime
    s_b = pool["slowdown_bare_metal"]
    assert s_b > 1.1
    assert pool["cost_per_month"]["overtime"] == pytest.approx(64 * 720 * (s_b - 1) * 110 / 24, rel=1e-3)
    assert pool["cost_per_month"]["hybrid"] == pytest.approx(
        pool["cost_per_month"]["lease"] + pool["cost_per_month"]["spot"] + pool["cost_per_month"]["spill"]
        + pool["cost_per_month"]["overtime"], rel=1e-9)
    # reclaims: (e^0.05 - 1) per 0.5 h segment of 2-node work
    assert spot["preemptions_per_month"] == pytest.approx(3520 / 16 * s / 0.5 * math.expm1(0.05), rel=2e-3)


def test_without_checkpoints_or_with_a_dear_spot_the_sweeps_stay_off_spot(tmp_path: Path) -> None:
    # no checkpoints: each 10.25 h session starts over when either node is reclaimed (work that stops each
    # day keeps its state overnight); at 0.2 per node-hour a session takes (e^4.1 - 1)(1/0.4 + 0.5) h = 177 h
    none = SCENARIO.replace("checkpoint_interval: 30m", "checkpoint_interval: none").replace("rate: 0.05", "rate: 0.2")
    assert {a["workload"]: a["placement"] for a in _plan(tmp_path, none)["assignments"]}["sweeps"] != "spot"
    dear = _plan(tmp_path, SCENARIO.replace("amount: 2.064", "amount: 6.5"))
    assert "spot" not in dear["pools"][0] and all(a["placement"] != "spot" for a in dear["assignments"])


def test_the_exports_ask_for_spot_and_pass_their_checks(tmp_path: Path) -> None:
    plan = parse_plan(_plan(tmp_path), "spot")
    sky = {yaml.safe_load(f.text)["name"]: yaml.safe_load(f.text)
           for f in export("skypilot", plan, ExportOptions()).files}
    sweeps = sky["sweeps"]["resources"]
    assert sweeps["ordered"] == [{"use_spot": True}, {"use_spot": False}]  # spot, then on demand
    assert "use_spot" not in str(sky["pretrain"])
    aws = {yaml.safe_load(f.text)["name"]: yaml.safe_load(f.text)
           for f in export("skypilot", plan, ExportOptions(spot_infra="aws")).files}
    assert aws["sweeps"]["resources"]["ordered"][0] == {"infra": "aws", "use_spot": True}
    kueue = list(yaml.safe_load_all(export("kueue", plan, ExportOptions()).stdout))
    flavor = next(o for o in kueue if o and o["kind"] == "ResourceFlavor" and o["metadata"]["name"].endswith("-spot"))
    assert flavor["spec"]["nodeLabels"]["gpuplan.io/pool"] == "spot"
    assert flavor["spec"]["nodeTaints"][0]["key"] == flavor["spec"]["tolerations"][0]["key"] == "gpuplan.io/spot"
    assert any(o and o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "gpuplan-spot" for o in kueue)
    assert "PartitionName=gpuplan-spot" in export("slurm", plan, ExportOptions()).stdout
    assert "gpuplan-h100-sxm-spot" in export("volcano", plan, ExportOptions()).stdout


def test_a_spot_placement_that_breaks_a_rule_is_refused(tmp_path: Path) -> None:
    from gpuplan.errors import ExportError

    data = _plan(tmp_path)
    data["assignments"][1]["requires"] = ["no-preemption"]
    with pytest.raises(ExportError, match="no-preemption"):
        parse_plan(data, "p")
    data = _plan(tmp_path)
    del data["pools"][0]["spot"]
    with pytest.raises(ExportError, match="no spot tier"):
        parse_plan(data, "p")


def test_the_example_plans_three_tiers() -> None:
    plan = api.plan_scenario(str(EXAMPLE))
    assert {a["workload"]: a["placement"] for a in plan["assignments"]} == {"pretrain": "bare-metal",
                                                                            "sweeps": "spot"}
