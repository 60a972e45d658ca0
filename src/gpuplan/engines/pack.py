"""The decision pack's answer: what to lease, rent, sign and buy, and the money over the commit horizon.

Plain data in (the `gpuplan.plan/1` and `gpuplan.commit/1` documents, the commit's ladder runs and the
scenario's offers), plain data out; no money model of its own. Every figure is one the plan or the
commit already computed, except the all-bare-metal line over the horizon, which is

    all_bare_metal(horizon) = plan.cost_per_month.all_bare_metal × commit.horizon_months

(the plan's month, at today's prices, repeated: the commit's Monte Carlo paths price the ladder and
all-containers only). The renderers say so beside the figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

CONVERTED = "converted at"  # the note `inputs.fx.convert_offer` appends to a converted offer's source


def decision_summary(plan: Mapping[str, Any], commit: Mapping[str, Any], runs: Sequence[Mapping[str, Any]],
                     offers: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The answer first: lease (the plan's standing pools), rent (the container offers that take the
    rest, and the spot tier's offer where the plan placed work there), sign (the commit's ladder), buy
    (pools on `mode: owned` offers, where a scenario has them), the money over the commit's horizon
    against all containers and all bare metal (and the expected saving against each: alternative −
    recommended), and every exchange rate an offer's price was converted with.

    `offers`: `{id, gpu, mode, source}` of each scenario offer."""
    by_id = {o["id"]: o for o in offers}
    owned = {o["id"] for o in offers if o.get("mode") == "owned"}
    lease: list[dict[str, Any]] = []
    buy: list[dict[str, Any]] = []
    rent: list[dict[str, Any]] = []
    placed: dict[str, list[str]] = {}
    for a in plan.get("assignments") or []:
        if a.get("placement") in ("container", "split"):
            placed.setdefault(str(a.get("gpu")), []).append(str(a["workload"]))
    for p in plan.get("pools") or []:
        if p.get("reserved_gpus") and p.get("offer_bare_metal"):
            row = {"gpu": p["gpu"], "offer": p["offer_bare_metal"], "cards": p["reserved_gpus"],
                   "nodes": p.get("nodes")}
            (buy if p["offer_bare_metal"] in owned else lease).append(row)
        if p.get("offer_container") and placed.get(p["gpu"]):
            rent.append({"gpu": p["gpu"], "offer": p["offer_container"], "workloads": placed[p["gpu"]]})
        spot = p.get("spot") or {}
        if spot.get("offer") and spot.get("workloads"):  # the spot tier (issue 26): rented too, reclaimable
            rent.append({"gpu": p["gpu"], "offer": spot["offer"], "workloads": list(spot["workloads"]),
                         "spot": True})
    sign = [{k: r[k] for k in ("gpu", "offer", "term_months", "cards", "start_month", "end_month", "signings")}
            for r in runs if r["offer"] not in owned]
    months = int(commit["horizon_months"])
    cpm = plan.get("cost_per_month") or {}
    all_bm = cpm.get("all_bare_metal")
    money: dict[str, Any] = {
        "horizon_months": months,
        "recommended": dict(commit["cost"]),
        "all_container": dict(commit["against"]["all_container"]),
        "all_bare_metal": None if all_bm is None else {"expected": round(float(all_bm) * months, 2)},
        "per_month": {k: cpm[k] for k in ("hybrid", "all_bare_metal", "all_container") if k in cpm},
    }
    rec = float(commit["cost"]["expected"])
    money["saving"] = {  # expected saving of the recommendation = alternative - recommended
        "all_container": round(float(commit["against"]["all_container"]["expected"]) - rec, 2),
        "all_bare_metal": None if all_bm is None else round(float(all_bm) * months - rec, 2),
    }
    fx = [{"offer": oid, "note": str(o.get("source") or "")} for oid, o in by_id.items()
          if CONVERTED in str(o.get("source") or "")]
    return {"currency": commit["currency"], "lease": lease, "rent": rent, "sign": sign, "buy": buy,
            "money": money, "fx": fx}


__all__ = ["decision_summary"]
