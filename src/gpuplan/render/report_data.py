"""Chart series and assumption lists for the HTML reports: plain data in, plain data out.

The HTML renderer (`gpuplan.render.html`) only lays these out. Numbers shown as text come from each
command's `-o json` contract; the one curve that is not in a contract (compare: cost against hours
per day) comes from the engine (`advise.hours_curves`, through `api.compare(..., hours_curves=True)`).

Optional keys read from the other commands' JSON when present (the contracts do not require them):
- plan:     `curve[].cost_per_month_low|high` (price band), `pools[].demand.hourly` (GPUs per hour, the
            demand curve) and `pools[].demand.start` (ISO time of its first hour).
- audit:    `gpus[].timeline = {"start": ISO, "step_s": seconds, "util": [ratio or null, ...]}` (heat map);
            without it the heat map has one column, the GPU's mean.
- simulate: `cost.total` (or `cost.total_mid`), `cost.total_low|high`, `wait_hours.mean`.
"""

from __future__ import annotations

import math
from typing import Any


def breakdown(workload_json: dict[str, Any]) -> dict[str, Any]:
    """Stacks for the cost breakdown bars of one workload (`compare_json` workload object).

    Rental is split into the part that paid for work and the idle part (idle is a part of rental,
    not added to it), so the bar's height is the total."""
    opts = workload_json["options"]
    return {
        "offers": [o["offer"] for o in opts],
        "modes": [o["mode"] for o in opts],
        "rental_used": [max(0.0, o["cost"]["rental"] - o["cost"]["idle"]) for o in opts],
        "idle": [o["cost"]["idle"] for o in opts],
        "ops": [o["cost"]["ops"] for o in opts],
        "setup": [o["cost"]["setup"] for o in opts],
        "transfer": [o["cost"].get("transfer", 0.0) for o in opts],
        "total": [o["cost"]["total"] for o in opts],
    }


def wall_days(workload_json: dict[str, Any]) -> list[tuple[str, str, float]]:
    """(offer, mode, wall time in days) per option."""
    return [(o["offer"], o["mode"], o["time"]["wall_hours"] / 24) for o in workload_json["options"]]


def compare_assumptions(result: Any) -> dict[str, Any]:
    """What every number rests on: the scenario file, catalog files, team costs and each offer's
    inputs with their sources and the fields filled from defaults."""
    s = result.scenario
    offers = []
    for o in s.offers:
        offers.append(
            {
                "id": o.id,
                "provider": o.provider,
                "gpu": o.gpu,
                "mode": o.mode,
                "price_low": o.price_amount.low,
                "price_high": o.price_amount.high,
                "price_per": o.price_per,
                "per_gpu_hour_low": o.price_per_gpu_hour.low,
                "per_gpu_hour_high": o.price_per_gpu_hour.high,
                "min_term_days": o.min_term_hours / 24,
                "setup_hours": o.setup_hours,
                "ops_hours": o.ops_hours,
                "ops_per": o.ops_per,
                # mid of each range (what the verdict uses); jitter as [low, high] or [median, p99]
                "overhead": {
                    "compute": o.overhead.compute.mid,
                    "intra_node": o.overhead.intra_node.mid,
                    "inter_node": o.overhead.inter_node.mid,
                    "jitter": [o.overhead.jitter.low, o.overhead.jitter.high],
                    "jitter_kind": o.overhead.jitter.kind,
                },
                "platform": o.platform,
                "tenancy": o.tenancy,
                "nic": o.nic,
                "source": o.source,
                "as_of": o.as_of,
                "defaults_used": list(o.defaults_used),
            }
        )
    workloads = [
        {
            "id": w.id,
            "kind": w.kind,
            "gpus": w.gpus,
            "gpu": "/".join(w.gpus_allowed),
            "hours_per_day": w.hours_per_day,
            "days_per_week": w.days_per_week,
            "duration_days": w.duration_days,
            "utilization": w.utilization,
            "communication": w.communication,
            "requires": sorted(w.requires),
            "defaults_used": list(w.defaults_used),
        }
        for w in s.workloads
    ]
    gpu_ids = sorted({o.gpu for o in s.offers})
    gpus = [
        {
            "id": g,
            "name": result.catalog.gpus[g].name,
            "source": result.catalog.gpus[g].source,
            "as_of": result.catalog.gpus[g].as_of,
        }
        for g in gpu_ids
        if g in result.catalog.gpus
    ]
    return {
        "scenario": s.path,
        "catalog_files": list(s.catalog_files),
        "currency": s.currency,
        "days_per_month": s.days_per_month,
        "engineer_hour_cost": s.team.engineer_hour_cost,
        "researcher_hour_cost": s.team.researcher_hour_cost,
        "offers": offers,
        "workloads": workloads,
        "gpus": gpus,
    }


