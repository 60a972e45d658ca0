"""Which lease terms to sign (`gpuplan commit`): a ladder of terms against price drift and demand risk.

The model (monthly steps m = 0 .. H-1 over a horizon of H months of M = days_per_month x 24 hours):

    demand      the plan's hourly pool demand per GPU type (the workloads' schedules, repeated: month m
                is hours [m M, (m+1) M) of the schedule tiled over the horizon), times k_m = (1+g)^m
    paths       P Monte Carlo paths (seeded numpy Generator); each path draws, uniformly in the
                scenario's ranges, a container price drift r_c and a bare-metal drift r_b per year and a
                demand growth g per month. The same paths price every strategy (common random numbers).
    prices      a random walk in log price per tier: index_0 = 1,
                    ln index_(m+1) = ln index_m + ln(1 + r)/12 + sigma sqrt(1/12) z_m,   z_m ~ N(0, 1)
                with sigma the tier's volatility a year (0: the price follows its drift exactly, as in
                version 1). The drift is the median path's (log) trend; paths can fall and rebound.
    ladder      tranches (offer, term T months, cards, start month s) with s + T <= H; cards leased in
                month m: L_m = sum of tranches running in m (whole nodes when leased by the node)
    lease       a tranche pays term price x bare-metal index_s (signed at s, fixed for its term) for
                billed cards x T x M hours (`Tariff.lease_rental`), plus ops per card-month (ops per node
                spread over its cards, as the container ops are)
    containers  what the lease does not cover: spill_m(L) = sum_t max(0, k_m d_t - L) dedicated GPU-hours,
                x slowdown x (container price x container index_m + ops per GPU-hour) (`Tariff.container_cost`
                with a drifting price); elastic work always runs here
    overtime    each bare-metal offer b runs the work s_b times as long (`pricing.pool_slowdown` with b, as
                `plan` bills its lease): every dedicated GPU-hour the leased cards serve takes s_b - 1
                card-hours more, bought at b's own price in that month (price x bare-metal index_m) plus
                ops per card-hour: o_(b,m) = (s_b - 1)(p_b index_m + ops_b). With W_m the pool's dedicated
                GPU-hours and u_m the container price of one (slowdown x (price x index_m + ops)):
                    containers + overtime = u_m spill_m(L) + o_(b,m) (k W_m - spill_m(L))
                                          = (u_m - o_(b,m)) spill_m(L) + o_(b,m) k W_m
                so a spilled GPU-hour is worth u - o: F_m below is taken with that weight plus the
                constant o k W. Signed cards pay the overtime of the work they serve at their offer's
                s_b and price as signed. A ladder of several offers is priced at their highest o (an
                upper bound; each offer alone is exact)
    setup       the lease's one-off setup labour, once if anything is leased
    spot        work `plan` puts on spot (issue 26: `planner._spot_choice`, lost work included) leaves the
                pool and runs on the spot offer like elastic work: its dedicated GPU-hours x m_spot (GPU-hours
                used per scheduled one, reclaims included) x (spot price x the container index + ops): spot
                prices drift with the container market

The search is exact. Expected cost = sum of tranche costs (linear in cards) + sum_m F_m(L_m), where
F_m(L) = E[(u - o) spill_m(L) + o k W_m] is convex and decreasing in L while u - o > 0 (a max(0, .) of a
line, summed and averaged with non-negative weights; o = 0 where s_b = 1). The pinned floor's layers are
served whatever they cost (the work that requires bare metal runs there); above it a card is leased for a
month only where it saves money, so where u - o <= 0 no card above the floor is leased. Writing F_m as
F_m(pinned) plus its increments Delta_m(j) (increasing in j) gives a mixed-integer program: minimise
sum a_(T,s) x_(T,s) + sum Delta_m(j) y_(m,j) subject to sum_(j >= pinned) y_(m,j) <= L_m - pinned,
L_m >= pinned, 0 <= y <= 1, x whole. Its constraint matrix is an interval matrix (each tranche covers
consecutive months) plus unit columns: totally unimodular, so a basic optimum of the LP relaxation is
whole; HiGHS's dual simplex finds one (scipy.optimize.linprog), and HiGHS's integer solver (milp) decides
in the unlikely case that numerical trouble leaves it fractional. F_m is computed exactly from the
demand's levels and the paths sorted by demand scale (no sizes x paths array). The setup labour is a
fixed charge: the best ladder is the cheaper of all-container and the program's optimum plus setup,
which is exact for one bare-metal offer per GPU (several offers: each alone and all together
are solved, the cheapest kept). tests/unit/test_commit.py checks it against brute force.

Compared with:
    all_container   L_m = 0
    single_term[T]  one pool of R cards on term T from month 0, renewed back to back while a renewal
                    fits the horizon (later months on containers); R chosen for the lowest expected cost
    hindsight       per path, the cheapest of: all-container, every single-term pool of every size R (up to
                    64 lease units; above, 65 sizes spread over the range and each term's best), the
                    ladder; regret = ladder - hindsight >= 0 on each path (a lower bound on the regret
                    against every ladder in hindsight, which would need a program per path)

Exits along each path: the ladder is chosen for the expected cost with leases run to term; it is then
priced with its exit clauses used. At each month m inside a tranche whose term has `early_exit` = e, on
each path, the lease is left when what the rest of the term costs,
    rent_rest + ops_rest                                (rent fixed at signing)
is more than leaving:
    e x rent_rest + containers for the work its cards carry over the rest of the term
at today's container price and demand scale on that path (a myopic rule: no look-ahead on the path).
`exit_probability` is the share of paths on which a tranche is left early; `against.no_exit` is the same
ladder with exits disallowed. The rule is used only where it lowers the expected cost (a myopic exit can
be regretted when prices rebound); otherwise leases run to term. Money is the whole horizon's total, in
the scenario's currency.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from gpuplan.engines.alternatives import GpuChoice
from gpuplan.engines.pricing import cheapest, cheapest_spot, pool_slowdown, pool_workloads
from gpuplan.errors import GpuplanError, ScenarioError
from gpuplan.inputs.catalog import Catalog
from gpuplan.inputs.demand import from_schedules, workload_curve
from gpuplan.inputs.market import DEFAULT_HORIZON_MONTHS, LeaseTerm, default_term
from gpuplan.inputs.scenario_types import Offer, Range, Scenario, Workload
from gpuplan.models.tariff import Tariff

DEFAULT_PATHS = 10_000
DEFAULT_SEED = 0
PINNED = frozenset({"compliance", "custom-driver"})
Pair = tuple[float, float]


@dataclass(frozen=True)
class Drifts:
    """The ranges the paths are drawn from, and where each came from (scenario, quotes, flat)."""

    container: Pair
    bare_metal: Pair
    growth: Pair
    source: dict[str, str] = field(default_factory=dict)  # "container" -> "scenario" | "quotes" | "flat"
    container_volatility: float = 0.0  # a year: the standard deviation of log price moves
    bare_metal_volatility: float = 0.0


@dataclass(frozen=True)
class Paths:
    """Common random numbers: one draw per path of the container and bare-metal drift (per year) and
    the demand growth (per month), and each tier's price index by month (the random walk of the module
    docstring; (months, paths), month 0 = 1)."""

    rc: np.ndarray
    rb: np.ndarray
    g: np.ndarray
    container_index: np.ndarray
    bare_metal_index: np.ndarray

    @classmethod
    def draw(cls, drifts: Drifts, n: int, seed: int, months: int = 0) -> Paths:
        rng = np.random.default_rng(seed)
        u = rng.random((3, n))  # drawn first: version 1's paths are unchanged

        def scale(r: Pair, x: np.ndarray) -> np.ndarray:
            return r[0] + (r[1] - r[0]) * x

        rc, rb, g = scale(drifts.container, u[0]), scale(drifts.bare_metal, u[1]), scale(drifts.growth, u[2])
        z = rng.standard_normal((2, max(months - 1, 0), n))
        m = np.arange(months, dtype=np.float64)[:, None] / 12.0

        def walk(r: np.ndarray, vol: float, zz: np.ndarray) -> np.ndarray:
            shocks = np.zeros((months, n))
            if vol > 0 and months > 1:
                shocks[1:] = np.cumsum(zz, axis=0) * (vol * math.sqrt(1.0 / 12.0))
            return np.asarray(np.exp(m * np.log1p(r)[None, :] + shocks))

        return cls(rc, rb, g, walk(rc, drifts.container_volatility, z[0]),
                   walk(rb, drifts.bare_metal_volatility, z[1]))

    @property
    def n(self) -> int:
        return len(self.rc)


@dataclass(frozen=True)
class TermOption:
    """One term of one bare-metal offer, priced through the offer's tariff."""

    offer: str
    months: int
    price_per_gpu_hour: float
    early_exit: float | None
    tariff: Tariff
    ops_per_card_hour: float
    slowdown: float = 1.0  # s_b: the pool's work on this offer (`pricing.pool_slowdown`), as plan bills it


