"""The replay's spot tier (issue 26): S spot cards between the reserved pool and on demand, reclaimed
at the offer's rate.

Semantics (both replays, `replay.replay_reference` and the C loop, follow them exactly)
---------------------------------------------------------------------------------
Where the replay without a spot tier bursts a job (it never fits the reserved pool, or its wait ran
out), the job goes to spot instead when it fits the spot cards free at that instant (S cards pooled,
counted in thousandths of a card like the reserved pool); otherwise to on demand. It does not queue
for spot. The trace's jobs name no workloads, so every job may run on spot (`api.simulate` refuses
`--spot` when none of the scenario's workloads for the GPU may).

A spot run of job j with w seconds of work left (at the reserved card's speed) that starts with a
restart prefix p (0 for the first run, the restart r after a reclaim) holds its cards for

    L = p + w x sigma                 sigma: the spot offer's slowdown on the trace's work

unless it is reclaimed first, after x = delay[j, k] running seconds (k: the job's k-th spot run):

    delay[j, k] = E[j, k] / (lam x N_j) x 3600 s,   E ~ Exp(1) drawn with numpy Generator(PCG64(seed)),
                  lam the offer's reclaims per node-hour, N_j = ceil(gpus_j / gpus_per_node)

(a synchronous job stops when any of its nodes is reclaimed, as `models.preemption`). At x < L it is
reclaimed: its cards are free again, it keeps the work of the checkpoints it passed,

    kept = floor((x - p) / tau) x tau running seconds (0 when x <= p or without checkpoints),
    w   -= kept / sigma,

and it loses the rest of its run plus one restart. Then, by `--spot-fallback`:
- `on-demand` (the default): it runs on demand from that instant, r + w x slowdown_on_demand;
- `requeue`: it tries spot again at once (a run with prefix r), at most `attempts` spot runs in all
  (MAX_SPOT_RUNS), and goes to on demand when spot is full or its runs are spent.
Spot events at one instant come before the reserved pool's (and before arrivals), in (time, job)
order.

Per job the replays report its tier (0 reserved, 1 finished on spot, 2 finished on demand), its
running seconds on spot (all runs), the work left when it went to on demand, its end and its reclaims.
`summarize` turns them into GPU-hours:

    spot GPU-hours       = sum gpus x spot_s / 3600                       (billed at the spot price)
    on-demand GPU-hours  = sum over tier 2 of gpus x (w_left x slowdown + r if reclaimed) / 3600
    lost GPU-hours       = sum gpus x (spot_s - (d - w_left) x sigma) / 3600 + the on-demand restarts

`max_lifetime` (forced restarts) is not replayed: the reclaims are the rate's only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from gpuplan.inputs.catalog import Catalog
    from gpuplan.inputs.scenario_types import Scenario
    from gpuplan.models.tariff import Tariff

MAX_SPOT_RUNS = 4
"""With `--spot-fallback requeue`: the spot runs a job gets before it goes to on demand (a stated
limit, so that work that never passes a checkpoint cannot loop)."""

FALLBACKS = ("on-demand", "requeue")


@dataclass(frozen=True)
class SpotPool:
    """The spot tier of one replay: S cards and the reclaim delays drawn for every (job, run)."""

    gpus: int  # S
    delay: np.ndarray  # float64 (jobs, attempts), C order: running seconds before the k-th run is reclaimed
    attempts: int
    checkpoint_s: float  # tau in running seconds; inf: no checkpoints
    restart_s: float  # r
    slowdown: float  # sigma: the spot offer's
    on_demand_slowdown: float
    requeue: bool


@dataclass(frozen=True)
class SpotRuns:
    """The spot tier's per-job results (this module's docstring), as `sim.replay.replay` returns them."""

    tier: np.ndarray  # uint8: 0 reserved, 1 finished on spot, 2 finished on demand
    spot_s: np.ndarray  # float64 running seconds on spot, all runs
    left_s: np.ndarray  # float64 work seconds left when it went on demand (the duration on the reserved pool)
    end: np.ndarray  # float64 s: the end of a job that left the reserved pool (NaN for tier 0)
    reclaims: np.ndarray  # int64


@dataclass(frozen=True)
class SpotParams:
    """What `--spot` needs besides S: the offer's rate and the policy (the delays are drawn per trace)."""

    rate_per_node_hour: float
    gpus_per_node: int
    checkpoint_hours: float
    restart_hours: float
    slowdown: float
    on_demand_slowdown: float
    fallback: str = "on-demand"
    seed: int = 0


def reclaim_delays(gpus: np.ndarray, params: SpotParams, attempts: int) -> np.ndarray:
    """delay[j, k] (module docstring): Exp(1) draws of Generator(PCG64(seed)), job by job in replay order,
    over lam x N_j per hour, in seconds (inf at a rate of 0)."""
    rng = np.random.Generator(np.random.PCG64(params.seed))
    e = rng.standard_exponential((len(gpus), attempts))
    nodes = np.ceil(gpus / params.gpus_per_node)
    lam = params.rate_per_node_hour * nodes  # per hour, per job
    with np.errstate(divide="ignore"):
        per_s = np.where(lam > 0, 3600.0 / np.where(lam > 0, lam, 1.0), math.inf)
    out = e * per_s[:, None]
    return np.ascontiguousarray(out, dtype=np.float64)