def compare_charts(result: Any, data: dict[str, Any]) -> list[dict[str, Any]]:
    """Per workload: the cost-against-hours curves, the current hours, break-even and bar data."""
    out = []
    for adv, wj in zip(result.advice, data["workloads"], strict=True):
        out.append(
            {
                "id": wj["id"],
                "hours_now": adv.workload.hours_per_day,
                "break_even": wj["break_even"]["hours_per_day"],
                "waiting_priced": result.scenario.team.researcher_hour_cost > 0,
                "curves": result.hours_curves[adv.workload.id],
                "breakdown": breakdown(wj),
                "wall": wall_days(wj),
            }
        )
    return out


# --- plan --------------------------------------------------------------------------------------


def plan_charts(d: dict[str, Any]) -> list[dict[str, Any]]:
    """Per pool (GPU type): the cost curve over leased cards with the optimum and the price band,
    and the demand curve with the leased line and the spill above it."""
    out = []
    for pool in d.get("pools", []):
        gpu = pool.get("gpu")
        pts = sorted((c for c in d.get("curve", []) if c.get("gpu") == gpu), key=lambda c: c["reserved_gpus"])
        curve = [(float(c["reserved_gpus"]), float(c["cost_per_month"])) for c in pts]
        band = None
        if pts and all("cost_per_month_low" in c and "cost_per_month_high" in c for c in pts):
            band = (
                [(float(c["reserved_gpus"]), float(c["cost_per_month_low"])) for c in pts],
                [(float(c["reserved_gpus"]), float(c["cost_per_month_high"])) for c in pts],
            )
        r = float(pool.get("reserved_gpus") or 0)
        best = next((y for x, y in curve if x == r), None)
        demand = (pool.get("demand") or {}).get("hourly")
        spill = None
        if demand:
            xs = list(range(len(demand)))
            dem = [(float(x), float(v)) for x, v in zip(xs, demand, strict=True)]
            spill = ([(x, r) for x, _ in dem], [(x, max(v, r)) for x, v in dem])
        keys = ("reserved_gpus_low", "reserved_gpus_high")
        lo_hi = [float(pool[k]) for k in keys if isinstance(pool.get(k), int | float)]
        out.append(
            {
                "reserved_low_high": lo_hi if len(lo_hi) == 2 and lo_hi != [r, r] else None,
                "gpu": gpu,
                "reserved": r,
                "optimum_cost": best,
                "curve": curve,
                "band": band,
                "demand": dem if demand else None,
                "spill": spill,
                "demand_start": (pool.get("demand") or {}).get("start"),
            }
        )
    return out


# --- simulate ----------------------------------------------------------------------------------


def _cost_total(cost: dict[str, Any] | None, key: str = "total") -> float | None:
    if not cost:
        return None
    for k in (key, f"{key}_mid") if key == "total" else (key,):
        v = cost.get(k)
        if isinstance(v, int | float) and math.isfinite(v):
            return float(v)
    return None