@dataclass(frozen=True)
class Tranche:
    gpu: str
    offer: str
    term_months: int
    cards: int
    start_month: int
    exit_probability: float = 0.0  # share of paths on which the lease is left before its term ends


@dataclass(frozen=True)
class Costs:
    """A strategy's total cost over the horizon on every path."""

    per_path: np.ndarray

    @property
    def expected(self) -> float:
        return float(self.per_path.mean())

    def quantile(self, q: float) -> float:
        return float(np.quantile(self.per_path, q))


@dataclass(frozen=True)
class Threshold:
    """The container drift a year at which a tranche of `cards` on `months` stops paying off."""

    gpu: str
    offer: str
    months: int
    cards: int
    drift: float | None  # None: no drift in (-99%, +1000%) a year changes the answer
    wins_at_mid: bool


@dataclass(frozen=True)
class GpuCommit:
    gpu: str
    offer_container: str
    terms: tuple[TermOption, ...]
    tranches: tuple[Tranche, ...]
    cost: Costs
    all_container: Costs
    single_term: dict[int, Costs]  # term months -> the best single pool on that term
    single_term_cards: dict[int, int]
    hindsight: np.ndarray
    monthly: np.ndarray  # (months, paths): the ladder's cost in each month
    leased: np.ndarray  # (months,) cards leased in each month
    steady_cards: float  # base demand exceeded in every hour of the first month
    all_container_monthly: np.ndarray  # (months,) expected all-container cost in each month
    thresholds: tuple[Threshold, ...]
    step: int
    no_exit: Costs | None = None  # the ladder with leases run to term (None: no term has an exit clause)
    bands: dict[str, np.ndarray] = field(default_factory=dict)  # tier -> (3, months): p10, p50, p90 price


@dataclass(frozen=True)
class CommitResult:
    scenario: Scenario
    currency: str
    horizon_months: int
    paths: int
    seed: int
    drifts: Drifts
    gpus: tuple[GpuCommit, ...]
    cost: Costs
    all_container: Costs
    single_term: dict[int, Costs]
    hindsight: np.ndarray
    monthly: np.ndarray  # (months, paths), all GPU types
    no_exit: Costs | None = None
    choices: dict[str, GpuChoice] = field(default_factory=dict)  # workloads listing several GPUs: which and why

    @property
    def tranches(self) -> list[Tranche]:
        return [t for g in self.gpus for t in g.tranches]

    @property
    def regret(self) -> np.ndarray:
        return self.cost.per_path - self.hindsight


# ------------------------------------------------------------------------------------------ inputs


def horizon_months(scenario: Scenario, override: int | None = None) -> int:
    if override is not None:
        return override
    if scenario.market is not None and scenario.market.horizon_months is not None:
        return scenario.market.horizon_months
    return DEFAULT_HORIZON_MONTHS


