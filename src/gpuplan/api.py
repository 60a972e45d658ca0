"""The one orchestrator: inputs -> models -> engines -> results, for every command.

Interfaces (the CLI, the web app, export) call these functions and only render what comes back: they
never reach an engine or a money formula themselves. Arguments are typed values (paths, text, numbers,
the choices in `gpuplan.constants`), never command-line words; bad input raises a `GpuplanError`
subclass; results are result objects whose `to_json()` (or the plain data returned) is what `-o json`
prints.

Imports are lazy: a command loads only what it runs (`compare` loads neither numba nor polars, the
CLI's `--help` none of the engines).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from gpuplan.constants import DEFAULT_QUEUEING, Packing, Queueing
from gpuplan.errors import GpuplanError
from gpuplan.inputs.starter import STARTER as STARTER  # the public name, re-exported
from gpuplan.inputs.units import parse_time as parse_time  # re-exported (was defined here)

# The result classes are re-exported: each is loaded when first asked for (`__getattr__` below).
if TYPE_CHECKING:
    from gpuplan.contracts.plan import PlanResult as PlanDoc
    from gpuplan.contracts.results import AuditReport as AuditReport
    from gpuplan.contracts.results import CommitReport as CommitReport
    from gpuplan.contracts.results import CompareResult as CompareResult
    from gpuplan.contracts.results import DecisionPack as DecisionPack
    from gpuplan.contracts.results import DemandCurve as DemandCurve
    from gpuplan.contracts.results import DemandMode as DemandMode
    from gpuplan.contracts.results import SimulateResult as SimulateResult
    from gpuplan.engines.planner import PlanResult
    from gpuplan.engines.pricing import PoolPricing
    from gpuplan.engines.vendors import VendorsResult
    from gpuplan.export import ExportResult
    from gpuplan.inputs.catalog import Catalog
    from gpuplan.inputs.scenario_types import Scenario
    from gpuplan.telemetry import Price

Lang = Literal["en", "zh"]
ExportTarget = Literal["kueue", "slurm", "volcano", "skypilot"]
_RESULTS = {"AuditReport", "CommitReport", "CompareResult", "DecisionPack", "DemandCurve", "DemandMode",
            "SimulateResult"}


def __getattr__(name: str) -> Any:
    if name in _RESULTS:
        from gpuplan.contracts import results

        return getattr(results, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _catalog(catalog: str | Path | Catalog | None) -> Catalog:
    from gpuplan.inputs.catalog import Catalog, load_catalog

    return catalog if isinstance(catalog, Catalog) else load_catalog(catalog)


def _scenario(scenario: str | Path | Scenario, cat: Catalog) -> Scenario:
    from gpuplan.inputs.scenario import load_scenario
    from gpuplan.inputs.scenario_types import Scenario

    return scenario if isinstance(scenario, Scenario) else load_scenario(scenario, cat)


# --- compare --------------------------------------------------------------------------------------


def compare(
    scenario: str | Path | Scenario,
    *,
    catalog: str | Path | Catalog | None = None,
    measured: str | Path | None = None,
    measured_offer: str | None = None,
    hours_curves: bool = False,
) -> CompareResult:
    """Each workload on each offer and the verdict; `hours_curves` also computes the report's cost
    against hours-per-day curves (48 cost evaluations per option, so only when a report needs them)."""
    from gpuplan.engines import advise as advise_mod
    from gpuplan.engines.cost import forget

    forget()  # the previous answer's memos: its objects go now, not at the memos' size bound
    cat = _catalog(catalog)
    scen = _scenario(scenario, cat)
    if measured is not None:
        from gpuplan.inputs.measured import apply_measured
        from gpuplan.probe.overhead import load_measured

        scen = apply_measured(scen, load_measured(measured, cat), measured_offer)
    advice = advise_mod.advise(scen, cat)
    curves = {a.workload.id: advise_mod.hours_curves(a, scen, cat) for a in advice} if hours_curves else {}
    from gpuplan.contracts.results.compare import CompareResult

    return CompareResult(scenario=scen, catalog=cat, advice=advice, hours_curves=curves)


def compare_text(
    text: str, *, name: str = "<scenario>", catalog: str | Path | Catalog | None = None, hours_curves: bool = False
) -> CompareResult:
    from gpuplan.inputs.scenario import scenario_from_text

    cat = _catalog(catalog)
    return compare(scenario_from_text(text, name, cat), catalog=cat, hours_curves=hours_curves)


# --- plan -----------------------------------------------------------------------------------------


def plan(
    scenario: str | Path | Scenario,
    *,
    catalog: str | Path | Catalog | None = None,
    demand: str | Path | None = None,
    trace: str | Path | None = None,
    trace_format: str = "auto",
    queueing: Queueing = DEFAULT_QUEUEING,
) -> PlanResult:
    """Size the hybrid pool for a scenario; demand from its workloads, a demand CSV, or a job trace."""
    from gpuplan.engines.planner import plan_pools
    from gpuplan.inputs import demand as demand_mod

    cat = _catalog(catalog)
    scen = _scenario(scenario, cat)
    if demand is not None and trace is not None:
        raise GpuplanError("give either --demand or --trace, not both", field="--demand",
                           hint="--demand reads hourly GPUs (time,gpu,gpus); --trace reads a job trace.")
    if demand is not None:
        # a sample repeats to a typical period; workloads without demand rows keep their schedule
        dem = demand_mod.add_schedules(demand_mod.repeat_sample(demand_mod.from_csv(demand)),
                                       [w for w in scen.workloads if not w.once])
    elif trace is not None:
        gpus = sorted({w.gpus_allowed[0] for w in scen.workloads})
        # workloads on a GPU the trace never names keep their own schedule (never dropped)
        from gpuplan.sim.limits import check_trace_rows
        from gpuplan.sim.traces import read_trace

        check_trace_rows(trace)  # past 10 million rows: exit 2 before reading it
        jobs = read_trace(trace, trace_format)
        dem = demand_mod.add_schedules(demand_mod.from_trace(jobs, gpus[0], trace),
                                       [w for w in scen.workloads if not w.once])
    else:  # one-off work (`once: true`) never sizes a standing pool: plan lists it under `projects`
        dem = demand_mod.from_schedules([w for w in scen.workloads if not w.once])
    unknown = sorted(set(dem.by_gpu) - {o.gpu for o in scen.offers})
    if unknown:
        raise GpuplanError(f"the demand names GPU(s) no offer provides: {', '.join(unknown)}",
                           file=str(demand or trace), hint="add offers for them to the scenario.")
    return plan_pools(scen, dem, cat, queueing)


def plan_document(
    scenario: str | Path | Scenario,
    *,
    lang: Lang = "en",
    catalog: str | Path | Catalog | None = None,
    demand: str | Path | None = None,
    trace: str | Path | None = None,
    trace_format: str = "auto",
    queueing: Queueing = DEFAULT_QUEUEING,
    max_wait: str | Sequence[str] | None = None,
) -> PlanDoc:
    """The plan as its `gpuplan.plan/1` contract: what every plan renderer (and `export`) reads.

    `max_wait` (`p95=2h`, ...): also name, per pool, the cheapest size whose waits meet the budget when
    work waits up to the budget's largest bound for leased cards before it bursts (`waiting`). Plan's own
    sizing bursts at once, so every size would meet any budget. With a trace its jobs are replayed (the
    `simulate` engine); with a demand curve or schedules the GPU-hours queue as a fluid
    (`engines.waiting`)."""
    from gpuplan.contracts.plan_document import plan_document as build
    from gpuplan.errors import UsageError

    if max_wait and trace is not None and not isinstance(scenario, str | Path):
        raise UsageError("--max-wait replays the trace against a scenario file", field="--max-wait",
                         hint="give the scenario as a file path.")
    res = plan(scenario, catalog=catalog, demand=demand, trace=trace, trace_format=trace_format, queueing=queueing)
    doc = build(res, lang)
    if max_wait:
        from gpuplan.sim.cost import parse_max_wait

        budget = parse_max_wait(max_wait if isinstance(max_wait, str) else list(max_wait))
        if trace is not None:
            waiting = [_plan_waiting(doc, res.scenario, scenario, trace, trace_format, queueing, budget,  # type: ignore[arg-type]
                                     catalog)]
        else:
            waiting = [_fluid_waiting(p, res.scenario, budget) for p in res.pools]
        doc = doc.model_copy(update={"waiting": waiting})
    return doc


def _fluid_waiting(pool: Any, scenario: Scenario, budget: dict[str, float]) -> Any:
    """`plan --max-wait` on an hourly curve: the fluid queue of `engines.waiting` at each candidate size,
    priced as the plan's own curve with the bursts the queue leaves, plus the waiting at the team's
    `researcher_hour_cost` (see `engines.waiting.waiting_cost`)."""
    from gpuplan.contracts.plan import PlanWaiting
    from gpuplan.engines.waiting import fluid_queue, waiting_cost
    from gpuplan.models.tariff import Tariff
    from gpuplan.sim.cost import recommend

    after = max(budget.values())
    container = Tariff.of(pool.ct, scenario) if pool.ct is not None else None
    if container is None:
        after = float("inf")  # nowhere to burst: work waits for the pool
    f = scenario.days_per_month * 24.0 / pool.horizon_hours
    runs = []
    sizes = [int(r) for r in pool.sizing.candidates]
    for i, r in enumerate(sizes):
        # no pool (R = 0) with somewhere to burst: nothing to wait for, everything bursts at once
        fr = fluid_queue(pool.demand_pool, r, after if (r > 0 or container is None) else 0.0)
        extra = (fr.burst_gpu_hours - float(pool.sizing.spill[i])) * pool.slowdown
        cost = float(pool.curve_per_month[i]) + (container.container_cost(extra) * f if container else 0.0)
        priced: dict[str, Any] = {"per_month": round(cost, 2)}
        if scenario.team.researcher_hour_cost > 0:
            priced["waiting_per_month"] = round(waiting_cost(fr, pool.demand_pool, scenario, pool.gpu) * f, 2)
        runs.append({"reserved_gpus": r, "wait_hours": fr.wait_hours, "cost": priced})
    out = recommend(runs, budget)
    return PlanWaiting.model_validate({
        "model": "fluid", "max_wait_hours": budget, "burst_after_hours": after if after != float("inf") else None,
        "gpu": pool.gpu, "reserved_gpus": sizes,
        "recommended": out.get("recommended"), "no_recommendation": out.get("no_recommendation"),
    })


def _plan_waiting(doc: PlanDoc, scen: Scenario, scenario: str | Path, trace: str | Path, trace_format: str,
                  queueing: Queueing, budget: dict[str, float], catalog: str | Path | Catalog | None) -> Any:
    """The replay behind `plan --trace --max-wait` (see `plan_document`)."""
    import math

    from gpuplan.contracts.plan import PlanWaiting

    after = max(budget.values())
    # the trace runs on the first GPU the workloads name (as `plan` lays it out)
    gpu = sorted({w.gpus_allowed[0] for w in scen.workloads})[0]
    pool = next(p for p in doc.pools if p.gpu == gpu)
    step = max(1, int(pool.step or 1))
    top = max(int(pool.reserved_gpus), int(math.ceil(pool.demand.peak / step)) * step)
    while top // step + 1 > 1000:  # the replay's limit on pool sizes
        step *= 2
    sizes = list(range(0, top + 1, step))
    cat = catalog if isinstance(catalog, str | Path) or catalog is None else None
    res = simulate(trace, sizes, scenario=scenario, wait=after, queueing=queueing, trace_format=trace_format,
                   gpu=pool.gpu, catalog=cat, max_wait=budget)
    out = res.to_json()
    return PlanWaiting.model_validate({
        "model": "replay", "max_wait_hours": budget, "burst_after_hours": after, "gpu": pool.gpu,
        "reserved_gpus": sizes,
        "recommended": out.get("recommended"), "no_recommendation": out.get("no_recommendation"),
    })


def plan_scenario(
    path: str | Path | Scenario,
    catalog: str | Path | Catalog | None = None,
    lang: Lang = "en",
    *,
    demand: str | Path | None = None,
    queueing: Queueing = DEFAULT_QUEUEING,
) -> dict[str, Any]:
    """The `gpuplan.plan/1` JSON of a scenario (what `plan -o json` prints; `export` reads it too)."""
    from gpuplan.render.plan import plan_json

    return plan_json(plan_document(path, lang=lang, catalog=catalog, demand=demand, queueing=queueing))


# --- simulate -------------------------------------------------------------------------------------

ProgressStart = Callable[[Sequence[int], int], tuple[Callable[[int, int], None] | None, Callable[[], None]]]
"""Called once the reserved levels and the job count are known; returns (called after each level with
(done, total), or None; called when the replays end, even on error). The CLI draws its bar with it."""


def simulate(
    trace: str | Path,
    reserved: str | Sequence[int],
    *,
    scenario: str | Path | None = None,
    wait: str | float = "0",
    queueing: Queueing = DEFAULT_QUEUEING,
    packing: Packing = "gpu",
    gpus_per_node: int | None = None,
    trace_format: str = "auto",
    gpu: str | None = None,
    catalog: str | Path | None = None,
    progress: ProgressStart | None = None,
    max_wait: str | Sequence[str] | dict[str, float] | None = None,
    spot: int = 0,
    seed: int = 0,
    checkpoint: str | None = None,
    spot_fallback: str = "on-demand",
) -> SimulateResult:
    """Replay a job trace through each reserved pool size, spilling to containers.

    `spot` S > 0: S spot cards between the pool and on demand (`gpuplan.sim.spot`: the scenario's spot
    offer, reclaims drawn with `seed`, `checkpoint` (a duration or `none`; default the scenario's),
    `spot_fallback` on-demand or requeue); S = 0 replays exactly as without it.

    `reserved`: `16`, `0,8,16` or `A:B:STEP` (or the numbers); `wait`: how long a queued job waits
    before bursting (`0`, `30m`, `2h`, `inf`, or hours); `scenario`: prices the pool and the bursts;
    `max_wait`: the waiting budget (`p95=2h`, `mean=30m,max=1d`, or {stat: hours}) the recommended R
    meets. Past the limits (`gpuplan.sim.limits`) it stops before reading the trace (exit 2).
    """
    from gpuplan.errors import UsageError
    from gpuplan.inputs.units import UnitError, parse_duration
    from gpuplan.sim import limits
    from gpuplan.sim.cost import parse_max_wait, recommend
    from gpuplan.sim.replay import parse_reserved, read_jobs
    from gpuplan.sim.replay import simulate as run_simulation

    budget = parse_max_wait(max_wait if isinstance(max_wait, dict | str | None) else list(max_wait))
    if isinstance(reserved, str):
        limits.count_reserved(reserved)

    if isinstance(wait, str):
        try:
            wait_hours = parse_duration(wait, allow_inf=True)
        except UnitError as exc:
            raise UsageError(
                str(exc), field="--wait", hint="for example --wait 0, --wait 30m, --wait 2h or --wait inf."
            ) from None
    else:
        wait_hours = float(wait)
    levels = parse_reserved(reserved) if isinstance(reserved, str) else [int(r) for r in reserved]
    limits.check_levels(levels)
    prices, researcher, scen = _simulate_prices(scenario, gpu, catalog) if scenario is not None else (None, None, None)
    gpn = gpus_per_node or (prices.gpus_per_node if prices is not None else 8)
    spot_args: dict[str, Any] = {}
    spot_doc = None
    if spot < 0 or seed < 0:
        raise UsageError(f"--spot and --seed must be >= 0, got {spot} and {seed}",
                         field="--spot" if spot < 0 else "--seed")
    if spot > 0:
        from gpuplan.sim.spot import spot_params, spot_settings

        if scen is None or prices is None:
            raise UsageError("--spot prices a spot offer: pass --scenario", field="--spot",
                             hint="a scenario with an offer of `capacity: spot` for the GPU.")
        if spot > limits.MAX_RESERVED_GPUS:
            raise UsageError(f"S = {spot:,} spot GPUs is past the limit of {limits.MAX_RESERVED_GPUS:,}",
                             field="--spot")
        params, tariff = spot_params(scen, prices.gpu, _catalog(catalog), checkpoint=checkpoint,
                                     fallback=spot_fallback, seed=seed, on_demand_slowdown=prices.container_slowdown,
                                     file=str(scenario))
        spot_args = {"spot_gpus": spot, "spot": params, "spot_tariff": tariff}
        spot_doc = spot_settings(spot, params, tariff)

    jobs = read_jobs(trace, trace_format)  # past the row limit: exit 2 before the columns are read

    progress_cb, stop = progress(levels, len(jobs)) if progress is not None else (None, lambda: None)
    try:
        runs = run_simulation(
            jobs,
            levels,
            wait_hours,
            queueing=queueing,
            packing=packing,
            gpus_per_node=gpn,
            prices=prices,
            progress=progress_cb,
            **spot_args,
        )
    finally:
        stop()
    rec = recommend(runs, budget, researcher or 0.0, prices.days_per_month if prices is not None else 30.0)
    from gpuplan.contracts.results.simulate import SimulateResult

    return SimulateResult(
        runs=runs,
        trace=str(trace),
        format=jobs.format,
        records=jobs.records,
        gpu_hours=jobs.gpu_hours,
        wait_hours=wait_hours,
        queueing=queueing,
        packing=packing,
        gpus_per_node=gpn,
        prices=prices,
        max_wait=budget,
        researcher_hour_cost=researcher,
        recommendation=rec,
        spot=spot_doc,
    )


def _simulate_prices(
    scenario: str | Path, gpu: str | None, catalog: str | Path | None
) -> tuple[PoolPricing, float, Scenario]:
    """The replay's prices: the scenario's cheapest bare-metal (lease) and container (burst) offers,
    and its researcher_hour_cost (what an hour of waiting costs)."""
    from gpuplan.engines.pricing import pool_prices
    from gpuplan.errors import ScenarioError
    from gpuplan.inputs.scenario import load_scenario

    cat = _catalog(catalog)
    scen = load_scenario(scenario, cat)
    pp = pool_prices(scen, _gpu_id(cat, gpu, "--gpu") if gpu is not None else None, catalog=cat)
    for tariff, mode in ((pp.lease, "bare-metal"), (pp.container, "container")):
        if tariff is None:
            raise ScenarioError(
                f"no {mode} offer for GPU {pp.gpu!r}",
                file=scenario,
                field="offers",
                hint="a hybrid pool needs a bare-metal offer (the lease) and a container offer (the bursts).",
            )
    return pp, scen.team.researcher_hour_cost, scen


def _gpu_id(cat: Catalog, name: str, flag: str) -> str:
    """A GPU as the user wrote it on the command line -> its catalog id (the one alias table)."""
    from gpuplan.inputs.gpu_names import GpuNameError

    try:
        return cat.resolve_gpu(name).id
    except GpuNameError as exc:
        raise GpuplanError(exc.message, field=flag, hint=exc.hint) from None


# --- audit ----------------------------------------------------------------------------------------


def audit(
    files: Sequence[str | Path] = (),
    *,
    prometheus: str | None = None,
    since: str = "7d",
    until: str = "now",
    step: str = "60s",
    selector: str = "",
    timeout: str = "30s",
    price: str | None = None,
    offer: str | None = None,
    scenario: str | Path | None = None,
    catalog: str | Path | None = None,
    currency: str = "USD",
    gpus_per_node: int | None = None,
    demand_mode: DemandMode | None = None,
    gpu_type: str | None = None,
) -> AuditReport:
    """What the GPUs really did, from telemetry files and/or a live Prometheus.

    `price` (`8/gpu-hour`, `2000/node-month`) or `offer` (an offer id, from `scenario` or the catalog)
    prices the idle time; `demand_mode` also derives the hourly demand curve (`plan --demand` reads it).
    """
    import time

    from gpuplan.errors import UsageError
    from gpuplan.inputs.units import UnitError, parse_duration
    from gpuplan.telemetry import Collector, Price, analyze, read_into

    if not files and not prometheus:
        raise UsageError(
            "nothing to audit: give telemetry files or --prometheus URL",
            hint="gpuplan audit gpu-log.csv --price 8/gpu-hour, "
            "or --prometheus http://prometheus:9090 --since 7d",
        )
    if price and offer:
        raise UsageError("give --price or --offer, not both", field="--price")
    col = Collector()
    if files:
        read_into([Path(f) for f in files], col)
    if prometheus:
        from gpuplan.telemetry.promlive import LiveQuery, fetch

        try:
            step_s = parse_duration(step) * 3600.0
            timeout_s = parse_duration(timeout) * 3600.0
        except UnitError as exc:
            raise UsageError(str(exc), field="--step/--timeout", hint="for example --step 60s") from None
        now = time.time()
        end = parse_time(until, now, "--until")
        start = parse_time(since, end, "--since")
        fetch(LiveQuery(prometheus, start, end, step_s=step_s, selector=selector, timeout_s=timeout_s), col)
    samples = col.finish()

    the_price: Price | None = None
    if price:
        the_price = _audit_price(price, currency, gpus_per_node, samples.registry.keys)
    elif offer:
        from gpuplan.engines.pricing import offer_price

        op = offer_price(offer, scenario_path=scenario, catalog_path=catalog)
        the_price = Price(op.per_gpu_hour, op.currency, low=op.low, high=op.high, source=f"offer {offer}")

    result = analyze(samples, the_price)
    curve = None
    if demand_mode is not None:
        curve = _demand(samples, demand_mode, gpu_type, catalog)
    from gpuplan.contracts.results.audit import AuditReport

    return AuditReport(result=result, demand=curve)


def _audit_price(price: str, currency: str, gpus_per_node: int | None, keys: Sequence[tuple[str, Any]]) -> Price:
    """`--price`: per GPU-hour; a node price is split over `gpus_per_node`, else the most GPUs seen on a node."""
    from gpuplan.errors import UsageError
    from gpuplan.inputs.units import UnitError, parse_rate_price, per_gpu_hour
    from gpuplan.telemetry import Price

    try:
        amount, per = parse_rate_price(price)
    except UnitError as exc:
        raise UsageError(str(exc), field="--price", hint="for example --price 8/gpu-hour") from None
    per_node = gpus_per_node
    if per_node is None:
        counts: dict[str, int] = {}
        for node, _ in keys:
            counts[node] = counts.get(node, 0) + 1
        per_node = max(counts.values(), default=1)
    value = per_gpu_hour(amount, per, gpus_per_node=per_node, days_per_month=30.0)
    return Price(value, currency, source=f"--price {price}")


def _demand(samples: Any, mode: DemandMode, gpu_type: str | None, catalog: str | Path | None) -> DemandCurve:
    from gpuplan.telemetry import demand_csv, demand_curve
    from gpuplan.telemetry.demand import mark_once

    cat = None
    try:
        from gpuplan.inputs.catalog import load_catalog

        cat = load_catalog(catalog)
    except Exception:  # the demand curve still works with raw model names
        cat = None

    if gpu_type is not None and cat is not None:
        gpu_type = _gpu_id(cat, gpu_type, "--gpu-type")  # H100, 910B, ... as people write them

    def gpu_type_of(model: str | None) -> str:
        if model and cat is not None:
            spec = cat.match_gpu(model)
            if spec is not None:
                return str(spec.id)
        return model or gpu_type or "gpu"

    rows = mark_once(demand_curve(samples, mode, gpu_type_of, default_gpu=gpu_type or "gpu"))
    from gpuplan.contracts.results.audit import DemandCurve

    return DemandCurve(mode=mode, rows=len(rows), csv=demand_csv(rows))


# --- probe ----------------------------------------------------------------------------------------


def probe(
    *, root: str | Path = "/", bench: bool = False, catalog: str | Path | None = None, lang: Lang = "en"
) -> dict[str, Any]:
    """Inspect this node (or the /proc and /sys tree under `root`): the `gpuplan.probe/1` document."""
    from gpuplan.contracts.probe_document import to_json
    from gpuplan.probe import probe_node

    return to_json(probe_node(root, bench=bench, catalog=_catalog(catalog)), lang)


# --- vendors --------------------------------------------------------------------------------------


def vendors(
    scenario: str | Path | Scenario,
    *,
    catalog: str | Path | Catalog | None = None,
    measured: str | Path | None = None,
    measured_offer: str | None = None,
) -> VendorsResult:
    """The seed article's vendor checklist per offer and provider (node network, NVLink/RoCE, where the
    data is, support response). `measured`: a `gpuplan probe -o json` file whose fastest physical link is
    the node network of `measured_offer` (needed when the scenario has several offers)."""
    from gpuplan.engines.vendors import MeasuredNetwork, check_vendors, probe_network
    from gpuplan.errors import UsageError

    cat = _catalog(catalog)
    scen = _scenario(scenario, cat)
    net = None
    if measured is None and measured_offer is not None:
        raise UsageError("--measured-offer needs --measured FILE", field="--measured-offer",
                         hint="give the `gpuplan probe -o json` file of that offer's node with --measured.")
    if measured is not None:
        ids = [o.id for o in scen.offers]
        if measured_offer is None and len(ids) != 1:
            raise GpuplanError("--measured needs --measured-offer ID when the scenario has several offers",
                               field="--measured-offer", hint=f"offers: {', '.join(ids)}")
        offer_id = measured_offer if measured_offer is not None else ids[0]
        if offer_id not in ids:
            raise GpuplanError(f"no offer `{offer_id}` in the scenario", field="--measured-offer",
                               hint=f"offers: {', '.join(ids)}")
        p = Path(measured)
        hint = "give the file `gpuplan probe -o json` wrote on the offer's node."
        from gpuplan.limits import load_json

        doc = load_json(p, hint=hint)
        try:
            found = probe_network(doc)
        except ValueError as exc:
            raise GpuplanError(str(exc), file=p, hint=hint) from None
        if found is None:
            raise GpuplanError("the probe saw no physical network link with a speed", file=p, field="network",
                               hint="virtual NICs report no speed; ask the provider for the node's bandwidth "
                               "and put it in the offer's `network: {gbps: ...}` instead.")
        net = MeasuredNetwork(offer_id, found[0], found[1], str(p))
    return check_vendors(scen, min_network_gbps=float(cat.defaults["min_network_gbps"]), measured=net)


# --- export ---------------------------------------------------------------------------------------


def export(
    target: ExportTarget,
    source: str | Path,
    *,
    api: Literal["v1beta2", "v1beta1"] = "v1beta2",
    name: str = "gpuplan",
    namespaces: Sequence[str] = (),
    cpu_per_gpu: str = "16",
    memory_per_gpu: str = "128Gi",
    gpu_resources: Mapping[str, str] | None = None,
    autoscale: bool = False,
    provisioning_class: str = "check-capacity.autoscaling.x-k8s.io",
    leased_context: str = "gpuplan-leased",
    elastic_context: str = "gpuplan-elastic",
    accelerators: Mapping[str, str] | None = None,
    slurm_accounting: bool = False,
    generated_at: str | None = None,
    catalog: str | Path | None = None,
) -> ExportResult:
    """The plan (`PLAN.json`, or planned from `SCENARIO.yaml`) as scheduler configuration files.

    `gpu_resources`: GPU id (or `*` for all) -> Kubernetes resource name; `accelerators`: GPU id ->
    SkyPilot accelerator name; `namespaces`: Kueue LocalQueue namespaces (default: `default`).
    """
    import re

    from gpuplan.errors import UsageError
    from gpuplan.export import ExportOptions, load_plan, parse_plan
    from gpuplan.export import export as run_export

    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name) or len(name) > 40:
        raise UsageError(
            f"--name: expected a lower-case DNS label (a-z, 0-9, -), got {name!r}", field="--name"
        )
    options = ExportOptions(
        api=api,
        name=name,
        namespaces=tuple(dict.fromkeys(namespaces or ["default"])),
        cpu_per_gpu=cpu_per_gpu,
        memory_per_gpu=memory_per_gpu,
        gpu_resources=dict(gpu_resources or {}),
        autoscale=autoscale,
        provisioning_class=provisioning_class,
        leased_context=leased_context,
        elastic_context=elastic_context,
        accelerators=dict(accelerators or {}),
        slurm_accounting=slurm_accounting,
        generated_at=generated_at,
    )
    if Path(source).suffix.lower() in (".yaml", ".yml") and Path(source).is_file():  # a scenario: plan it here
        plan_ = parse_plan(plan_scenario(str(source), catalog=str(catalog) if catalog else None), str(source))
    else:
        plan_ = load_plan(source)
    return run_export(target, plan_, options)


# --- commit and quotes ----------------------------------------------------------------------------


def commit(
    scenario: str | Path | Scenario,
    *,
    paths: int = 10_000,
    seed: int = 0,
    lang: Lang = "en",
    catalog: str | Path | Catalog | None = None,
    quotes: str | Path | None = None,
    db: str | None = None,
) -> CommitReport:
    """Which lease terms to sign: a ladder per GPU type against price drift and demand growth.

    Drifts the scenario's `market:` leaves out come from the quote history: `quotes` (a quotes CSV) or
    `db` (a quotes database URL; `GPUPLAN_DB` when set); else the market is flat.
    """
    import os

    from gpuplan.contracts.commit_document import commit_view
    from gpuplan.engines.commit import commit as run_commit
    from gpuplan.engines.commit import default_drifts
    from gpuplan.errors import UsageError

    if paths < 1 or paths > 1_000_000:
        raise UsageError(f"--paths must be from 1 to 1,000,000, got {paths}", field="--paths",
                         hint="10,000 paths (the default) give figures stable to about 1%.")
    cat = _catalog(catalog)
    scen = _scenario(scenario, cat)
    fitted = None
    db = db or os.environ.get("GPUPLAN_DB") or None
    if quotes is not None or db is not None:
        fitted = quote_drifts(scen, quotes=quotes, db=db)
    res = run_commit(scen, cat, paths=paths, seed=seed, drifts=default_drifts(scen, fitted))
    from gpuplan.contracts.results.commit import CommitReport

    return CommitReport(commit_view(res, lang))


def quote_drifts(scen: Scenario, *, quotes: str | Path | None = None,
                 db: str | None = None) -> dict[str, tuple[float, float]]:
    """The drift ranges a quote history gives for the scenario's GPUs (container, bare_metal), where it has them."""
    from gpuplan.quotes.trend import drift_ranges, fit_trends

    qs = quotes_read_csv(quotes) if quotes is not None else quotes_list(db=db)
    gpus = [o.gpu for o in scen.offers]
    return drift_ranges(fit_trends(qs), gpus)


