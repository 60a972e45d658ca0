"""Recording NVML answers and replaying them (gpuplan.probe.record)."""

from __future__ import annotations

import ctypes
import json
from types import SimpleNamespace
from typing import Any

import pytest
from _probe_fakes import FakeNVML, a100_mig_node, h100_node, pcie_pair_node

from gpuplan.probe.nvidia import probe_nvidia
from gpuplan.probe.record import RECORD_SCHEMA, RecordingNVML, ReplayError, ReplayNVML


@pytest.mark.parametrize("make", [h100_node, a100_mig_node, pcie_pair_node])
def test_record_then_replay_gives_the_same_probe(make: Any) -> None:
    rec = RecordingNVML(make())
    first = probe_nvidia(rec)
    record = json.loads(json.dumps(rec.record(first)))  # through JSON, as the file is
    assert record["schema"] == RECORD_SCHEMA and record["probe_result"] == first
    replay = ReplayNVML(record)
    assert probe_nvidia(replay) == first
    assert replay.missed == []


def test_errors_handles_bytes_and_structures_are_recorded() -> None:
    rec = RecordingNVML(a100_mig_node())
    probe_nvidia(rec)
    calls = {(c["fn"], json.dumps(c["args"])): c for c in rec.calls}
    name = calls[("nvmlDeviceGetName", '[{"__handle__": "0"}]')]["result"]
    assert name == {"__bytes__": "NVIDIA A100-SXM4-40GB"}  # old pynvml answers bytes
    mig = calls[("nvmlDeviceGetMigDeviceHandleByIndex", '[{"__handle__": "0"}, 1]')]
    assert mig["result"] == {"__handle__": "0/mig1"}
    mem = calls[("nvmlDeviceGetMemoryInfo", '[{"__handle__": "0/mig1"}]')]["result"]
    assert mem == {"__struct__": {"total": 9856 * 1024**2, "used": 0, "free": 0}}
    missing = calls[("nvmlDeviceGetNvLinkState", '[{"__handle__": "1"}, 12]')]
    assert missing["error"] == {"kind": "FakeNVMLError", "message": "Not Supported"}
    assert rec.constants["NVML_DEVICE_MIG_ENABLE"] == 1


def test_ctypes_structures_are_recorded_by_field() -> None:
    class Memory(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong)]

    class Nvml:
        def nvmlDeviceGetMemoryInfo(self, h: Any) -> Memory:
            return Memory(total=150754820096, free=1)

    rec = RecordingNVML(Nvml())
    rec.nvmlDeviceGetMemoryInfo(0)
    assert rec.calls[0]["result"] == {"__struct__": {"total": 150754820096, "free": 1}}
    replayed = ReplayNVML(rec.record()).nvmlDeviceGetMemoryInfo(0)
    assert replayed == SimpleNamespace(total=150754820096, free=1)


def test_replay_refuses_what_was_not_recorded() -> None:
    replay = ReplayNVML(RecordingNVML(FakeNVML([])).record())
    with pytest.raises(ReplayError, match="was not recorded"):
        replay.nvmlDeviceGetCount()
    assert replay.missed == ["nvmlDeviceGetCount[]"]
    with pytest.raises(AttributeError):
        _ = replay.NVML_CLOCK_SM  # a constant never read: the probe falls back to its default
    with pytest.raises(ValueError, match="not an NVML record"):
        ReplayNVML({"schema": "gpuplan.probe/1"})


def test_recorded_init_failure_replays() -> None:
    rec = RecordingNVML(FakeNVML([], init_error="Driver Not Loaded"))
    res = probe_nvidia(rec)
    assert res["available"] is False
    assert probe_nvidia(ReplayNVML(rec.record(res))) == res
