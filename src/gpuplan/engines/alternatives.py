"""GPU alternatives in `plan` and `commit`: which of a workload's listed GPUs (`gpu: [a, b]`) it runs on.

A workload's schedule is written for its first GPU. On another listed GPU the same work takes
g = `models.perf.gpu_speed` (time there over time on the first GPU: the user's `speed:`, else the
roofline), so the work is re-expressed there (`on_gpu`):

    hours_per_day' = hours_per_day x g                    (the same work, more or fewer hours a day)
    if hours_per_day' > 24:  hours_per_day' = 24 and the schedule lasts
        duration' = calendar_days(active_days(duration) x hours_per_day x g / 24) x 24 hours
                    (the longer calendar `compare` gives such a run, `engines.cost`)
    step.compute_s' = compute_s x g                        (communication takes the same time)
    the window is kept where the new hours fit in it, else dropped (run from 09:00, wrapping)
    a service (`service:`): one replica's throughput is per_replica / g there, so replicas each hour =
        max(min_replicas, ceil(load x g / per_replica)): more replicas on a slower GPU, the same calendar

GPU-hours are physical quantities on the GPU they run on: `gpus x hours_per_day' x active days`.

The choice (`choose`) is joint with the pool sizes: the assignment {workload: GPU} minimising the
sum over GPU types of `cost_of(gpu, workloads on it)` (the caller's pool cost, e.g. `plan`'s optimum
hybrid cost per month at that pool's best size), found by coordinate descent: each workload in turn
moves to the GPU that lowers the total most with the others fixed, until no move lowers it (at most
`MAX_ROUNDS` rounds; a tie keeps the earlier listed GPU). Pool costs are memoised by (GPU, set of
workloads), so a move prices only the two pools it changes. A GPU is a candidate when the scenario
offers it and the workload's rules allow it there: memory fits, pinned work (`compliance`,
`custom-driver`) has a bare-metal offer, elastic work a container offer, and `need_container` (commit)
a container offer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from gpuplan.inputs.calendar import active_days, calendar_days
from gpuplan.inputs.catalog import Catalog
from gpuplan.inputs.scenario_types import Scenario, Step, Workload, with_service
from gpuplan.models.perf import gpu_speed

MAX_ROUNDS = 4
PINNED = frozenset({"compliance", "custom-driver"})


@dataclass(frozen=True)
class GpuChoice:
    """Why a workload runs on `gpu`: the total cost with it on each candidate, the others fixed."""

    workload: str
    gpu: str
    first: str  # the first listed GPU, the schedule's reference
    speed: float  # time on `gpu` over time on the first listed GPU
    speed_source: str
    costs: tuple[tuple[str, float], ...]  # (candidate GPU, the caller's total cost with the workload there)
    listed: tuple[str, ...] = ()  # the workload's `gpu:` list

    @property
    def moved(self) -> bool:
        """Whether there was a choice to make, or the rules left another GPU than the first."""
        return len(self.costs) > 1 or self.gpu != self.first


def _window_fits(window: str | None, hours: float) -> bool:
    if window is None:
        return True
    a, b = window.split("-")
    start = int(a[:2]) + int(a[3:]) / 60
    end = int(b[:2]) + int(b[3:]) / 60
    return hours <= ((end - start) % 24 or 24.0) + 1e-9


def on_gpu(w: Workload, gpu: str, cat: Catalog) -> Workload:
    """`w` re-expressed on `gpu`, one of its listed GPUs (module docstring); `w` itself on its first."""
    if gpu == w.gpus_allowed[0]:
        return w
    g, _source = gpu_speed(w, gpu, cat)
    if w.service is not None:  # a service: more (or fewer) replicas, never a longer calendar
        order = (gpu, *(x for x in w.gpus_allowed if x != gpu))
        return with_service(replace(w, gpus_allowed=order, speed=_rebased(w)),
                            replace(w.service, per_replica=w.service.per_replica / g))
    hours = w.hours_per_day * g
    duration = w.duration_hours
    if hours > 24.0:
        working = active_days(w.duration_hours, w.days_per_week) * hours / 24.0
        duration = max(duration, calendar_days(working, w.days_per_week) * 24.0)
        hours = 24.0
    step = w.step
    if step is not None:
        step = Step(compute_s=step.compute_s * g, gradient_gb=step.gradient_gb, overlap=step.overlap)
    return replace(w, gpus_allowed=(gpu, *(x for x in w.gpus_allowed if x != gpu)), hours_per_day=hours,
                   duration_hours=duration, step=step, speed=_rebased(w),
                   window=w.window if _window_fits(w.window, hours) else None)


def _rebased(w: Workload) -> tuple[tuple[str, float], ...]:
    """Measured speeds stay relative figures (gpu_speed divides the new first GPU's by the other's):
    the old first GPU keeps its place in them (1.0 where the user left it out)."""
    return tuple({w.gpus_allowed[0]: 1.0, **dict(w.speed)}.items()) if w.speed else ()


def candidates(w: Workload, scenario: Scenario, cat: Catalog, *, need_container: bool = False) -> list[str]:
    """The listed GPUs `w` may run on, in its order (module docstring); its first GPU when none fits."""
    out = []
    for gpu in w.gpus_allowed:
        modes = {o.mode for o in scenario.offers if o.gpu == gpu}
        spec = cat.gpus.get(gpu)
        if not modes:
            continue
        if w.memory_gb is not None and spec is not None and w.memory_gb > spec.memory_gb:
            continue
        if w.requires & PINNED and "bare-metal" not in modes:
            continue
        if ("elastic" in w.requires or need_container) and "container" not in modes:
            continue
        out.append(gpu)
    return out or [w.gpus_allowed[0]]


PoolCost = Callable[[str, tuple[Workload, ...]], float]


def choose(workloads: Sequence[Workload], scenario: Scenario, cat: Catalog, cost_of: PoolCost, *,
           need_container: bool = False) -> tuple[list[Workload], dict[str, GpuChoice]]:
    """The workloads re-expressed on their chosen GPUs (in order) and, per workload, why (module docstring)."""
    cands = {w.id: candidates(w, scenario, cat, need_container=need_container) for w in workloads}
    conv = {(w.id, g): on_gpu(w, g, cat) for w in workloads for g in cands[w.id]}
    at = {w.id: cands[w.id][0] for w in workloads}
    memo: dict[tuple[str, frozenset[str]], float] = {}

    def pool(gpu: str, ids: frozenset[str]) -> float:
        key = (gpu, ids)
        if key not in memo:
            wls = tuple(conv[(w.id, gpu)] for w in workloads if w.id in ids)
            memo[key] = cost_of(gpu, wls) if wls else 0.0
        return memo[key]

    def members(assign: dict[str, str], gpu: str) -> frozenset[str]:
        return frozenset(i for i, g in assign.items() if g == gpu)

    def total(assign: dict[str, str]) -> float:
        return sum(pool(g, members(assign, g)) for g in sorted(set(assign.values())))

    movable = [w for w in workloads if len(cands[w.id]) > 1]
    current = total(at) if movable else 0.0
    for _ in range(MAX_ROUNDS if movable else 0):
        changed = False
        for w in movable:
            best_g, best = at[w.id], current
            for g in cands[w.id]:
                if g == at[w.id]:
                    continue
                trial = total({**at, w.id: g})
                if trial < best - 1e-9 * max(1.0, abs(best)):
                    best_g, best = g, trial
            if best_g != at[w.id]:
                at[w.id], current, changed = best_g, best, True
        if not changed:
            break
    why = {}
    for w in workloads:
        g = at[w.id]
        speed, source = gpu_speed(w, g, cat)
        costs = tuple((c, total({**at, w.id: c})) for c in cands[w.id]) if len(cands[w.id]) > 1 else ()
        why[w.id] = GpuChoice(w.id, g, w.gpus_allowed[0], speed, source, costs, w.gpus_allowed)
    return [conv[(w.id, at[w.id])] for w in workloads], why


__all__ = ["GpuChoice", "candidates", "choose", "on_gpu"]