def quotes_read_csv(path: str | Path) -> list[Any]:
    """Quotes from a CSV file (provider,gpu,mode,term,price,per,currency,date,note) or a catalog file
    (`.yaml`, as `gpuplan catalog pull` writes), all checked first."""
    from gpuplan.quotes.csvio import read_quotes_catalog, read_quotes_csv

    if str(path).lower().endswith((".yaml", ".yml")):
        return read_quotes_catalog(path)
    return read_quotes_csv(path)


def quotes_add(quotes: Sequence[Any], *, db: str | None = None) -> int:
    """Store quotes in one transaction (all or none); returns how many were added."""
    from gpuplan.quotes.store import add_quotes, open_store

    return add_quotes(open_store(db), quotes)


def _quote_gpu(gpu: str | None) -> str | None:
    """A GPU filter as stored quotes spell it (`910B` -> ascend-910b); a name that does not resolve is kept."""
    from gpuplan.inputs.gpu_names import GpuNameError, resolve

    try:
        return resolve(gpu).id if gpu else gpu
    except GpuNameError:
        return gpu


def quotes_list(*, db: str | None = None, gpu: str | None = None, mode: str | None = None) -> list[Any]:
    from gpuplan.quotes.store import list_quotes, open_store

    return list_quotes(open_store(db), gpu=_quote_gpu(gpu), mode=mode)