def term_options(scenario: Scenario, offer: Offer, horizon: int) -> list[TermOption]:
    """The offer's terms (its `terms`, else its price for its min_term); a term longer than the horizon is refused."""
    terms: tuple[LeaseTerm, ...] = offer.terms or (
        default_term(offer.min_term_hours, offer.price_per_gpu_hour.mid, scenario.days_per_month),)
    if offer.owned is not None and not offer.terms:  # bought servers: held to the horizon's end (one long
        # term at their price per hour held; resold at book value after it, see models.owned)
        terms = (LeaseTerm(horizon, offer.price_per_gpu_hour.mid, None, f"offers[{scenario.offers.index(offer)}]"),)
    idx = scenario.offers.index(offer)
    out = []
    for t in terms:
        if t.months > horizon:
            where = f"{t.field}.length" if t.field else f"offers[{idx}].min_term"
            raise ScenarioError(f"a {t.months}-month term is longer than the {horizon}-month horizon",
                                file=scenario.path, field=where,
                                hint="lengthen market.horizon (e.g. horizon: 24mo) or drop the term.")
        tariff = Tariff.of(offer, scenario, price=Range(t.price_per_gpu_hour, t.price_per_gpu_hour))
        out.append(TermOption(offer.id, t.months, t.price_per_gpu_hour, t.early_exit, tariff,
                              _ops_per_card_hour(tariff)))
    return out


def _ops_per_card_hour(t: Tariff) -> float:
    """Lease ops per card-hour: per GPU as given, per node (or per month) spread over a node's cards."""
    per = t.ops_hours * t.engineer_hour_cost / t.month_hours
    return per if t.ops_per == "gpu-month" else per / t.gpus_per_node


