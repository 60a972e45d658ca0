"""GPU names as people, drivers, SkyPilot and Kubernetes write them -> one catalog id (issue 12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplan.errors import ScenarioError
from gpuplan.export.gpus import TABLE as EXPORT_NAMES
from gpuplan.inputs.catalog import GpuNameError, load_catalog
from gpuplan.inputs.gpu_names import BY_ID, TABLE, NameIndex, k8s_product, name_key, skypilot_name
from gpuplan.inputs.scenario import scenario_from_text

CAT = load_catalog()

# every name the issue lists, and what it must resolve to
ISSUE_NAMES = [
    ("H100", "h100-sxm"), ("h100", "h100-sxm"), ("H100 SXM5", "h100-sxm"), ("NVIDIA H100 80GB HBM3", "h100-sxm"),
    ("H100 PCIe", "h100-pcie"), ("h100-pcie", "h100-pcie"),
    ("A100-SXM4-80GB", "a100-80g"), ("NVIDIA A100-SXM4-80GB", "a100-80g"), ("a100-80gb-sxm", "a100-80g"),
    ("A100 80GB SXM", "a100-80g"),
    ("910B", "ascend-910b"), ("Ascend910B", "ascend-910b"), ("Ascend 910B", "ascend-910b"),
    ("Ascend 910C", "ascend-910c"), ("910C", "ascend-910c"),
    ("4090", "rtx-4090"), ("RTX 4090", "rtx-4090"), ("NVIDIA GeForce RTX 4090", "rtx-4090"),
    ("L40S", "l40s"), ("L4", "l4"), ("MI300X", "mi300x"), ("AMD Instinct MI300X", "mi300x"),
    ("Gaudi 3", "gaudi3"), ("Intel Gaudi 3", "gaudi3"),
    # Kubernetes GPU feature discovery, nvidia-smi, SkyPilot, npu-smi and hl-smi spellings
    ("NVIDIA-H100-80GB-HBM3", "h100-sxm"), ("NVIDIA-A100-SXM4-40GB", "a100-40g"), ("Tesla T4", "t4"),
    ("Tesla V100-SXM2-32GB", "v100-32g"), ("A100-80GB", "a100-80g"), ("RTX4090", "rtx-4090"),
    ("910B3", "ascend-910b"), ("HL-225", "gaudi2"), ("h100_sxm", "h100-sxm"), ("  l40s ", "l40s"),
]


@pytest.mark.parametrize(("name", "gpu_id"), ISSUE_NAMES)
def test_every_name_of_the_issue_resolves_to_one_entry(name: str, gpu_id: str) -> None:
    assert CAT.resolve_gpu(name).id == gpu_id


@pytest.mark.parametrize("name", ["H100", "h100", "NVIDIA H100 80GB HBM3"])
def test_a_name_without_the_form_factor_says_what_it_assumed(name: str) -> None:
    hit = CAT.resolve_gpu(name)
    assert hit.assumed and "SXM5" in hit.assumed and hit.note and hit.note.startswith(f"`{hit.alias}` read as h100-sxm")


@pytest.mark.parametrize("name", ["H100 SXM5", "H100 PCIe", "a100-80gb-sxm", "910B", "L40S"])
def test_a_name_that_says_it_assumes_nothing(name: str) -> None:
    assert CAT.resolve_gpu(name).assumed is None


def test_truly_ambiguous_names_list_the_choices() -> None:
    with pytest.raises(GpuNameError) as info:
        CAT.resolve_gpu("A100")
    assert info.value.choices == ("a100-40g", "a100-80g", "a100-pcie-40g", "a100-pcie-80g")
    assert "ambiguous" in info.value.message and "a100-pcie-80g" in info.value.hint
    with pytest.raises(GpuNameError, match="ambiguous"):
        CAT.resolve_gpu("Gaudi")


@pytest.mark.parametrize(("typo", "expected"), [("H10", "h100-sxm"), ("rtx4080", "rtx-4090"), ("MI300", "mi300x"),
                                                ("asend 910b", "ascend-910b")])
def test_unknown_names_get_the_closest_matches(typo: str, expected: str) -> None:
    with pytest.raises(GpuNameError) as info:
        CAT.resolve_gpu(typo)
    assert info.value.message == f"unknown GPU `{typo}`"
    assert expected in info.value.choices and info.value.hint.startswith("did you mean")


def test_the_table_and_the_bundled_catalog_hold_the_same_ids() -> None:
    assert set(BY_ID) == set(CAT.gpus)
    assert len(BY_ID) == len(TABLE)


def test_no_alias_of_the_table_is_claimed_by_two_entries() -> None:
    owners: dict[str, set[str]] = {}
    for e in TABLE:
        for alias in (e.id, *e.aliases, *(n for n in (e.smi, e.k8s) if n)):
            owners.setdefault(name_key(alias), set()).add(e.id)
    assert {k: v for k, v in owners.items() if len(v) > 1} == {}


def test_every_alias_and_driver_name_resolves_to_its_entry() -> None:
    index = NameIndex()
    for e in TABLE:
        for alias in (*e.aliases, *(n for n in (e.smi, e.k8s) if n)):
            assert index.resolve(alias).id == e.id, alias


@pytest.mark.parametrize(("reported", "gpu_id"), [
    ("AMD Instinct MI300X OAM AC", "mi300x"), ("NVIDIA H100 80GB HBM3", "h100-sxm"),
    ("NVIDIA A800-SXM4-80GB", "a800-80g"),
    ("Ascend910B2", "ascend-910b"), ("HL-325L", "gaudi3"), ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"),
])
def test_driver_reported_names_match_for_probe_and_audit(reported: str, gpu_id: str) -> None:
    spec = CAT.match_gpu(reported)
    assert spec is not None and spec.id == gpu_id


def test_driver_names_that_fit_no_entry_or_several_match_nothing() -> None:
    assert CAT.match_gpu("Matrox G200eW") is None
    assert CAT.match_gpu("AMD Instinct MI250X / MI250") is None  # two parts in one name: no guess


def test_exporters_get_skypilot_and_kubernetes_names() -> None:
    assert k8s_product("h100-sxm") == "NVIDIA-H100-80GB-HBM3"
    assert k8s_product("a100-80g") == "NVIDIA-A100-SXM4-80GB"
    assert k8s_product("mi300x") is None  # GPU feature discovery is NVIDIA's
    assert skypilot_name("a100-80g") == "A100-80GB" and skypilot_name("nope") is None
    # the exporters' own table (gpuplan.export.gpus) agrees where both name a GPU
    assert {g: (k8s_product(g), skypilot_name(g)) for g in EXPORT_NAMES} == {
        g: (n.gfd, n.skypilot) for g, n in EXPORT_NAMES.items()}


def test_a_users_catalog_gpu_resolves_by_id_name_and_match(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("version: 1\ngpus:\n  - {id: my-npu, name: Acme NPU X1, vendor: other, memory_gb: 32, hbm_tbs: 1,"
                 " bf16_tflops: 100, gpu_gpu_gbs: 64, interconnect: pcie, match: [ACME-X1], source: vendor,"
                 " as_of: 2026-11}\n")
    cat = load_catalog(f)
    assert cat.resolve_gpu("my-npu").id == cat.resolve_gpu("acme npu x1").id == "my-npu"
    spec = cat.match_gpu("ACME-X1 rev2")
    assert spec is not None and spec.id == "my-npu"


SCENARIO = """version: 1
currency: USD
offers:
  - {{id: o1, gpu: "{offer_gpu}", mode: container, price: {{amount: 3, per: gpu-hour}}}}
