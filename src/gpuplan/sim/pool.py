"""The reserved pool's rules, without numpy: the pool sizes R a sweep names, the checks on R,
queueing and packing, and the pool's layout in nodes. Used by the replay (`sim.replay`) and by the
option checks, which need no numpy.
"""

from __future__ import annotations

from gpuplan.constants import PACKINGS, QUEUEINGS
from gpuplan.errors import UsageError

UNITS_PER_GPU = 1000
"""GPUs are counted in thousandths of a card, so that pool arithmetic is exact."""


def check_level(reserved: int, queueing: str, packing: str, gpus_per_node: int) -> None:
    """Exit 2 (`UsageError`, naming the flag) unless a replay can run R GPUs with this queueing and packing."""
    if queueing not in QUEUEINGS:
        raise UsageError(
            f"unknown queueing {queueing!r}", field="--queueing", hint=f"use {' or '.join(QUEUEINGS)}."
        )
    if packing not in PACKINGS:
        raise UsageError(
            f"unknown packing {packing!r}", field="--packing", hint=f"use {' or '.join(PACKINGS)}."
        )
    if reserved < 0:
        raise UsageError(f"reserved GPUs must be >= 0, got {reserved}", field="--reserved")
    if packing == "node":
        if gpus_per_node < 1:
            raise UsageError(f"--gpus-per-node must be >= 1, got {gpus_per_node}", field="--gpus-per-node")
        if reserved % gpus_per_node:
            raise UsageError(
                f"with --packing node the pool is whole nodes: {reserved} is not a multiple of "
                f"{gpus_per_node}",
                field="--reserved",
                hint=f"use multiples of {gpus_per_node}, e.g. 0:64:{gpus_per_node}.",
            )


def layout(reserved: int, packing: str, gpus_per_node: int) -> tuple[int, int]:
    """(number of nodes, units per node). Packing `gpu` is one node holding the whole pool."""
    if packing == "gpu":
        return 1, reserved * UNITS_PER_GPU
    return reserved // gpus_per_node, gpus_per_node * UNITS_PER_GPU


def parse_reserved(text: str) -> list[int]:
    """`16`, `0,8,16` or `A:B:STEP` (B included), or a comma list mixing both."""
    out: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        try:
            if ":" in part:
                pieces = [int(x) for x in part.split(":")]
                if len(pieces) != 3 or pieces[2] <= 0 or pieces[1] < pieces[0]:
                    raise ValueError
                out.extend(range(pieces[0], pieces[1] + 1, pieces[2]))
            else:
                out.append(int(part))
        except ValueError:
            raise UsageError(
                f"expected a whole number of GPUs, a list such as 0,8,16, or a range A:B:STEP, got {part!r}",
                field="--reserved",
                hint="for example --reserved 0:64:8 replays R = 0, 8, ..., 64.",
            ) from None
    if any(r < 0 for r in out):
        raise UsageError("reserved GPUs must be >= 0", field="--reserved")
    return out
