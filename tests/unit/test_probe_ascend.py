"""`npu-smi info` parsing on recorded output."""

from __future__ import annotations

from _probe_fakes import GOLDEN

from gpuplan.inputs.catalog import load_catalog
from gpuplan.probe.ascend import parse_npu_smi_info, probe_ascend

TEXT = (GOLDEN / "npu-smi-info-910b.txt").read_text()


def test_parse_recorded_910b_node() -> None:
    parsed = parse_npu_smi_info(TEXT)
    assert parsed["version"] == "23.0.rc3"
    npus = parsed["npus"]
    assert [n["npu"] for n in npus] == list(range(8))
    assert {n["name"] for n in npus} == {"910B3"}
    assert npus[0]["bus_id"] == "0000:C1:00.0"
    assert (npus[4]["hbm_used_mb"], npus[4]["hbm_total_mb"], npus[4]["aicore_pct"]) == (42210, 65536, 12.0)
    assert npus[6]["health"] == "Warning"
    assert npus[4]["processes"] == [{"pid": 2187344, "name": "python3.9", "memory_mb": 38865}]
    assert all(n["processes"] == [] for i, n in enumerate(npus) if i != 4)


def test_probe_ascend_maps_to_catalog() -> None:
    calls: list[list[str]] = []

    def runner(argv: list[str]) -> str:
        calls.append(argv)
        return TEXT

    res = probe_ascend(runner, load_catalog().match_gpu)
    assert calls == [["npu-smi", "info"]]
    assert res["available"] is True and len(res["gpus"]) == 8
    g = res["gpus"][0]
    assert (g["model"], g["catalog_id"], g["memory_gb"], g["vendor"]) == ("Ascend 910B3", "ascend-910b", 64.0,
                                                                           "huawei")


def test_absent_or_garbled_npu_smi() -> None:
    assert probe_ascend(lambda argv: None)["available"] is False
    res = probe_ascend(lambda argv: "npu-smi: command failed\n")
    assert res["available"] is False and res["gpus"] == []
    # a truncated table keeps the NPUs whose both rows survived
    cut = "\n".join(TEXT.splitlines()[:10])
    assert len(parse_npu_smi_info(cut)["npus"]) == 1