def spot_pool(s: int, gpus: np.ndarray, params: SpotParams) -> SpotPool:
    """The SpotPool of S cards for jobs of these GPUs (in replay order)."""
    attempts = MAX_SPOT_RUNS if params.fallback == "requeue" else 1
    return SpotPool(
        gpus=int(s), delay=reclaim_delays(gpus, params, attempts), attempts=attempts,
        checkpoint_s=params.checkpoint_hours * 3600.0, restart_s=params.restart_hours * 3600.0,
        slowdown=params.slowdown, on_demand_slowdown=params.on_demand_slowdown,
        requeue=params.fallback == "requeue")


NEVER_SPOT = frozenset({"no-preemption", "compliance", "custom-driver"})
"""Workload requirements that keep work off spot (issue 26's rules; pinned work needs bare metal)."""


def spot_params(scenario: Scenario, gpu: str, catalog: Catalog, *, checkpoint: str | None, fallback: str,
                seed: int, on_demand_slowdown: float, file: str | None = None) -> tuple[SpotParams, Tariff]:
    """`--spot`'s offer and policy from the scenario (exit 2 when it has none to give):

    - the offer: the GPU's cheapest spot offer; its reclaims per node-hour (the middle of a range);
    - the work that may run on spot: the GPU's workloads without `no-preemption`, `compliance` or
      `custom-driver` (the trace's jobs name no workloads: all of them run as that work);
    - checkpoint interval: `--checkpoint` (a duration or `none`), else the largest of that work's
      (the trace's jobs could be any of it: the most loss); a restart: the largest of `restart_hours`;
    - sigma: that work's slowdown on the spot offer (`engines.pricing.pool_slowdown`)."""
    from gpuplan.engines.cost import restart_hours
    from gpuplan.engines.pricing import cheapest_spot, pool_slowdown
    from gpuplan.errors import ScenarioError, UsageError
    from gpuplan.inputs.units import UnitError, parse_duration
    from gpuplan.models.tariff import Tariff

    if fallback not in FALLBACKS:
        raise UsageError(f"unknown spot fallback {fallback!r}", field="--spot-fallback",
                         hint=f"use {' or '.join(FALLBACKS)}.")
    offer = cheapest_spot(scenario, gpu)
    if offer is None or offer.preemption is None:
        raise ScenarioError(f"no spot offer for GPU {gpu!r}", file=file, field="offers",
                            hint="--spot needs an offer with `capacity: spot` (and its `preemption:` rate).")
    wls = [w for w in scenario.workloads if w.gpus_allowed[0] == gpu]
    tolerant = [w for w in wls if not (w.requires & NEVER_SPOT)]
    if wls and not tolerant:
        raise UsageError(f"no workload for GPU {gpu!r} may run on spot (all require no-preemption, compliance "
                         "or custom drivers)", field="--spot", hint="drop --spot, or replay another scenario.")
    if checkpoint is not None:
        text = checkpoint.strip().lower()
        try:
            tau = math.inf if text == "none" else parse_duration(text)
        except UnitError as exc:
            raise UsageError(str(exc), field="--checkpoint", hint="for example --checkpoint 30m, 1h or none.") from None
        if not tau > 0:
            raise UsageError("the checkpoint interval must be > 0", field="--checkpoint",
                             hint="for example --checkpoint 30m, 1h or none.")
    elif tolerant:
        tau = max(w.checkpoint_hours for w in tolerant)
    else:
        raise UsageError(f"the scenario has no workload for GPU {gpu!r} to take a checkpoint interval from",
                         field="--checkpoint", hint="say it: --checkpoint 30m (or none).")
    r = max((restart_hours(w, offer) for w in tolerant), default=offer.preemption.restart_hours
            if offer.preemption.restart_hours is not None else offer.recovery_hours)
    sigma = pool_slowdown(tolerant, gpu, offer, catalog) if tolerant else 1.0
    params = SpotParams(rate_per_node_hour=float(offer.preemption.rate.mid), gpus_per_node=offer.gpus_per_node,
                        checkpoint_hours=tau, restart_hours=float(r), slowdown=float(sigma),
                        on_demand_slowdown=float(on_demand_slowdown), fallback=fallback, seed=int(seed))
    return params, Tariff.of(offer, scenario)


def spot_settings(s: int, params: SpotParams, tariff: Tariff) -> dict[str, Any]:
    """The `spot` object of `gpuplan.simulate/1` (`contracts.simulate.SpotSettings`)."""
    return {
        "gpus": int(s), "offer": tariff.offer, "price_per_gpu_hour": float(tariff.unit_price()),
        "rate_per_node_hour": params.rate_per_node_hour, "seed": params.seed,
        "checkpoint_hours": params.checkpoint_hours if math.isfinite(params.checkpoint_hours) else None,
        "restart_hours": params.restart_hours, "slowdown": params.slowdown, "fallback": params.fallback,
        "max_spot_runs": MAX_SPOT_RUNS if params.fallback == "requeue" else 1,
    }
