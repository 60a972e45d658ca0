"""Record the NVML answers a probe gets on a real GPU machine, and replay them in tests.

`RecordingNVML(pynvml)` stands in for the NVML module: every `nvml*` call `probe_nvidia` makes goes to
the real module and is written down (arguments, answer or error), as is every `NVML_*` constant read.
`ReplayNVML(record)` answers the same calls from that record, so a test runs the real probe code on
what a real driver said, with no GPU. Device handles are recorded as labels ("0", "0/mig1"), ctypes
structures as their fields, bytes as text.

    python -m gpuplan.probe.record > nvml-record.json   # on the GPU machine (needs nvidia-ml-py)
"""

from __future__ import annotations

import ctypes
import json
import sys
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from gpuplan.probe.nvidia import load_pynvml, probe_nvidia

RECORD_SCHEMA = "gpuplan.nvml-record/1"


class ReplayError(Exception):
    """An NVML error as recorded (`kind` is the real exception's class), or a call not recorded."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _Handle:
    def __init__(self, label: str) -> None:
        self.label = label

    def __repr__(self) -> str:
        return f"<handle {self.label}>"


def _handle_label(name: str, args: tuple[Any, ...], n_seen: int) -> str | None:
    if name == "nvmlDeviceGetHandleByIndex":
        return str(args[0])
    if name == "nvmlDeviceGetMigDeviceHandleByIndex":
        parent = args[0].label if isinstance(args[0], _Handle) else "?"
        return f"{parent}/mig{args[1]}"
    if name.startswith("nvmlDeviceGetHandleBy"):
        return f"h{n_seen}"
    return None


class RecordingNVML:
    """Passes every call to the real NVML module and records it."""

    def __init__(self, nvml: Any) -> None:
        self._nvml = nvml
        self._handles: dict[int, tuple[_Handle, Any]] = {}  # id(real handle) -> (label, real handle)
        self.calls: list[dict[str, Any]] = []
        self.constants: dict[str, Any] = {}

    def _encode(self, value: Any) -> Any:
        if value is None or isinstance(value, bool | int | float | str):
            return value
        if isinstance(value, bytes):
            return {"__bytes__": value.decode("utf-8", errors="replace")}
        if isinstance(value, list | tuple):
            return [self._encode(v) for v in value]
        if id(value) in self._handles:
            return {"__handle__": self._handles[id(value)][0].label}
        if isinstance(value, ctypes.Array):
            return [self._encode(v) for v in value]
        if isinstance(value, ctypes.Structure):
            fields = [f[0] for f in getattr(value, "_fields_", [])]
            return {"__struct__": {f: self._encode(getattr(value, f)) for f in fields}}
        if hasattr(value, "__dict__"):
            return {"__struct__": {k: self._encode(v) for k, v in vars(value).items() if not k.startswith("_")}}
        return {"__repr__": repr(value)}

    def _wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            real_args = tuple(self._handles[a.label_id][1] if isinstance(a, _RecHandle) else a for a in args)
            entry: dict[str, Any] = {"fn": name, "args": [self._encode_arg(a) for a in args]}
            self.calls.append(entry)
            try:
                result = fn(*real_args)
            except Exception as exc:
                entry["error"] = {"kind": type(exc).__name__, "message": str(exc)}
                raise
            label = _handle_label(name, args, len(self._handles))
            if label is not None:
                handle = _RecHandle(label, id(result))
                self._handles[id(result)] = (handle, result)
                entry["result"] = {"__handle__": label}
                return handle
            entry["result"] = self._encode(result)
            return result

        return call

    def _encode_arg(self, value: Any) -> Any:
        if isinstance(value, _RecHandle):
            return {"__handle__": value.label}
        return self._encode(value)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._nvml, name)
        if name.startswith("nvml") and callable(value):
            return self._wrap(name, value)
        if name.startswith("NVML_"):
            self.constants[name] = self._encode(value)
        return value

    def record(self, result: Any = None, **meta: Any) -> dict[str, Any]:
        return {"schema": RECORD_SCHEMA, **meta, "constants": self.constants, "calls": self.calls,
                "probe_result": result}


class _RecHandle(_Handle):
    def __init__(self, label: str, label_id: int) -> None:
        super().__init__(label)
        self.label_id = label_id


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if "__bytes__" in value:
            return str(value["__bytes__"]).encode()
        if "__handle__" in value:
            return _Handle(str(value["__handle__"]))
        if "__struct__" in value:
            return SimpleNamespace(**{k: _decode(v) for k, v in value["__struct__"].items()})
        if "__repr__" in value:
            return value["__repr__"]
    return value


def _key(name: str, args: Any) -> str:
    return name + json.dumps(args, sort_keys=True)


class ReplayNVML:
    """Answers NVML calls from a record (`RecordingNVML.record()`); a call not in it raises ReplayError
    and is listed in `missed`."""

    NVMLError = ReplayError

    def __init__(self, record: dict[str, Any]) -> None:
        if record.get("schema") != RECORD_SCHEMA:
            raise ValueError(f"not an NVML record: schema {record.get('schema')!r}, expected {RECORD_SCHEMA!r}")
        self._constants: dict[str, Any] = dict(record.get("constants") or {})
        self._answers: dict[str, dict[str, Any]] = {}
        for call in record.get("calls") or []:
            self._answers[_key(call["fn"], call["args"])] = call
        self.missed: list[str] = []

    def _arg(self, value: Any) -> Any:
        if isinstance(value, _Handle):
            return {"__handle__": value.label}
        if isinstance(value, tuple):
            return [self._arg(v) for v in value]
        return value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("NVML_"):
            if name not in self._constants:
                raise AttributeError(name)
            return self._constants[name]
        if not name.startswith("nvml"):
            raise AttributeError(name)

        def call(*args: Any) -> Any:
            key = _key(name, [self._arg(a) for a in args])
            answer = self._answers.get(key)
            if answer is None:
                self.missed.append(key)
                raise ReplayError("NotRecorded", f"{key} was not recorded")
            if "error" in answer:
                raise ReplayError(answer["error"]["kind"], answer["error"]["message"])
            return _decode(answer["result"])

        return call


def main() -> int:
    nvml = load_pynvml()
    if nvml is None:
        print("nvidia-ml-py (pynvml) is not installed", file=sys.stderr)
        return 1
    rec = RecordingNVML(nvml)
    result = probe_nvidia(rec)
    from importlib.metadata import PackageNotFoundError, version

    try:
        nvml_py = version("nvidia-ml-py")
    except PackageNotFoundError:
        nvml_py = None
    json.dump(rec.record(result, nvidia_ml_py=nvml_py), sys.stdout, indent=1, default=repr)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