@dataclass(frozen=True)
class _Demand:
    """One GPU type's demand by month: each month's sorted hourly curve and its spill function."""

    xs: list[np.ndarray]  # breakpoints (0 and the sorted distinct demand values)
    ss: list[np.ndarray]  # spill at each breakpoint: sum_t max(0, d_t - x)
    levels: list[tuple[np.ndarray, np.ndarray]]  # distinct demand values > 0 and their hours
    peaks: np.ndarray
    elastic: np.ndarray  # elastic GPU-hours by month (base)
    pinned: float
    steady: float

    @classmethod
    def of(cls, pool: np.ndarray, elastic: np.ndarray, pinned: float, months: int, month_hours: int) -> _Demand:
        n = months * month_hours
        tiled = np.resize(pool, n).reshape(months, month_hours)
        el = np.resize(elastic, n).reshape(months, month_hours).sum(axis=1)
        xs, ss, levels = [], [], []
        for row in tiled:
            d = np.sort(row)
            vals, counts = np.unique(d[d > 0], return_counts=True)
            levels.append((vals, counts.astype(np.float64)))
            x = np.unique(np.concatenate([[0.0], d]))
            # spill at x: sum of d > x minus x times their count
            idx = np.searchsorted(d, x, side="right")
            suffix = np.concatenate([np.cumsum(d[::-1])[::-1], [0.0]])
            xs.append(x)
            ss.append(suffix[idx] - x * (len(d) - idx))
        return cls(xs, ss, levels, tiled.max(axis=1), el, pinned, float(tiled[0].min()) if months else 0.0)

    def spill(self, m: int, cards: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Dedicated GPU-hours above `cards` in month m at demand scale k (broadcast): k x S(cards / k)."""
        vals, hours = self.levels[m]
        if len(vals) <= 8:  # a few demand levels (schedules): sum of h max(0, k d - cards), no search
            out = np.zeros(np.broadcast_shapes(np.shape(cards), np.shape(k)))
            for d, n in zip(vals, hours, strict=True):
                out += n * np.maximum(k * d - cards, 0.0)
            return out
        return k * np.interp(cards / k, self.xs[m], self.ss[m], right=0.0)

    def expected(self, m: int, cards: np.ndarray, k: np.ndarray, w: np.ndarray) -> np.ndarray:
        """mean over paths p of w_p x spill_m(cards; k_p), for every value in `cards`, without a
        cards x paths array: spill = sum over demand levels d (h hours each) of h max(0, k d - cards), and
        for each level the paths with k > cards / d are a suffix of the paths sorted by k."""
        order = np.argsort(k, kind="stable")
        ks = k[order]
        sa = np.concatenate([np.cumsum((w * k)[order][::-1])[::-1], [0.0]])
        sb = np.concatenate([np.cumsum(w[order][::-1])[::-1], [0.0]])
        out = np.zeros(len(cards))
        for d, hours in zip(*self.levels[m], strict=True):
            i = np.searchsorted(ks, cards / d, side="right")
            out += hours * (d * sa[i] - cards * sb[i])
        if bool(np.all(w >= 0)):  # rounding only; a weight below 0 (overtime above the container price) is real
            out = np.maximum(out, 0.0)
        return out / max(len(k), 1)


def default_drifts(scenario: Scenario, quotes: dict[str, Pair] | None = None) -> Drifts:
    """The scenario's ranges; where it gives none, the quote history's fit (`quotes`), else a flat market."""
    mk = scenario.market
    src: dict[str, str] = {}

    def pick(name: str, given: Pair | None) -> Pair:
        if given is not None:
            src[name] = "scenario"
            return given
        if quotes and name in quotes:
            src[name] = "quotes"
            return quotes[name]
        src[name] = "flat"
        return (0.0, 0.0)

    c = pick("container", mk.container_price_drift if mk else None)
    b = pick("bare_metal", mk.bare_metal_price_drift if mk else None)
    g = pick("growth", mk.demand_growth if mk else None)
    vols = {}
    for name, given in (("container_volatility", mk.container_price_volatility if mk else None),
                        ("bare_metal_volatility", mk.bare_metal_price_volatility if mk else None)):
        if given is not None:
            src[name], vols[name] = "scenario", float(given)
        elif quotes and name in quotes:
            src[name], vols[name] = "quotes", float(quotes[name][0])
        else:
            src[name], vols[name] = "flat", 0.0
    for name, r in (("container", c), ("bare_metal", b), ("growth", g)):
        if r[0] <= -1:
            field_ = {"container": "container_price_drift", "bare_metal": "bare_metal_price_drift",
                      "growth": "demand_growth"}[name]
            raise ScenarioError(f"a drift of {r[0]:.0%} makes prices (or demand) zero or negative",
                                file=scenario.path, field=f"market.{field_}",
                                hint="a drift is a yearly change above -100%, e.g. [-0.35, -0.10].")
    return Drifts(c, b, g, src, vols["container_volatility"], vols["bare_metal_volatility"])


# ------------------------------------------------------------------------------------------ engine


def commit(scenario: Scenario, cat: Catalog, *, paths: int = DEFAULT_PATHS, seed: int = DEFAULT_SEED,
           horizon: int | None = None, drifts: Drifts | None = None) -> CommitResult:
    """The ladder per GPU type and what it is compared with (see the module docstring)."""
    if paths < 1:
        raise GpuplanError(f"--paths must be at least 1, got {paths}", field="--paths")
    h = horizon_months(scenario, horizon)
    dr = drifts or default_drifts(scenario)
    pth = Paths.draw(dr, paths, seed, h)
    mh = int(round(scenario.days_per_month * 24))
    choices: dict[str, GpuChoice] = {}
    if any(len(w.gpus_allowed) > 1 for w in scenario.workloads):
        # each ongoing workload on the GPU `plan` chooses for it among those with a container offer;
        # one-off work on the GPU of its cheapest option (as plan's projects), never sizing the others
        from gpuplan.engines.planner import choose_gpus, project_gpu

        ongoing = tuple(w for w in scenario.workloads if not w.once)
        chosen, choices = choose_gpus(replace(scenario, workloads=ongoing), cat, need_container=True)
        by_id = {w.id: w for w in chosen}
        for w in scenario.workloads:
            if w.once:
                by_id[w.id] = project_gpu(w, scenario, cat, need_container=True)
        scenario = replace(scenario, workloads=tuple(by_id[w.id] for w in scenario.workloads))
    # ongoing schedules repeat over the horizon; one-off work (`once: true`) runs in its own months only
    standing = [w for w in scenario.workloads if not w.once]
    demand = from_schedules(standing)
    n = h * mh
    curves = {w.id: np.resize(demand.by_workload[w.id], n) for w in standing}
    weights = {w.id: float(demand.by_workload[w.id].sum()) for w in standing}
    for w in scenario.workloads:
        if w.once:
            curves[w.id] = workload_curve(w, n)
            weights[w.id] = float(curves[w.id].sum())
    gpus = []
    for gpu in sorted({w.gpus_allowed[0] for w in scenario.workloads}):
        gpus.append(_commit_gpu(scenario, cat, gpu, curves, weights, pth, h, mh))
    total = sum((g.cost.per_path for g in gpus), np.zeros(paths))
    allc = sum((g.all_container.per_path for g in gpus), np.zeros(paths))
    terms = sorted({t.months for g in gpus for t in g.terms})
    single = {}
    for t in terms:  # a GPU without that term keeps its own best (all containers when it has no lease)
        single[t] = Costs(sum((g.single_term[t].per_path if t in g.single_term else g.all_container.per_path
                               for g in gpus), np.zeros(paths)))
    hind = sum((g.hindsight for g in gpus), np.zeros(paths))
    monthly = sum((g.monthly for g in gpus), np.zeros((h, paths)))
    no_exit = None
    if any(g.no_exit is not None for g in gpus):
        no_exit = Costs(sum(((g.no_exit or g.cost).per_path for g in gpus), np.zeros(paths)))
    return CommitResult(scenario, scenario.currency, h, paths, seed, dr, tuple(gpus), Costs(total), Costs(allc),
                        single, hind, monthly, no_exit, {k: v for k, v in choices.items() if v.moved})


def _single_terms(options: list[TermOption], dem: _Demand,
                  by_offer: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], elastic_cost: np.ndarray,
                  all_ct: np.ndarray, hind: np.ndarray, tranche_unit_cost: Callable[[TermOption, int], np.ndarray],
                  k: np.ndarray, unit: np.ndarray, h: int, step: int, J: int,
                  P: int) -> tuple[dict[int, Costs], dict[int, int], np.ndarray]:
    """Single-term pools: per term, the size with the lowest expected cost (over every size) and its cost per
    path; and `hind`, the hindsight minimum per path, lowered by every size tried (up to 64 lease units,
    else 65 sizes spread over 0..J and each term's best size). `by_offer`: per bare-metal offer, the expected
    container cost and lease overtime by month and pool size, the price of a spilled GPU-hour (container
    unit less the offer's overtime rate) and the overtime of all the work, by month and path; `unit`: the
    container price of a dedicated GPU-hour; `all_ct`: all-container cost per path."""
    single: dict[int, Costs] = {}
    single_cards: dict[int, int] = {}
    lo_units = math.ceil(dem.pinned / step - 1e-9)
    sizes = np.arange(J + 1)
    grid = sizes if J <= 64 else np.unique(np.round(np.linspace(0, J, 65)).astype(int))
    plans = []  # (option, cut, lease per unit per path, expected cost of each size, best size)
    for o in options:
        cut = (h // o.months) * o.months
        if cut < h and lo_units > 0:
            continue  # pinned work cannot run in containers in the months the pool leaves uncovered
        lease = sum((tranche_unit_cost(o, s) for s in range(0, cut, o.months)), np.zeros(P))
        F = by_offer[o.offer][0]
        means = float(lease.mean()) * sizes + F[:cut].sum(axis=0) + F[cut:, 0].sum() \
            + float(elastic_cost.sum(axis=0).mean()) + np.where(sizes > 0, o.tariff.setup_cost, 0.0)
        means[:lo_units] = np.inf
        plans.append((o, cut, lease, means, int(np.argmin(np.round(means, 6)))))
    g = np.unique(np.concatenate([grid, [x[4] for x in plans]])).astype(int)
    g = g[g >= lo_units]
    # containers (and overtime) per path for each size in g over months 0..cut-1, per offer, one pass over months
    at_cut: dict[tuple[str, int], np.ndarray] = {}
    cuts = {x[1] for x in plans}
    for offer in sorted({x[0].offer for x in plans}):
        _f, u_o, c_o = by_offer[offer]
        run = np.zeros((len(g), P))
        at_cut[(offer, 0)] = run.copy()
        for m in range(max(cuts, default=0)):
            run += dem.spill(m, (g * step).astype(np.float64)[:, None], k[m][None, :]) * u_o[m][None, :] \
                + c_o[m][None, :]
            if m + 1 in cuts:
                at_cut[(offer, m + 1)] = run.copy()
    zero_run = np.zeros(P)
    zero_at: dict[int, np.ndarray] = {0: zero_run.copy()}
    for m in range(max(cuts, default=0)):
        zero_run = zero_run + dem.spill(m, np.zeros(P), k[m]) * unit[m]
        if m + 1 in cuts:
            zero_at[m + 1] = zero_run
    best: dict[int, tuple[float, np.ndarray, int]] = {}
    for o, cut, lease, means, r in plans:
        rest = all_ct - zero_at[cut]  # containers in the months the pool does not cover, and elastic work
        per = at_cut[(o.offer, cut)] + lease[None, :] * g[:, None] + rest[None, :] \
            + np.where(g > 0, o.tariff.setup_cost, 0.0)[:, None]
        hind = np.minimum(hind, per.min(axis=0))
        if o.months not in best or means[r] < best[o.months][0]:
            best[o.months] = (float(means[r]), per[int(np.searchsorted(g, r))], r * step)
    for t, (_, per_r, cards) in sorted(best.items()):
        single[t] = Costs(per_r)
        single_cards[t] = cards
    return single, single_cards, hind


def _commit_gpu(scenario: Scenario, cat: Catalog, gpu: str, curves: dict[str, np.ndarray],
                weights: dict[str, float], pth: Paths, h: int, mh: int) -> GpuCommit:
    """One GPU type's ladder; `curves`: each workload's hourly demand over the whole horizon."""
    wls = [w for w in scenario.workloads if w.gpus_allowed[0] == gpu]
    n = h * mh
    zeros = np.zeros(n)
    elastic = sum((curves[w.id] for w in wls if "elastic" in w.requires), zeros)
    pinned = sum((curves[w.id] for w in wls if w.requires & PINNED), zeros)
    pool = sum((curves[w.id] for w in wls if "elastic" not in w.requires), zeros)
    committed, committed_cost = _committed(scenario, gpu, n, mh, h)
    signed_served = np.minimum(pool, committed).reshape(h, mh).sum(axis=1) if n else np.zeros(h)
    pool = np.maximum(pool - committed, 0.0)  # cards already signed serve first, at no new rental
    ct = cheapest(scenario, gpu, "container", [w for w in wls if "elastic" not in w.requires] or wls, cat, weights)
    bms = [o for o in scenario.offers if o.gpu == gpu and o.mode == "bare-metal"]
    spot_offer = cheapest_spot(scenario, gpu)
    spot_h = None
    if spot_offer is not None:
        from gpuplan.engines.planner import _spot_choice

        chosen = _spot_choice(wls, spot_offer, min(bms, key=lambda o: (o.price_per_gpu_hour.mid, o.id))
                              if bms else None, ct, scenario, cat)
        if chosen:
            on_spot = sum((curves[i] * chosen[i][2] for i in chosen), zeros)  # used GPU-hours
            pool = np.maximum(pool - sum((curves[i] for i in chosen), zeros), 0.0)
            spot_h = np.resize(on_spot, h * mh).reshape(h, mh).sum(axis=1)
    if ct is None:
        raise ScenarioError(f"`commit` needs a container offer for `{gpu}` (containers take what the leases leave)",
                            file=scenario.path, field="offers", hint="add a container offer for that GPU.")
    pool_wls = pool_workloads(scenario, gpu)
    sd = pool_slowdown(pool_wls, gpu, ct, cat, weights)
    sd_el = pool_slowdown([w for w in wls if "elastic" in w.requires] or wls, gpu, ct, cat, weights)
    ctar = Tariff.of(ct, scenario)
    dem = _Demand.of(pool, elastic, float(pinned.max()), h, mh)
    # s_b per bare-metal offer: the pool's work on that offer, as plan bills its lease (engines.planner)
    s_b = {b.id: pool_slowdown(pool_wls, gpu, b, cat, weights) for b in bms}
    options = [replace(o, slowdown=s_b[b.id]) for b in bms for o in term_options(scenario, b, h)]
    committed_cost = committed_cost + signed_served * _signed_overtime_rate(scenario, gpu, pool_wls, cat, weights)
    if float(pinned.max()) > 0 and not options:
        raise ScenarioError(f"work that requires bare metal needs a bare-metal offer for `{gpu}`",
                            file=scenario.path, field="offers", hint="add a bare-metal offer for that GPU.")
    steps = {o.tariff.step for o in options}
    step = max(steps) if steps else 1
    P = pth.n
    months = np.arange(h)
    k = (1.0 + pth.g)[None, :] ** months[:, None]  # (h, P)
    cm = pth.container_index
    unit = sd * (ctar.unit_price() * cm + ctar.ops_per_gpu_hour)  # per dedicated GPU-hour, (h, P)
    elastic_cost = (sd_el / sd) * unit * dem.elastic[:, None] * k  # (h, P)
    if spot_h is not None and spot_offer is not None:  # the spot tier runs off the lease, as elastic work does
        star = Tariff.of(spot_offer, scenario)
        elastic_cost = elastic_cost + (star.unit_price() * cm + star.ops_per_gpu_hour) * spot_h[:, None] * k
    list_price = {b.id: (Tariff.of(b, scenario).unit_price(), Tariff.of(b, scenario).ops_per_gpu_hour) for b in bms}
    priced = _overtime(list_price, s_b, pth, unit, k, dem)
    kmax = float(k.max()) if P else 1.0
    top_cards = math.ceil(max(float(dem.peaks.max()) * kmax, dem.pinned) / step - 1e-9) * step if options else 0
    J = top_cards // step
    R = (np.arange(J + 1) * step).astype(np.float64)

    # expected container cost (and lease overtime) by month for every pool size (h, J+1): the program's increments
    def expected_f(u: np.ndarray, c: np.ndarray) -> np.ndarray:
        f = np.zeros((h, J + 1))
        for m in range(h):
            f[m] = dem.expected(m, R, k[m], u[m]) + float(c[m].mean())
        return f

    F = expected_f(unit, np.zeros_like(unit))
    all_ct = np.zeros(P)
    for m in range(h):
        all_ct += dem.spill(m, np.zeros(P), k[m]) * unit[m]
    by_offer = {x: (expected_f(*priced([x])), *priced([x])) for x in s_b}  # offer -> (F, unit, constant)
    all_ct += elastic_cost.sum(axis=0) + float(committed_cost.sum())
    allc_monthly = F[:, 0] + elastic_cost.mean(axis=1) + committed_cost


    # bare-metal price index for a tranche signed at month s, per path
    def bfac(s: int) -> np.ndarray:
        return np.asarray(pth.bare_metal_index[s]) if s < h else np.asarray((1.0 + pth.rb) ** (s / 12.0))

    def tranche_unit_cost(o: TermOption, s: int) -> np.ndarray:
        """Per path: one lease unit (step cards) on term o from month s."""
        hours = o.months * o.tariff.month_hours
        return o.tariff.lease_rental(step, hours) * bfac(s) + o.ops_per_card_hour * step * hours

    # -- the exact ladder
    best_units, best_unit, best_const = _search(
        options, lambda sub: by_offer[sub[0]][0] if len(sub) == 1 else expected_f(*priced(sub)), priced,
        lambda o, s: float(tranche_unit_cost(o, s).mean()), F, h, J, math.ceil(dem.pinned / step - 1e-9))

    tranches = tuple(Tranche(gpu, options[i].offer, options[i].months, u * step, s)
                     for (i, s), u in sorted(best_units.items(), key=lambda kv: (kv[0][1], -options[kv[0][0]].months,
                                                                                  options[kv[0][0]].offer))
                     if u > 0)
    leased = np.zeros(h)
    lease_path = np.zeros(P)
    monthly = np.zeros((h, P))
    used_offers = set()
    for (i, s), u in best_units.items():
        if u <= 0:
            continue
        o = options[i]
        used_offers.add(o.offer)
        leased[s:s + o.months] += u * step
        c = u * tranche_unit_cost(o, s)
        lease_path += c
        monthly[s:s + o.months] += c[None, :] / o.months
    setup = sum(next(o.tariff.setup_cost for o in options if o.offer == x) for x in used_offers)
    for m in range(h):
        monthly[m] += dem.spill(m, np.full(P, leased[m]), k[m]) * best_unit[m] + best_const[m] + elastic_cost[m] \
            + committed_cost[m]
    if h:
        monthly[0] += setup
    ladder = Costs(monthly.sum(axis=0))
    no_exit = None
    exit_prob: dict[tuple[int, int], float] = {}
    if any(options[i].early_exit is not None for (i, _s), u in best_units.items() if u > 0):
        adaptive, exit_prob = _priced_with_exits(best_units, options, leased, step, dem, k, best_unit, elastic_cost,
                                                 tranche_unit_cost)
        adaptive = adaptive + best_const + committed_cost[:, None]  # the signed cards' ops (and unpaid rental)
        if h:
            adaptive[0] += setup
        if adaptive.sum(axis=0).mean() < ladder.expected:  # the rule is used only where it pays on average
            no_exit, monthly, ladder = ladder, adaptive, Costs(adaptive.sum(axis=0))
        else:
            exit_prob = {}
        tranches = tuple(Tranche(x.gpu, x.offer, x.term_months, x.cards, x.start_month,
                                 exit_prob.get((next(i for i, o in enumerate(options) if o.offer == x.offer
                                                     and o.months == x.term_months), x.start_month), 0.0))
                         for x in tranches)

    # -- single-term pools (the size with the lowest expected cost, over every size), and the hindsight
    # minimum per path (over every size up to 64 lease units, else 65 sizes spread over 0..J and each R*)
    hind = np.minimum(all_ct, ladder.per_path)
    if no_exit is not None:
        hind = np.minimum(hind, no_exit.per_path)
    single, single_cards, hind = _single_terms(options, dem, by_offer, elastic_cost, all_ct, hind, tranche_unit_cost,
                                               k, unit, h, step, J, P)

    thresholds = tuple(_thresholds(gpu, options, tranches, single_cards, dem, ctar, sd, pth, h, step, list_price))
    bands = {"container": np.quantile(ctar.unit_price() * cm, [0.1, 0.5, 0.9], axis=1)}
    if options:
        base = min(o.price_per_gpu_hour for o in options)
        bands["bare-metal"] = np.quantile(base * pth.bare_metal_index, [0.1, 0.5, 0.9], axis=1)
    return GpuCommit(gpu, ct.id, tuple(options), tranches, ladder, Costs(all_ct), single, single_cards, hind,
                     monthly, leased, dem.steady, allc_monthly, thresholds, step, no_exit, bands)


Priced = Callable[[list[str]], tuple[np.ndarray, np.ndarray]]


def _overtime(list_price: dict[str, tuple[float, float]], s_b: dict[str, float], pth: Paths, unit: np.ndarray,
              k: np.ndarray, dem: _Demand) -> Priced:
    """Lease overtime per offer b (module docstring): o_(b,m) = (s_b - 1) x (its own price x the bare-metal
    index + ops) per GPU-hour its cards serve. Returns, for a ladder of the offers `sub`, (the price of a
    spilled dedicated GPU-hour: unit - o, the overtime of all the work: o k W_m) by month and path; several
    offers: the highest rate (an upper bound). `list_price`: offer -> (price, ops) per GPU-hour."""
    rate = {b: (s_b[b] - 1.0) * (p * pth.bare_metal_index + ops) for b, (p, ops) in list_price.items()}
    work = np.array([float((v * c).sum()) for v, c in dem.levels]) if len(dem.levels) else np.zeros(0)

    def priced(sub: list[str]) -> tuple[np.ndarray, np.ndarray]:
        r = np.max([rate[x] for x in sub], axis=0) if sub else np.zeros_like(unit)
        return unit - r, r * k * work[:, None]

    return priced


def _search(options: list[TermOption], f_of: Callable[[list[str]], np.ndarray], priced: Priced,
            unit_cost: Callable[[TermOption, int], float], F: np.ndarray, h: int, J: int,
            pinned_units: int) -> tuple[dict[tuple[int, int], int], np.ndarray, np.ndarray]:
    """The exact ladder over the offers' subsets (each alone and all together; module docstring): its
    {(option index, start): units} and its (price of a spilled GPU-hour, overtime of all the work) by month
    and path. `f_of(sub)`: F_m for a ladder of `sub`; `F`: all containers' (F[:, 0] = no lease)."""
    zero = priced([])
    best_units: dict[tuple[int, int], int] = {}
    best_cost = math.inf
    best = zero
    offers = sorted({o.offer for o in options})
    for sub in ([offers] + ([[x] for x in offers] if len(offers) > 1 else [])) if options else []:
        opts = [o for o in options if o.offer in sub]
        units, obj = _solve(opts, f_of(sub), h, J, pinned_units, unit_cost)
        used = {opts[i].offer for (i, _s), u in units.items() if u > 0}
        setup = sum(next(o.tariff.setup_cost for o in options if o.offer == x) for x in used)
        if obj + setup < best_cost - 1e-9:
            best_cost = obj + setup
            best_units = {(options.index(opts[i]), s): u for (i, s), u in units.items()}
            best = priced(sorted(used))
    if pinned_units <= 0 and float(F[:, 0].sum()) <= best_cost + 1e-9 * max(1.0, abs(best_cost)):
        return {}, *zero
    return best_units, *best


def _priced_with_exits(units: dict[tuple[int, int], int], options: list[TermOption], leased: np.ndarray,
                       step: int, dem: _Demand, k: np.ndarray, unit: np.ndarray, elastic_cost: np.ndarray,
                       tranche_unit_cost: Any) -> tuple[np.ndarray, dict[tuple[int, int], float]]:
    """The ladder's cost by month on each path with its exit clauses used (the module docstring's rule),
    and each exiting tranche's exit probability. Setup is left to the caller."""
    h, P = unit.shape
    L = np.repeat(leased[:, None], P, axis=1)  # cards leased by month on each path
    lease = np.zeros((h, P))
    probs: dict[tuple[int, int], float] = {}
    for (i, s), u in sorted(units.items(), key=lambda kv: kv[0][1]):
        if u <= 0:
            continue
        o, cards, end = options[i], float(u * step), s + options[i].months
        per_month = u * tranche_unit_cost(o, s) / o.months  # (P,) rent at signing + ops
        ops_pm = u * o.ops_per_card_hour * step * o.tariff.month_hours
        rent_pm = per_month - ops_pm
        exit_at = np.full(P, end)
        if o.early_exit is not None:
            active = np.ones(P, dtype=bool)
            for m in range(s + 1, end):
                rest = end - m
                carried = sum((dem.spill(j, L[j] - cards, k[m]) - dem.spill(j, L[j], k[m]) for j in range(m, end)),
                              np.zeros(P))
                leave = o.early_exit * rent_pm * rest + carried * unit[m]
                go = active & (leave < per_month * rest)
                if go.any():
                    exit_at[go] = m
                    active &= ~go
                    L[m:end, go] -= cards
            probs[(i, s)] = float((exit_at < end).mean())
        for m in range(s, end):
            lease[m] += np.where(m < exit_at, per_month, 0.0)
        left = exit_at < end
        if left.any():
            fee = (o.early_exit or 0.0) * rent_pm * (end - exit_at)
            np.add.at(lease, (exit_at[left], np.nonzero(left)[0]), fee[left])
    monthly = lease + elastic_cost
    for m in range(h):
        monthly[m] += dem.spill(m, L[m], k[m]) * unit[m]
    return monthly, probs


def _committed(scenario: Scenario, gpu: str, n: int, mh: int, h: int) -> tuple[np.ndarray, np.ndarray]:
    """Cards already signed for `gpu` (`commitments:`) in each hour of the horizon, and what they still
    cost in each month: ops per card-hour (the offer's tariff) for the hours they run, plus the rental
    where `paid: false` (owed whatever the ladder does). Each runs from the start to its `until`."""
    cards = np.zeros(n)
    cost = np.zeros(h)
    for c in scenario.commitments:
        offer = scenario.offer(c.offer)
        if offer.gpu != gpu:
            continue
        end = int(min(n, math.ceil(c.until_hours - 1e-9)))
        cards[:end] += c.cards
        tariff = Tariff.of(offer, scenario)
        per_hour = _ops_per_card_hour(tariff) * c.cards
        if not c.paid:
            per_hour += tariff.lease_rental(c.cards, 1.0)
        hours = np.clip(end - np.arange(h) * mh, 0, mh).astype(np.float64)
        cost += per_hour * hours
    return cards, cost


def _signed_overtime_rate(scenario: Scenario, gpu: str, pool_wls: list[Workload], cat: Catalog,
                          weights: dict[str, float]) -> float:
    """Lease overtime per GPU-hour the signed cards (`commitments:`) serve: (s_b - 1) x (price + ops per
    GPU-hour) of their own offer, at its price as signed (no drift), averaged over the signings by cards."""
    mine = [c for c in scenario.commitments if scenario.offer(c.offer).gpu == gpu]
    cards = sum(c.cards for c in mine)
    if cards <= 0:
        return 0.0
    total = 0.0
    for c in mine:
        offer = scenario.offer(c.offer)
        t = Tariff.of(offer, scenario)
        total += c.cards * (pool_slowdown(pool_wls, gpu, offer, cat, weights) - 1.0) * (t.unit_price()
                                                                                      + t.ops_per_gpu_hour)
    return total / cards


def _solve(opts: list[TermOption], F: np.ndarray, h: int, J: int, pinned_units: int,
           unit_cost: object) -> tuple[dict[tuple[int, int], int], float]:
    """The mixed-integer program of the module docstring; returns {(option index, start): units} and
    the expected cost without setup."""
    from scipy.optimize import Bounds, LinearConstraint, linprog, milp
    from scipy.sparse import coo_matrix

    assert callable(unit_cost)
    xs = [(i, s) for i, o in enumerate(opts) for s in range(h - o.months + 1)]
    delta = np.diff(F, axis=1)  # (h, J): increasing in j (F convex)
    # the pinned cards serve their layers whatever they cost (the work that requires bare metal runs there, as
    # plan's pool serves min(d, R)); above them only the increments that save money: a card whose month would
    # save nothing is never leased for it
    ys = [(m, j) for m in range(h) for j in range(pinned_units, J) if delta[m, j] < 0]
    nx, ny = len(xs), len(ys)
    c = np.concatenate([[unit_cost(opts[i], s) for i, s in xs], [delta[m, j] for m, j in ys]])
    rows, cols, vals = [], [], []
    # rows 2m: sum_(j >= pinned) y_mj - sum_active x <= -pinned ; rows 2m+1: -sum_active x <= -pinned
    for col, (i, s) in enumerate(xs):
        for m in range(s, s + opts[i].months):
            rows += [2 * m, 2 * m + 1]
            cols += [col, col]
            vals += [-1.0, -1.0]
    for n, (m, _j) in enumerate(ys):
        rows.append(2 * m)
        cols.append(nx + n)
        vals.append(1.0)
    A = coo_matrix((vals, (rows, cols)), shape=(2 * h, nx + ny)).tocsr()
    ub = np.full(2 * h, -float(pinned_units))  # rows 2m: the layers above the pinned ones
    upper = np.concatenate([np.full(nx, float(max(J, pinned_units))), np.ones(ny)])
    # The relaxation's basic optimum is whole (interval matrix: totally unimodular); the dual simplex
    # returns a basic one. Should it not be whole (numerical trouble), the integer program decides.
    lp = linprog(c, A_ub=A, b_ub=ub, bounds=np.stack([np.zeros(nx + ny), upper], axis=1), method="highs-ds")
    if lp.status == 0 and np.allclose(lp.x[:nx], np.round(lp.x[:nx]), atol=1e-7):
        xval, fun = lp.x, float(lp.fun)
    else:
        integrality = np.concatenate([np.ones(nx), np.zeros(ny)])
        res = milp(c, constraints=LinearConstraint(A, np.full(2 * h, -np.inf), ub), integrality=integrality,
                   bounds=Bounds(np.zeros(nx + ny), upper), options={"mip_rel_gap": 0.0})
        if res.x is None:
            raise GpuplanError(f"no ladder covers the work that requires bare metal ({pinned_units} units)",
                               field="offers", hint="give the bare-metal offer a term that fits the horizon.")
        xval, fun = res.x, float(res.fun)
    x = np.round(xval[:nx]).astype(int)
    units = {xs[n]: int(x[n]) for n in range(nx) if x[n] > 0}
    return units, fun + float(F[:, pinned_units].sum())


def _thresholds(gpu: str, options: list[TermOption], tranches: tuple[Tranche, ...], single_cards: dict[int, int],
                dem: _Demand, ctar: Tariff, sd: float, pth: Paths, h: int, step: int,
                list_price: dict[str, tuple[float, float]]) -> list[Threshold]:
    """Per term: the container drift a year at which its cards (the ladder's on that term, else the
    best single pool's) cost as much leased for one term from month 0 as in containers, with demand
    growth and bare-metal drift at their means. Leasing wins above the drift, loses below it. The GPU-hours
    the cards serve pay the offer's lease overtime, (s_b - 1) x (its price x (1 + bare-metal drift)^(m/12)
    + ops per GPU-hour) each (`list_price`: offer -> (price, ops) per GPU-hour)."""
    g = float(pth.g.mean()) if pth.n else 0.0
    rb = float(pth.rb.mean()) if pth.n else 0.0
    out = []
    for o in options:
        cards = max((t.cards for t in tranches if t.offer == o.offer and t.term_months == o.months), default=0)
        if cards <= 0:
            cards = single_cards.get(o.months, 0) or step
        hours = o.months * o.tariff.month_hours
        lease = o.tariff.lease_rental(cards, hours) + o.ops_per_card_hour * cards * hours
        saved = []
        for m in range(o.months):
            km = np.array([(1 + g) ** m])
            saved.append(float((dem.spill(m, np.zeros(1), km) - dem.spill(m, np.array([float(cards)]), km))[0]))
        saved_h = np.array(saved)  # the lease is signed at month 0: today's price

        mm = np.arange(len(saved_h))
        price, ops = list_price[o.offer]
        over = (o.slowdown - 1.0) * (price * (1 + rb) ** (mm / 12.0) + ops)  # per GPU-hour the cards serve

        def gain(r: float, saved_h: np.ndarray = saved_h, lease: float = lease, over: np.ndarray = over,
                 mm: np.ndarray = mm) -> float:
            c = sd * (ctar.unit_price() * (1 + r) ** (mm / 12.0) + ctar.ops_per_gpu_hour)
            return float(((c - over) * saved_h).sum()) - lease

        lo, hi = -0.99, 10.0
        wins_mid = gain(float(pth.rc.mean()) if pth.n else 0.0) > 0
        if gain(lo) > 0 or gain(hi) < 0:
            out.append(Threshold(gpu, o.offer, o.months, cards, None, wins_mid))
            continue
        for _ in range(60):
            mid = (lo + hi) / 2
            if gain(mid) > 0:
                hi = mid
            else:
                lo = mid
        out.append(Threshold(gpu, o.offer, o.months, cards, (lo + hi) / 2, wins_mid))
    return out
