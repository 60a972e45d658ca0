"""Types of the C extension built from _ckernel.c (see there and gpuplan.sim.replay)."""

from typing import Any

def replay(
    submit: Any,
    duration: Any,
    units: Any,
    nodes: int,
    node_cap: int,
    wait_s: float,
    best_effort: bool,
    start: Any,
    burst: Any,
    spot: Any = None,
) -> None: ...
def read_columns(
    path: str, names: tuple[str, ...], max_rows: int = -1, window: int = 0
) -> tuple[int, list[memoryview] | None] | None: ...
def prepare_jobs(
    kind: int, columns: list[memoryview]
) -> tuple[tuple[int, int, int, int], float, memoryview, memoryview, memoryview, memoryview] | None: ...
def summary(
    submit: Any, duration: Any, gpus: Any, start: Any, burst: Any, slowdown: float
) -> tuple[float, float, float, float, float, float, float, float, float, int]: ...
def zeros(nbytes: int) -> bytearray: ...