def simulate_runs(d: dict[str, Any] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The simulate JSON is one object per R, or a list of them: always a list, sorted by R."""
    runs = d if isinstance(d, list) else d.get("runs", [d]) if isinstance(d, dict) else []
    return sorted(runs, key=lambda r: r.get("reserved_gpus", 0))


def simulate_charts(d: dict[str, Any] | list[dict[str, Any]]) -> dict[str, Any]:
    """Cost and mean wait against R, and the trade-off (mean wait, cost) labelled by R."""
    runs = simulate_runs(d)
    cost, low, high, wait, trade = [], [], [], [], []
    for r in runs:
        x = float(r.get("reserved_gpus", 0))
        c = _cost_total(r.get("cost"))
        w = (r.get("wait_hours") or {}).get("mean")
        if c is not None:
            cost.append((x, c))
            lo, hi = _cost_total(r.get("cost"), "total_low"), _cost_total(r.get("cost"), "total_high")
            if lo is not None and hi is not None:
                low.append((x, lo))
                high.append((x, hi))
        if isinstance(w, int | float):
            wait.append((x, float(w)))
            if c is not None:
                trade.append((float(w), c, int(x)))
    best = min(cost, key=lambda p: p[1]) if cost else None
    return {
        "cost": cost,
        "band": (low, high) if low and len(low) == len(cost) else None,
        "wait": wait,
        "trade": trade,
        "best": best,
        "runs": runs,
    }


# --- audit -------------------------------------------------------------------------------------


def audit_heat(d: dict[str, Any], max_cols: int = 96) -> dict[str, Any]:
    """Rows (node/gpu) x time columns of utilisation in [0, 1] (None: no data).

    With `gpus[].timeline` the columns are time bins (averaged down to at most `max_cols`);
    otherwise one column, the GPU's mean utilisation."""
    gpus = d.get("gpus", [])
    rows = [f"{g.get('node', '')}/{g.get('gpu', '')}" for g in gpus]
    tls = [g.get("timeline") for g in gpus]
    if gpus and all(isinstance(tl, dict) and tl.get("util") for tl in tls):
        n = max(len(tl["util"]) for tl in tls)
        k = max(1, math.ceil(n / max_cols))
        cells = []
        for tl in tls:
            u = list(tl["util"]) + [None] * (n - len(tl["util"]))
            row = []
            for j in range(0, n, k):
                vals = [v for v in u[j : j + k] if v is not None]
                row.append(sum(vals) / len(vals) if vals else None)
            cells.append(row)
        step_s = float(tls[0].get("step_s") or 0) * k
        return {
            "rows": rows,
            "cells": cells,
            "start": tls[0].get("start"),
            "step_s": step_s,
            "timeline": True,
        }
    return {
        "rows": rows,
        "cells": [[g.get("mean_util")] for g in gpus],
        "start": None,
        "step_s": 0.0,
        "timeline": False,
    }


def audit_classes(d: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for g in d.get("gpus", []):
        counts[g.get("class", "?")] = counts.get(g.get("class", "?"), 0) + 1
    return counts


def audit_money(d: dict[str, Any]) -> tuple[str, list[tuple[str, float]]]:
    """Idle money per GPU when the JSON has it, else per node; largest first. ("gpu"|"node", items)."""
    out = [
        (f"{g.get('node', '')}/{g.get('gpu', '')}", float(g["idle_cost"]))
        for g in d.get("gpus", [])
        if isinstance(g.get("idle_cost"), int | float)
    ]
    level = "gpu"
    if not out:
        level = "node"
        out = [
            (str(n.get("node", "")), float(n["idle_cost"]))
            for n in d.get("nodes", [])
            if isinstance(n.get("idle_cost"), int | float)
        ]
    return level, sorted(out, key=lambda p: -p[1])


def audit_fleet_money(d: dict[str, Any]) -> list[tuple[str, float]]:
    """The fleet's money figures that are present: cost, unused, idle, starved savings."""
    fleet = d.get("fleet") or {}
    keys = ("cost", "unused_cost", "idle_cost", "starved_savings")
    return [(k, float(fleet[k])) for k in keys if isinstance(fleet.get(k), int | float)]


def plan_breakdown(d: dict[str, Any]) -> dict[str, Any] | None:
    """Per pool: the monthly cost parts (lease, ops, spill, elastic) when the plan JSON has them."""
    pools = [p for p in d.get("pools", []) if isinstance(p.get("cost_per_month"), dict)]
    if not pools:
        return None
    parts = ("lease", "ops", "spill", "elastic")
    out: dict[str, Any] = {"gpus": [p.get("gpu", "") for p in pools]}
    for k in parts:
        out[k] = [float(p["cost_per_month"].get(k) or 0.0) for p in pools]
    out["total"] = [float(p["cost_per_month"].get("hybrid") or 0.0) for p in pools]
    return out