def quotes_db_current(*, db: str | None = None) -> str | None:
    """The quote store's schema revision (None before it is created)."""
    from gpuplan.quotes.store import schema_revision

    return schema_revision(db)


def quotes_db_move(rev: str, *, up: bool, db: str | None = None) -> str | None:
    """Migrate the quote store's schema up or down to `rev`; the revision it is at afterwards."""
    from gpuplan.quotes.store import move_schema

    return move_schema(rev, up=up, db=db)


def quotes_db_history() -> list[tuple[str, str]]:
    """The quote store's schema revisions, newest first."""
    from gpuplan.quotes.store import schema_history

    return schema_history()


def quotes_trend(*, db: str | None = None, quotes: str | Path | None = None, gpu: str | None = None,
                 mode: str | None = None) -> list[dict[str, Any]]:
    """The drift of each (GPU, mode) in a quote history, with its uncertainty (log-linear fit)."""
    from gpuplan.quotes.trend import fit_trends

    gpu = _quote_gpu(gpu)
    qs = quotes_read_csv(quotes) if quotes is not None else quotes_list(db=db, gpu=gpu, mode=mode)
    return [f.to_json() for f in fit_trends(qs) if (gpu is None or f.gpu == gpu) and (mode is None or f.mode == mode)]


# --- report: the decision pack --------------------------------------------------------------------