workloads:
  - {{id: w, kind: training, gpu: {workload_gpu}, gpus: 8, hours_per_day: 8, duration: 30d}}
"""


def test_a_scenario_takes_gpus_as_people_write_them() -> None:
    sc = scenario_from_text(SCENARIO.format(offer_gpu="NVIDIA H100 80GB HBM3", workload_gpu="[H100, h100-sxm]"))
    assert sc.offers[0].gpu == "h100-sxm"
    assert sc.workloads[0].gpus_allowed == ("h100-sxm",)
    assert any("SXM5" in d for d in sc.workloads[0].defaults_used)
    assert any("SXM5" in d for d in sc.offers[0].defaults_used)


def test_a_scenario_with_an_unknown_gpu_names_the_field_and_the_closest() -> None:
    with pytest.raises(ScenarioError) as info:
        scenario_from_text(SCENARIO.format(offer_gpu="h100-sxm", workload_gpu="[h100-sxm, H10O]"), name="s.yaml")
    err = info.value
    assert err.field == "workloads[0].gpu[1]" and err.line == 6 and err.file == "s.yaml"
    assert "unknown GPU `H10O`" in err.message and err.hint and "h100-sxm" in err.hint


def test_a_scenario_with_an_ambiguous_gpu_lists_the_choices() -> None:
    with pytest.raises(ScenarioError) as info:
        scenario_from_text(SCENARIO.format(offer_gpu="A100", workload_gpu="a100-80g"), name="s.yaml")
    assert info.value.field == "offers[0].gpu" and "ambiguous" in info.value.message
    assert info.value.hint and "a100-40g" in info.value.hint


def test_catalog_gpus_shows_what_a_name_resolves_to(capsys: pytest.CaptureFixture[str]) -> None:
    from gpuplan.cli import main

    assert main(["catalog", "gpus", "--gpu", "NVIDIA GeForce RTX 4090", "-o", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == ["rtx-4090"]
    assert rows[0]["resolved_from"] == {"name": "NVIDIA GeForce RTX 4090", "alias": "RTX 4090", "assumed": None}
    assert rows[0]["names"]["k8s"] == "NVIDIA-GeForce-RTX-4090"
    assert main(["catalog", "gpus", "--gpu", "H100"]) == 0
    assert "read as h100-sxm" in " ".join(capsys.readouterr().out.split())
    assert main(["catalog", "offers", "--gpu", "H10"]) == 2
    assert "did you mean h100-sxm" in capsys.readouterr().err


def test_speed_keys_may_use_the_names_of_the_gpu_list() -> None:
    text = SCENARIO.format(offer_gpu="A100-SXM4-80GB", workload_gpu="[H100, A100 80GB SXM]").replace(
        "duration: 30d}", "duration: 30d, speed: {a100-80gb-sxm: 0.4}}")
    extra = "  - {id: o0, gpu: H100, mode: container, price: {amount: 4, per: gpu-hour}}\n"
    text = text.replace("offers:\n", "offers:\n" + extra)
    w = scenario_from_text(text).workloads[0]
    assert w.gpus_allowed == ("h100-sxm", "a100-80g") and w.speed == (("a100-80g", 0.4),)
