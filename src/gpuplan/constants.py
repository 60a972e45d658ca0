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

# GPU utilisation thresholds (ratios 0..1), one definition each.
# The 70% rule (seed article): bare metal's performance edge pays only when utilisation stays at or above
# 70%. The catalog holds it with its source (defaults.yaml `utilization_threshold`, which advise reads);
# this is the same figure for code that runs without a catalog (the telemetry audit), and a test keeps
# the two equal. The audit's busy samples (u >= it), the starved class's ceiling (mean < it) and the
# fleet's 70%-rule verdict are all this one threshold.
UTILIZATION_THRESHOLD: Final = 0.70
# Idle: a sample (or a GPU's mean) below 5% does no useful work; it stays above zero so that the
# driver's and monitoring's own background activity on an unused GPU is not read as work.
IDLE_UTILIZATION_BELOW: Final = 0.05
# A GPU is classed busy on its mean at 80%, above the 70% rule: a margin so that a GPU hovering at the
# rule is judged by its pattern (starved, mixed, partial) instead of being waved through as busy.
BUSY_CLASS_MEAN: Final = 0.80

# A service replica in a container starts about 5 minutes before it serves (image pull on a warm node,
# model load and health checks: Kubernetes pod start-up with a cached image plus a warm-up). Elastic
# capacity that follows a daily profile pays that start-up on every step up. An estimate, as of 2026-12.
CONTAINER_STARTUP_HOURS: Final = 5.0 / 60.0
