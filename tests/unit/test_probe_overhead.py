"""measured_overhead(): the mapping from a probe document to compare's overheads."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from _probe_fakes import FakeBackend, container_on_vm_tree, h100_node
from hypothesis import given
from hypothesis import strategies as st

from gpuplan.contracts.probe_document import to_json
from gpuplan.errors import ProbeError
from gpuplan.inputs.catalog import load_catalog
from gpuplan.probe import probe_node
from gpuplan.probe.overhead import REFERENCE_MATMUL_EFFICIENCY, measured_overhead

CAT = load_catalog()


def _doc(tmp_path: Path, **backend: float) -> dict:  # type: ignore[type-arg]
    rep = probe_node(container_on_vm_tree(tmp_path), nvml=h100_node(), bench=True,
                     bench_backend=FakeBackend(name="NVIDIA H100 80GB HBM3", **backend))
    return to_json(rep)


def test_mapping_from_matmul_and_busbw(tmp_path: Path) -> None:
    doc = _doc(tmp_path, tflops=0.70 * 989, busbw_gbs=360.0, spread=0.2)
    out = measured_overhead(doc, CAT)
    # the figure is the median iteration: with times spread 0-20% over the best, the median is 1.1x
    # the best, so efficiency = 0.70 / 1.1 = 0.636; vs reference 0.75 -> 1 - 0.636/0.75 = 15.2% lost
    assert doc["bench"]["results"]["matmul_bf16"]["value"] == pytest.approx(0.70 * 989 / 1.1, abs=0.01)
    assert out["compute"] == pytest.approx(1 - (0.70 / 1.1) / REFERENCE_MATMUL_EFFICIENCY, abs=1e-3)
    assert out["interconnect"] == pytest.approx(360.0 / 1.1 / 450.0, abs=1e-3)
    lo, hi = out["jitter"]
    assert 0 < lo < hi <= 0.2 + 1e-9
    assert out["evidence"][0] == "node deployment: container-on-vm"
    assert any("intra-node only" in e for e in out["evidence"])


def test_caps_and_bounds(tmp_path: Path) -> None:
    out = measured_overhead(_doc(tmp_path, tflops=900.0, busbw_gbs=480.0), CAT)
    assert out["compute"] == 0.0 and out["interconnect"] == 1.0
    assert out["jitter"] == [0.0, 0.0]


def test_not_measured_gives_none(tmp_path: Path) -> None:
    doc = to_json(probe_node(container_on_vm_tree(tmp_path), nvml=None))
    out = measured_overhead(doc, CAT)
    assert (out["compute"], out["interconnect"], out["jitter"]) == (None, None, None)
    assert "without --bench" in out["evidence"][1]
    single = _doc(tmp_path / "one")
    single["bench"]["results"]["allreduce_busbw"] = None
    out = measured_overhead(single, CAT)
    assert out["interconnect"] is None and out["compute"] is not None


def test_unknown_gpu_has_no_spec(tmp_path: Path) -> None:
    doc = _doc(tmp_path)
    doc["bench"]["catalog_id"] = None
    doc["bench"]["device"] = "Mystery Accelerator"
    out = measured_overhead(doc, CAT)
    assert out["compute"] is None and "not in the catalog" in out["evidence"][-1]


@pytest.mark.parametrize(("doc", "field"), [
    ([], "(root)"), ({"schema": "gpuplan.telemetry/1"}, "schema"), ({}, "schema"),
    ({"schema": "gpuplan.probe/1", "host": {}}, "gpus"),
    ({"schema": "gpuplan.probe/1", "host": {}, "gpus": [], "bench": 3}, "bench"),
])
def test_not_a_probe_document(doc: object, field: str) -> None:
    with pytest.raises(ProbeError) as exc:
        measured_overhead(doc, CAT)  # type: ignore[arg-type]
    assert exc.value.field == field and "gpuplan probe" in (exc.value.hint or "")


@given(st.floats(10.0, 2000.0), st.floats(1.0, 1000.0))
def test_overheads_stay_in_range(tflops: float, busbw: float) -> None:
    base = _BASE
    doc = copy.deepcopy(base)
    doc["bench"]["results"]["matmul_bf16"]["value"] = tflops
    doc["bench"]["results"]["allreduce_busbw"]["value"] = busbw
    out = measured_overhead(doc, CAT)
    assert 0.0 <= out["compute"] <= 0.9
    assert 0.0 < out["interconnect"] <= 1.0


def _base() -> dict:  # type: ignore[type-arg]
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        return _doc(Path(d))


_BASE = _base()
