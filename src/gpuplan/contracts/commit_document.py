"""The commit as its `gpuplan.commit/1` contract, plus the figures its table, markdown and HTML show
(the fan of cumulative cost by month, the ladder's cards by month, the drift thresholds): every number
a renderer prints is computed here, in the output language."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gpuplan.contracts.commit import SCHEMA
from gpuplan.contracts.plan_document import gpu_choice_text
from gpuplan.engines.commit import CommitResult, Costs, GpuCommit, Tranche
from gpuplan.i18n import t


def _cost(c: Costs) -> dict[str, float]:
    return {"expected": round(c.expected, 2), "p10": round(c.quantile(0.1), 2),
            "p50": round(c.quantile(0.5), 2), "p90": round(c.quantile(0.9), 2)}


def _money(x: float) -> str:
    return f"{x:,.0f}"


def _card(n: int, lang: str) -> str:
    return t("commit.card_one" if n == 1 else "commit.card_many", lang)


def _pct(x: float) -> str:
    return f"{x:+.0%}"


def runs(tranches: tuple[Tranche, ...] | list[Tranche]) -> list[dict[str, Any]]:
    """Tranches grouped into runs of back-to-back renewals of the same cards, offer and term."""
    out: list[dict[str, Any]] = []
    for tr in sorted(tranches, key=lambda x: (x.gpu, x.offer, x.term_months, x.cards, x.start_month)):
        last = out[-1] if out else None
        if last and (last["gpu"], last["offer"], last["term_months"], last["cards"]) == (
                tr.gpu, tr.offer, tr.term_months, tr.cards) and last["end_month"] == tr.start_month:
            last["end_month"] = tr.start_month + tr.term_months
            last["signings"] += 1
        else:
            out.append({"gpu": tr.gpu, "offer": tr.offer, "term_months": tr.term_months, "cards": tr.cards,
                        "start_month": tr.start_month, "end_month": tr.start_month + tr.term_months, "signings": 1})
    return sorted(out, key=lambda r: (r["gpu"], r["start_month"], -r["term_months"], r["offer"]))


def _reasons(res: CommitResult, lang: str) -> list[str]:
    cur = res.currency
    out: list[str] = []
    for c in res.scenario.commitments:
        start = res.scenario.start
        month = int(c.until_hours // (res.scenario.days_per_month * 24))
        out.append(t("commit.r_signed", lang, cards=c.cards, offer=c.offer, until=c.until.isoformat(),
                     month=month, date=start.isoformat() if start else ""))
    for g in res.gpus:
        rs = [r for r in runs(g.tranches)]
        if not rs:
            out.append(t("commit.r_none", lang, gpu=g.gpu, allc=_money(g.all_container.expected), cur=cur))
        for r in rs:
            key = "commit.r_run" if r["signings"] > 1 else "commit.r_tranche"
            out.append(t(key, lang, gpu=r["gpu"], cards=r["cards"], card=_card(r["cards"], lang),
                         months=r["term_months"], start=r["start_month"], end=r["end_month"] - 1, n=r["signings"],
                         offer=r["offer"]))
        out.extend(_threshold_text(g, res, lang))
    allc = res.all_container.expected
    cost = res.cost.expected
    if res.single_term:
        best_t, best = min(res.single_term.items(), key=lambda kv: (kv[1].expected, kv[0]))
        out.append(t("commit.r_saving", lang, cost=_money(cost), cur=cur, allc=_money(allc),
                     pct=(allc - cost) / allc if allc > 0 else 0.0, term=best_t, st=_money(best.expected),
                     pct2=(best.expected - cost) / best.expected if best.expected > 0 else 0.0))
    if res.no_exit is not None:
        out.append(t("commit.r_exits", lang, cost=_money(cost), cur=cur, no_exit=_money(res.no_exit.expected),
                     saved=_money(res.no_exit.expected - cost),
                     p=f"{max((x.exit_probability for x in res.tranches), default=0.0):.0%}"))
    reg = res.regret
    out.append(t("commit.r_regret", lang, e=_money(float(reg.mean())), p90=_money(float(np.quantile(reg, 0.9))),
                 cur=cur))
    d = res.drifts
    def src(name: str) -> str:
        return t(f"commit.src_{d.source[name]}", lang)

    out.append(t("commit.r_market", lang,
                 c=f"{_pct(d.container[0])}..{_pct(d.container[1])}", cs=src("container"),
                 b=f"{_pct(d.bare_metal[0])}..{_pct(d.bare_metal[1])}", bs=src("bare_metal"),
                 g=f"{_pct(d.growth[0])}..{_pct(d.growth[1])}", gs=src("growth"), paths=res.paths, seed=res.seed))
    if d.container_volatility > 0 or d.bare_metal_volatility > 0:
        out.append(t("commit.r_volatility", lang, c=f"{d.container_volatility:.0%}", cs=src("container_volatility"),
                     b=f"{d.bare_metal_volatility:.0%}", bs=src("bare_metal_volatility")))
    return out


def _threshold_text(g: GpuCommit, res: CommitResult, lang: str) -> list[str]:
    d = res.drifts.container
    rng = f"{_pct(d[0])}..{_pct(d[1])}"
    out = []
    for th in g.thresholds:
        base = {"months": th.months, "cards": th.cards, "card": _card(th.cards, lang), "gpu": th.gpu, "range": rng}
        if th.drift is None:
            key = "commit.r_th_always" if th.wins_at_mid else "commit.r_th_never"
            out.append(t(key, lang, **base))
        elif th.drift <= 0:
            out.append(t("commit.r_th_fall", lang, fall=f"{-th.drift:.0%}", **base))
        else:
            out.append(t("commit.r_th_rise", lang, rise=f"{th.drift:.0%}", **base))
    return out


def commit_document(res: CommitResult, lang: str = "en") -> dict[str, Any]:
    """The `gpuplan.commit/1` JSON."""
    reg = res.regret
    return {
        "schema": SCHEMA,
        "currency": res.currency,
        "horizon_months": res.horizon_months,
        "paths": res.paths,
        "seed": res.seed,
        "ladders": [{"gpu": x.gpu, "offer": x.offer, "term_months": x.term_months, "cards": x.cards,
                     "start_month": x.start_month, "exit_probability": round(x.exit_probability, 4)}
                    for x in res.tranches],
        "cost": _cost(res.cost),
        "against": {"all_container": _cost(res.all_container),
                    **({"no_exit": _cost(res.no_exit)} if res.no_exit is not None else {}),
                    "single_term": {str(k): _cost(v) for k, v in sorted(res.single_term.items())}},
        "regret": {"expected": round(max(float(reg.mean()), 0.0), 2),
                   "p90": round(max(float(np.quantile(reg, 0.9)), 0.0), 2)},
        "bands": [{"gpu": g.gpu, "tier": tier, "p10": [round(float(x), 4) for x in q[0]],
                   "p50": [round(float(x), 4) for x in q[1]], "p90": [round(float(x), 4) for x in q[2]]}
                  for g in res.gpus for tier, q in g.bands.items()],
        "reasons": _reasons(res, lang) + [f"{c.workload}: {gpu_choice_text(c, res.currency, lang)}"
                                          for c in res.choices.values()],
    }


def commit_view(res: CommitResult, lang: str = "en") -> dict[str, Any]:
    """The document and what the table, markdown and HTML show beside it (never printed by -o json)."""
    cum = np.cumsum(res.monthly, axis=0)
    q = np.quantile(cum, [0.1, 0.5, 0.9], axis=1) if res.paths else np.zeros((3, res.horizon_months))
    allc_month = sum((g.all_container_monthly for g in res.gpus), np.zeros(res.horizon_months))
    gpus = []
    for g in res.gpus:
        gpus.append({
            "gpu": g.gpu, "offer_container": g.offer_container, "step": g.step,
            "leased": [int(x) for x in g.leased], "steady_cards": round(g.steady_cards, 3),
            "runs": runs(g.tranches),
            "terms": [{"offer": o.offer, "months": o.months, "price_per_gpu_hour": round(o.price_per_gpu_hour, 4),
                       "early_exit": o.early_exit, "slowdown": round(o.slowdown, 6)} for o in g.terms],
            "single_term_cards": {str(k): v for k, v in sorted(g.single_term_cards.items())},
            "thresholds": [{"offer": th.offer, "months": th.months, "cards": th.cards,
                            "drift": None if th.drift is None or math.isnan(th.drift) else round(th.drift, 4)}
                           for th in g.thresholds],
        })
    d = res.drifts
    return {
        "doc": commit_document(res, lang),
        "fan": {"p10": [round(float(x), 2) for x in q[0]], "p50": [round(float(x), 2) for x in q[1]],
                "p90": [round(float(x), 2) for x in q[2]],
                "all_container_mean": [round(float(x), 2) for x in np.cumsum(allc_month)]},
        "gpus": gpus,
        "drifts": {"container": list(d.container), "bare_metal": list(d.bare_metal), "growth": list(d.growth),
                   "container_volatility": d.container_volatility, "bare_metal_volatility": d.bare_metal_volatility,
                   "source": dict(d.source)},
        "scenario": res.scenario.path or "<scenario>",
    }
