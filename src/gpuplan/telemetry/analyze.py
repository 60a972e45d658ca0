"""What each GPU really did: utilisation over observed time, its class with evidence, and the money.

Pure: `Samples` (and an optional price) in, `AuditResult` out. The per-GPU sums, gaps and stretches
are folded while reading (`gpuplan.telemetry.stream`); this module turns them into shares, classes
and money.

Definitions (also in docs/audit.md and `--explain`):
- A sample stands for the time until the next sample of the same GPU. If that interval is longer than
  `max(GAP_FACTOR x the GPU's median interval, MIN_GAP_S)` it is a gap: the sample counts for one
  median interval only, and the rest is reported as gap time, not counted as idle.
- mean_util = sum(w * u) / sum(w) with w the time each sample stands for (time-weighted).
- idle: u < 0.05; busy: u >= 0.70; partial: in between. Shares are of observed time.
- Classes, first rule that holds wins: busy (mean >= 0.80); idle (mean < 0.05); starved (mean < 0.70
  and busy / near-idle (u < 0.20) stretches alternate within minutes: at least STARVED_MIN_SWITCHES
  switches, at least STARVED_SWITCHES_PER_HOUR an hour, median stretch <= STARVED_MAX_RUN_MIN minutes);
  mixed (a busy stretch and a near-idle stretch each at least MIXED_MIN_RUN_H long: a job started or
  ended); partial (none of these: a steady, partial load).
- Timeline (the report's heat map): per GPU, bins of clock hours from the fleet's first to its last
  observed hour (all GPUs share start and length), each the time-weighted mean over the observed
  time in it (sum(w * u) / sum(w), an interval counted in the hour it starts), None where nothing
  was observed (a gap is not idle). Spans of more than TIMELINE_MAX_BINS hours take wider bins
  (TIMELINE_BIN_HOURS, then doubling weeks) so that no GPU has more than TIMELINE_MAX_BINS.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuplan.telemetry.rules import (
    BUSY_FROM,
    CLASS_BUSY_MEAN,
    CLASS_IDLE_MEAN,
    CLASSES,
    GAP_FACTOR,
    IDLE_BELOW,
    MIN_GAP_S,
    MIXED_MIN_RUN_H,
    NEAR_IDLE_BELOW,
    RULE_70,
    STARVED_MAX_MEAN,
    STARVED_MAX_RUN_MIN,
    STARVED_MIN_SWITCHES,
    STARVED_SWITCHES_PER_HOUR,
    rules,
)
from gpuplan.telemetry.samples import Samples

__all__ = ["BUSY_FROM", "CLASSES", "GAP_FACTOR", "IDLE_BELOW", "MIN_GAP_S", "RULE_70", "AuditResult", "Price",
           "analyze", "rules", "timeline_bins"]

TIMELINE_MAX_BINS = 24 * 60
TIMELINE_BIN_HOURS = (1, 2, 4, 6, 12, 24, 48, 168)  # then 2, 4, 8, ... weeks


@dataclass(frozen=True)
class Price:
    """Money per GPU-hour; low/high when the offer gives a range."""

    per_gpu_hour: float
    currency: str
    low: float | None = None
    high: float | None = None
    source: str = ""


@dataclass
class GpuStat:
    node: str
    gpu: str
    model: str | None
    samples: int
    observed_hours: float
    gap_hours: float
    gaps: int
    mean_util: float
    idle_share: float
    busy_share: float
    cls: str
    evidence: dict[str, Any]
    interval_s: float
    first_ms: int
    last_ms: int
    busy_hours: float  # sum(w * u): GPU-hours of kernel activity
    idle_hours: float  # time with u < 0.05
    fed_util: float  # mean utilisation while busy (u >= 0.70): what the GPU does when fed
    timeline: list[float | None] = field(default_factory=list)  # one value per bin (None: no data)
    cost: float | None = None
    idle_cost: float | None = None
    starved_savings: float | None = None


@dataclass
class GroupStat:
    name: str
    gpus: int
    observed_hours: float
    gap_hours: float
    mean_util: float
    idle_share: float
    busy_share: float
    classes: dict[str, int]
    cost: float | None = None
    idle_cost: float | None = None


@dataclass
class AuditResult:
    gpus: list[GpuStat]
    nodes: list[GroupStat]
    fleet: GroupStat
    gpu_hours_busy: float
    price: Price | None
    unused_cost: float | None
    starved_savings: float | None
    rule_70_below: bool
    gpus_below_70: int
    files: list[str]
    rows: int
    bad_rows: int
    bad_by_kind: dict[str, int]
    bad_examples: dict[str, list[str]]
    notes: list[str] = field(default_factory=list)
    timeline_start_ms: int | None = None  # start of the first bin (UTC ms); None: no timeline
    timeline_step_s: int = 3600


def analyze(samples: Samples, price: Price | None = None) -> AuditResult:
    a = samples.agg
    n_keys = len(samples.registry.keys)
    present = a.samples
    obs = a.observed_s
    busy = a.util_s
    idle_t = a.idle_s
    busy_t = a.busy_s
    fed_w = a.fed_s
    gaps_h = a.gap_s / 3600.0
    n_gaps = a.gaps
    first_ms = a.first_ms
    last_ms = a.last_ms
    median = a.interval_s
    runs = _Runs(a.switches, a.median_run_min, a.longest_busy_h, a.longest_idle_h)

    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(obs > 0, busy / obs, 0.0)
        idle_share = np.where(obs > 0, idle_t / obs, 0.0)
        busy_share = np.where(obs > 0, busy_t / obs, 0.0)
        fed = np.where(busy_t > 0, fed_w / np.maximum(busy_t, 1e-12), 0.0)

    tl_start, tl_step_h, tl = _timelines(a.hourly, n_keys)

    stats: list[GpuStat] = []
    for k in range(n_keys):
        if present[k] == 0:
            continue
        node, gpu = samples.registry.keys[k]
        hours = obs[k] / 3600.0
        cls, evidence = _classify(float(mean[k]), hours, runs, k, float(median[k]))
        extras = samples.extras.get(k)
        if extras:
            evidence["other_metrics"] = {m: round(v, 4) for m, v in sorted(extras.items())}
        g = GpuStat(
            node=node,
            gpu=gpu,
            model=samples.registry.models.get(k),
            samples=int(present[k]),
            observed_hours=hours,
            gap_hours=float(gaps_h[k]),
            gaps=int(n_gaps[k]),
            mean_util=float(mean[k]),
            idle_share=float(idle_share[k]),
            busy_share=float(busy_share[k]),
            cls=cls,
            evidence=evidence,
            interval_s=float(median[k]),
            first_ms=int(first_ms[k]),
            last_ms=int(last_ms[k]),
            busy_hours=float(busy[k]) / 3600.0,
            idle_hours=float(idle_t[k]) / 3600.0,
            fed_util=float(fed[k]),
            timeline=[None if np.isnan(v) else float(v) for v in tl[k].tolist()] if tl is not None else [],
        )
        if price is not None:
            g.cost = hours * price.per_gpu_hour
            g.idle_cost = g.idle_hours * price.per_gpu_hour
            if cls == "starved" and g.fed_util > g.mean_util:
                # The same work at the utilisation the GPU reaches when fed takes mean/fed of the hours.
                g.starved_savings = g.cost * (1.0 - g.mean_util / g.fed_util)
            elif cls == "starved":
                g.starved_savings = 0.0
        stats.append(g)
    stats.sort(key=lambda s: (s.node, _gpu_sort(s.gpu)))

    nodes: dict[str, list[GpuStat]] = {}
    for s in stats:
        nodes.setdefault(s.node, []).append(s)
    node_stats = [_group(name, members, price) for name, members in sorted(nodes.items())]
    fleet = _group("fleet", stats, price)
    gpu_hours_busy = sum(s.busy_hours for s in stats)
    unused = None
    savings = None
    if price is not None:
        unused = (fleet.observed_hours - gpu_hours_busy) * price.per_gpu_hour
        savings = sum(s.starved_savings or 0.0 for s in stats)
    return AuditResult(
        gpus=stats,
        nodes=node_stats,
        fleet=fleet,
        gpu_hours_busy=gpu_hours_busy,
        price=price,
        unused_cost=unused,
        starved_savings=savings,
        rule_70_below=bool(stats) and bool(fleet.mean_util < RULE_70),
        gpus_below_70=sum(1 for s in stats if s.mean_util < RULE_70),
        files=list(samples.sources),
        rows=samples.rows,
        bad_rows=samples.bad.total,
        bad_by_kind=samples.bad.by_kind(),
        bad_examples=samples.bad.examples_by_kind(),
        notes=list(samples.notes),
        timeline_start_ms=None if tl_start is None else tl_start * 3_600_000,
        timeline_step_s=tl_step_h * 3600,
    )


def timeline_bins(first_h: int, last_h: int) -> tuple[int, int, int]:
    """(first bin's start in hours since the epoch, hours per bin, number of bins) covering the clock
    hours first_h..last_h with at most TIMELINE_MAX_BINS bins. Bins of a whole divisor of a day start
    at a multiple of their width (so at UTC midnight too), wider ones at the UTC midnight before
    first_h."""
    width = 0
    for i in itertools.count():
        width = TIMELINE_BIN_HOURS[i] if i < len(TIMELINE_BIN_HOURS) else 168 * 2 ** (i - len(TIMELINE_BIN_HOURS) + 1)
        start = first_h - first_h % width if 24 % width == 0 else first_h - first_h % 24
        n = (last_h - start) // width + 1
        if n <= TIMELINE_MAX_BINS:
            return start, width, n
    raise AssertionError("unreachable")


def _timelines(hourly: Any, n_keys: int) -> tuple[int | None, int, np.ndarray | None]:
    """Per GPU key, the mean utilisation over observed time in each bin (NaN: nothing observed)."""
    if hourly.height == 0 or n_keys == 0:
        return None, 1, None
    hour = hourly["hour"].to_numpy()
    key = hourly["key"].to_numpy().astype(np.int64)
    start, width, n = timeline_bins(int(hour.min()), int(hour.max()))
    idx = key * n + (hour - start) // width
    util_s = np.bincount(idx, weights=hourly["util_s"].to_numpy(), minlength=n_keys * n)
    obs_s = np.bincount(idx, weights=hourly["obs_s"].to_numpy(), minlength=n_keys * n)
    with np.errstate(invalid="ignore", divide="ignore"):
        util = np.where(obs_s > 0, util_s / obs_s, np.nan)
    return start, width, np.clip(util, 0.0, 1.0).reshape(n_keys, n)


def _gpu_sort(gpu: str) -> tuple[int, int, str]:
    return (0, int(gpu), gpu) if gpu.isdigit() else (1, 0, gpu)  # total: "01" and "1" are two GPUs


def _group(name: str, members: list[GpuStat], price: Price | None) -> GroupStat:
    obs = sum(m.observed_hours for m in members)
    classes = {c: 0 for c in CLASSES}
    for m in members:
        classes[m.cls] += 1

    def share(attr: str) -> float:
        return sum(getattr(m, attr) * m.observed_hours for m in members) / obs if obs > 0 else 0.0

    return GroupStat(
        name=name,
        gpus=len(members),
        observed_hours=obs,
        gap_hours=sum(m.gap_hours for m in members),
        mean_util=share("mean_util"),
        idle_share=share("idle_share"),
        busy_share=share("busy_share"),
        classes=classes,
        cost=sum(m.cost or 0.0 for m in members) if price is not None else None,
        idle_cost=sum(m.idle_cost or 0.0 for m in members) if price is not None else None,
    )


@dataclass
class _Runs:
    switches: np.ndarray  # busy <-> near-idle changes within a stretch of data without gaps
    median_run_min: np.ndarray
    longest_busy_h: np.ndarray
    longest_idle_h: np.ndarray


def _classify(
    mean: float, hours: float, runs: _Runs, k: int, interval_s: float
) -> tuple[str, dict[str, Any]]:
    switches = float(runs.switches[k])
    per_hour = float(switches / hours) if hours > 0 else 0.0
    med_run = float(runs.median_run_min[k])
    ev: dict[str, Any] = {
        "mean_util": round(mean, 4),
        "interval_s": round(interval_s, 3),
        "switches": int(switches),
        "switches_per_hour": round(per_hour, 2),
        "median_stretch_min": None if np.isnan(med_run) else round(med_run, 2),
        "longest_busy_h": round(float(runs.longest_busy_h[k]), 3),
        "longest_idle_h": round(float(runs.longest_idle_h[k]), 3),
    }
    if mean >= CLASS_BUSY_MEAN:
        ev["rule"] = "busy"
        return "busy", ev
    if mean < CLASS_IDLE_MEAN:
        ev["rule"] = "idle"
        return "idle", ev
    if (
        mean < STARVED_MAX_MEAN
        and switches >= STARVED_MIN_SWITCHES
        and per_hour >= STARVED_SWITCHES_PER_HOUR
        and not np.isnan(med_run)
        and med_run <= STARVED_MAX_RUN_MIN
    ):
        ev["rule"] = "starved"
        return "starved", ev
    if runs.longest_busy_h[k] >= MIXED_MIN_RUN_H and runs.longest_idle_h[k] >= MIXED_MIN_RUN_H:
        ev["rule"] = "mixed"
        return "mixed", ev
    ev["rule"] = "partial"
    if interval_s >= 30 and STARVED_MAX_MEAN > mean >= NEAR_IDLE_BELOW:
        ev["note"] = "coarse_interval"  # a sawtooth faster than the sampling interval averages out
    return "partial", ev