def report(
    scenario: str | Path,
    *,
    audit_files: Sequence[str | Path] = (),
    quotes: str | Path | None = None,
    db: str | None = None,
    lang: Lang = "en",
    paths: int = 10_000,
    seed: int = 0,
    catalog: str | Path | None = None,
) -> DecisionPack:
    """The decision pack: compare, plan, commit and vendors of one scenario (and the audit of
    `audit_files`, priced at the plan's leased offer), and the answer drawn from them."""
    from gpuplan.engines.pack import decision_summary
    from gpuplan.render.plan import plan_json

    if quotes is not None and db is not None:
        raise GpuplanError("give either --quotes or --db, not both", field="--quotes",
                           hint="--quotes reads a quotes CSV; --db a quotes database.")
    cat = _catalog(catalog)
    scen = _scenario(scenario, cat)
    cmp = compare(scen, catalog=cat, hours_curves=True)
    plan_doc = plan_json(plan_document(scen, lang=lang, catalog=cat))
    com = commit(scen, paths=paths, seed=seed, lang=lang, catalog=cat, quotes=quotes, db=db)
    ven = cmp.vendors()
    audit_doc = None
    if audit_files:
        leased = next((p.get("offer_bare_metal") for p in plan_doc.get("pools") or [] if p.get("offer_bare_metal")),
                      None)
        rep = audit(audit_files, offer=leased, scenario=scenario if leased else None, catalog=catalog,
                    currency=scen.currency)
        audit_doc = rep.to_json()
    # a bought server is billed like a lease (mode bare-metal) and carries `owned`: the pack says "buy"
    offers = [{"id": o.id, "gpu": o.gpu, "mode": "owned" if o.owned is not None else o.mode, "source": o.source}
              for o in scen.offers]
    runs = [r for g in com.view["gpus"] for r in g["runs"]]
    summary = decision_summary(plan_doc, com.to_json(), runs, offers)
    from gpuplan.contracts.results.pack import DecisionPack

    return DecisionPack(summary=summary, compare=cmp, plan=plan_doc, commit=com, vendors=ven, audit=audit_doc,
                        scenario=str(scen.path or scenario))
