"""Choices and thresholds that more than one module uses, defined once.

Thresholds with a published basis live in the catalog (`catalog/data/defaults.yaml`, with their
source); this module holds the names of choices and the fallbacks used when no catalog is at hand.
"""

from __future__ import annotations

from typing import Final, Literal

Queueing = Literal["strict-fifo", "best-effort-fifo"]
# Kueue's two queueing strategies (StrictFIFO, BestEffortFIFO), in the order `--help` lists them.
QUEUEINGS: Final[tuple[Queueing, ...]] = ("strict-fifo", "best-effort-fifo")
# Kueue's own default for a ClusterQueue is BestEffortFIFO; plan, simulate and export share it.
DEFAULT_QUEUEING: Final[Queueing] = "best-effort-fifo"

Packing = Literal["gpu", "node"]
PACKINGS: Final[tuple[Packing, ...]] = ("gpu", "node")
