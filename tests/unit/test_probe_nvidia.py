"""NVML probing through an injected fake module with recorded answers."""

from __future__ import annotations

from _probe_fakes import FakeNVML, a100_mig_node, h100_node, pcie_pair_node

from gpuplan.inputs.catalog import load_catalog
from gpuplan.probe.nvidia import _cuda_version, probe_nvidia

MATCH = load_catalog().match_gpu


def test_h100_nvlink_node() -> None:
    nvml = h100_node()
    res = probe_nvidia(nvml, MATCH)
    assert res["available"] and res["reason"] is None
    gpus = res["gpus"]
    assert len(gpus) == 8
    g = gpus[0]
    assert g["model"] == "NVIDIA H100 80GB HBM3" and g["catalog_id"] == "h100-sxm"
    assert g["memory_gb"] == 79.6
    assert g["driver_version"] == "550.54.15" and g["cuda_version"] == "12.4"
    assert g["nvlink"] == {"links": 18, "active": 18, "version": 4}
    assert g["pcie"] == {"gen": 5, "width": 16, "max_gen": 5, "max_width": 16}
    assert g["ecc"] is True and g["clocks_mhz"]["sm_max"] == 1980
    assert g["mig"] == {"enabled": False, "instances": []}
    assert g["p2p"] == {str(j): "NV" for j in range(1, 8)}
    assert [len(x["processes"]) for x in gpus] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert gpus[3]["processes"][0] == {"pid": 48213, "memory_gb": 12.0}
    assert nvml.initialised is False  # shut down after probing


def test_a100_mig_node() -> None:
    gpus = probe_nvidia(a100_mig_node(), MATCH)["gpus"]
    assert [g["catalog_id"] for g in gpus] == ["a100-40g", "a100-40g"]
    mig = gpus[0]["mig"]
    assert mig["enabled"] is True
    assert [i["name"].rsplit(" ", 1)[-1] for i in mig["instances"]] == ["3g.20gb", "2g.10gb", "1g.5gb"]
    assert [i["memory_gb"] for i in mig["instances"]] == [19.5, 9.6, 4.8]
    assert gpus[1]["mig"] == {"enabled": False, "instances": []}
    assert gpus[1]["nvlink"] == {"links": 12, "active": 11, "version": 3}
    assert gpus[0]["cuda_version"] == "12.2"


def test_pcie_node_reports_topology_not_nvlink() -> None:
    gpus = probe_nvidia(pcie_pair_node(), MATCH)["gpus"]
    assert gpus[0]["nvlink"] == {"links": 0, "active": 0, "version": None}
    assert gpus[0]["p2p"] == {"1": "PXB"} and gpus[1]["p2p"] == {"0": "PXB"}
    assert gpus[0]["mig"] is None and gpus[0]["clocks_mhz"]["sm"] is None  # unsupported -> None


def test_no_pynvml_and_init_failure() -> None:
    assert probe_nvidia(None) == {"available": False, "reason": "nvidia-ml-py (pynvml) is not installed",
                                  "gpus": []}
    res = probe_nvidia(FakeNVML([], init_error="Driver Not Loaded"))
    assert res["available"] is False and "Driver Not Loaded" in res["reason"]


def test_cuda_version_decoding() -> None:
    assert _cuda_version(12040) == "12.4"
    assert _cuda_version(11080) == "11.8"
    assert _cuda_version(None) is None and _cuda_version(0) is None
