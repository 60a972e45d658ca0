"""The comparison as its `gpuplan.compare/1` contract: the engine's result, rounded, in the output language.

Every compare renderer (JSON, table, markdown, HTML) reads this document; none reads the engine's
dataclasses or computes a figure. `--explain` lines are written here too, from the models' inputs
(`perf.Slowdown`, `delays`), so that the renderers print them as they are.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplan.engines.advise import WorkloadAdvice
from gpuplan.i18n import t
from gpuplan.i18n.notes import note_text

if TYPE_CHECKING:
    from gpuplan.contracts.compare import CompareResult as CompareDoc

# `gpuplan.contracts.compare.SCHEMA` (the contract's pydantic models load only when a document is validated)
SCHEMA = "gpuplan.compare/1"


def _r(x: float, nd: int = 2) -> float:
    return round(float(x), nd)


def compare_document(result: Any, lang: str = "en", explain: bool = False) -> CompareDoc:
    """`result`: an `api.CompareResult`. `explain` adds each option's formula lines (`--explain`)."""
    from gpuplan.contracts.compare import CompareResult as CompareDoc

    return CompareDoc.model_validate(compare_data(result, lang, explain))


def compare_data(result: Any, lang: str = "en", explain: bool = False) -> dict[str, Any]:
    """The same document as plain JSON data, not validated: exactly what `render.compare.compare_json`
    makes of `compare_document` (same keys in the same order, the same numbers and types), without
    the contract's validation, which costs more than building it on big scenarios (`compare -o json`
    prints this; the contract tests check the two agree and that it validates)."""
    head, workloads = compare_data_stream(result, lang, explain)
    return {**head, "workloads": list(workloads)}


def compare_data_stream(result: Any, lang: str = "en",
                        explain: bool = False) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """`compare_data` in two parts: the document without its `workloads` (its last key), and the
    workloads one at a time, made as they are asked for (a writer can print each and let it go)."""
    s = result.scenario
    head = {"schema": SCHEMA, "currency": s.currency, "days_per_month": float(s.days_per_month),
            "catalog_files": list(s.catalog_files)}
    return head, (_workload(adv, s, lang, explain) for adv in result.advice)


def _terms(tm: Any) -> dict[str, float]:
    # by hand: dataclasses.asdict deep-copies, a tenth of the document's time on big scenarios
    # (round(float(x), n) is _r written out: half a million calls on big scenarios)
    return {"compute": round(float(tm.compute), 4), "intra_node": round(float(tm.intra_node), 4),
            "inter_node": round(float(tm.inter_node), 4), "straggler": round(float(tm.straggler), 4),
            "data": round(float(tm.data), 4)}


def _flip_value(v: Any) -> Any:
    # a float rounded; an int as the contract's float; a requirement's name as it is
    if isinstance(v, float):
        return _r(v, 4)
    return float(v) if isinstance(v, int) and not isinstance(v, bool) else v


def _warn(ws: Any, lang: str) -> list[dict[str, str]]:
    return [{"code": w.code, "message": note_text(w.note, lang)} for w in ws]


def _workload(adv: WorkloadAdvice, s: Any, lang: str, explain: bool) -> dict[str, Any]:
    options = []
    w = adv.workload
    for r in adv.options:
        c = r.cost
        opt: dict[str, Any] = {
            "offer": r.offer.id,
            "mode": r.offer.mode,
            "platform": r.offer.platform,
            "tenancy": r.offer.tenancy,
            "capacity": r.offer.capacity,
            "gpu": r.offer.gpu,
            "feasible": r.feasible,
            "infeasible_reason": note_text(r.infeasible_reason, lang) if r.infeasible_reason else None,
            "cost": {"total": round(float(c.total_mid), 2), "low": round(float(c.total_low), 2),
                     "high": round(float(c.total_high), 2), "per_month": round(float(c.per_month), 2),
                     "rental": round(float(c.rental_mid), 2), "ops": round(float(c.ops), 2),
                     "setup": round(float(c.setup), 2), "idle": round(float(c.idle), 2),
                     "transfer": round(float(c.transfer.cost), 2)},
            "time": {"run_hours": round(float(c.run_hours), 2),
                     "wall_hours": round(float(c.wall_hours), 2),
                     "wall_hours_range": [round(float(c.wall_hours_low), 2), round(float(c.wall_hours_high), 2)],
                     "gpu_hours_used": round(float(c.gpu_hours_used), 2),
                     "gpu_hours_paid": round(float(c.gpu_hours_paid), 2), "slowdown": round(float(c.slowdown.total), 4),
                     "slowdown_range": [round(float(c.slowdown.low), 4), round(float(c.slowdown.high), 4)],
                     "slowdown_reference": c.slowdown.reference,
                     "terms": _terms(c.slowdown.terms),
                     "bound": c.slowdown.bound,
                     "gpu_speed": {"factor": round(float(c.slowdown.gpu_speed_factor), 4),
                                   "source": c.slowdown.speed_source},
                     "transfer_hours": round(float(c.transfer.hours), 2),
                     "recovery_hours": round(float(c.interruptions.recovery_hours + c.interruptions.lost_hours), 2),
                     "interruptions": round(float(c.interruptions.expected), 4),
                     "p90_wall_hours": round(float(c.p90_wall_hours), 2),
                     "preemptions": round(float(c.preemption.preemptions), 4) if c.preemption else 0.0,
                     "lost_gpu_hours": _lost_gpu_hours(c, w.gpus)},
            "warnings": _warn(r.warnings, lang),
        }
        if c.owned is not None:  # a bought server: the rental is its capex, power and colocation
            opt["cost"].update({"capex": round(float(c.owned.capex), 2), "power": round(float(c.owned.power), 2),
                                "colocation": round(float(c.owned.colocation), 2)})
        if explain:
            opt["explain"] = _explain_option(w, r, s, lang)
        options.append(opt)
    rec = None
    if adv.recommendation is not None:
        rr = adv.recommendation
        rec = {
            "offer": rr.offer,
            "mode": rr.mode,
            "reasons": [note_text(n, lang) for n in rr.reasons],
            "dimensions": {k: {"favors": d.favors, "reason": note_text(d.reason, lang)}
                           for k, d in rr.dimensions.items()},
            "flip": [{"parameter": f.parameter,
                      "value": _flip_value(f.value),
                      "message": note_text(f.note, lang)} for f in rr.flip],
        }
    be = adv.break_even_hours
    return {
        "id": w.id,
        "kind": w.kind,
        "gpus": w.gpus_stated,
        "gpu": list(w.gpus_allowed),
        "warnings": _warn(adv.warnings, lang),
        "options": options,
        "recommendation": rec,
        "break_even": _break_even(be, adv),
    }


def _lost_gpu_hours(c: Any, gpus: int) -> float:
    """GPU-hours spot reclaims cost (re-run work and restarts); 0 off spot. An option that cannot finish
    shows those of the limit it is priced at."""
    lw = c.preemption
    if lw is None:
        return 0.0
    return round(float(gpus * max(0.0, c.run_hours - lw.work_hours)), 2)


def _break_even(be: float | None, adv: WorkloadAdvice) -> dict[str, Any]:
    out: dict[str, Any] = {"hours_per_day": None if be is None or math.isnan(be) else _r(be, 3)}
    if adv.buy_break_even:  # owned offers (issue 28): where buying breaks even with each rented option
        out["buy"] = [{"owned": b.owned, "other": b.other, "other_mode": b.other_mode,
                       "hours_per_day": None if b.hours_per_day is None else _r(b.hours_per_day, 3),
                       "buy_wins": b.buy_wins} for b in adv.buy_break_even]
    return out


def _explain_option(w: Any, r: Any, s: Any, lang: str) -> list[str]:
    o, c, cur = r.offer, r.cost, s.currency
    lines = _explain_slowdown(w, o, c.slowdown, lang) + _explain_delays(w, o, c, cur, lang)
    if o.mode == "container":
        lines.append(t("compare.explain_cost_ct", lang, offer=o.id, gpus=w.gpus, run=c.run_hours,
                       price=o.price_per_gpu_hour.mid, currency=cur, rental=c.rental_mid, ops=c.ops,
                       setup=c.setup, total=c.total_mid))
    elif o.owned is not None and c.owned is not None:
        ow, g = o.owned, o.gpus_per_node
        lines.append(t("compare.explain_cost_owned", lang, offer=o.id, nodes=c.billed_gpus / g,
                       held=c.lease_hours, purchase=ow.purchase_per_node, resale=ow.resale, life=ow.life_hours,
                       capex_rate=ow.capex_per_node_hour, currency=cur, capex=c.owned.capex, kw=ow.kw_per_node,
                       pue=ow.pue, kwh=ow.price_per_kwh, busy=ow.power_busy_per_node_hour,
                       run=c.gpu_hours_used / g, idle_share=ow.idle_share, power=c.owned.power,
                       colo_rate=ow.colocation_per_node_hour, colocation=c.owned.colocation, ops_h=c.ops_hours,
                       ops=c.ops, setup=c.setup, total=c.total_mid, lead=ow.lead_time_hours))
    else:
        lines.append(t("compare.explain_cost_bm", lang, offer=o.id, billed=c.billed_gpus, lease=c.lease_hours,
                       wall=c.wall_hours, term=o.min_term_hours, price=o.price_per_gpu_hour.mid, currency=cur,
                       rental=c.rental_mid, ops_h=c.ops_hours, ops=c.ops, setup=c.setup, total=c.total_mid,
                       idle=c.idle))
    if o.defaults_used:
        lines.append(t("compare.explain_defaults", lang, offer=o.id, fields=", ".join(o.defaults_used)))
    return lines


def _explain_slowdown(w: Any, o: Any, s: Any, lang: str) -> list[str]:
    """The slowdown's terms with their inputs (`perf.slowdown`), one line each."""
    tm, cm = s.terms, s.comm
    lines = [t("compare.explain_slowdown", lang, offer=o.id, platform=t(f"compare.mode_{o.platform}", lang),
               tenancy=t(f"compare.tenancy_{o.tenancy}", lang), nic=o.nic, compute=tm.compute,
               intra=tm.intra_node, inter=tm.inter_node, strag=tm.straggler, data=tm.data, total=s.total,
               bound=t(f"compare.bound_{s.bound}", lang))]
    lines.append(t("compare.explain_compute", lang, share=1 - cm.share, oc=o.overhead.compute.mid, compute=tm.compute))
    tcp = t("compare.explain_tcp", lang, tcp=cm.tcp_efficiency) if cm.tcp else ""
    if cm.model == "none":
        lines.append(t("compare.explain_comm_none", lang))
    elif cm.model == "share":
        lines.append(t("compare.explain_comm_share", lang, share=cm.share,
                       binding=t(f"compare.binding_{cm.binding}", lang), bref=cm.bus_ref_gbs,
                       boff=cm.bus_offer_gbs, fi=cm.intra_fraction, fe=cm.inter_fraction, tcp=tcp,
                       nodes=cm.nodes, g=cm.gpus_per_node))
    else:
        st = w.step
        lines.append(t("compare.explain_comm_step", lang, gb=st.gradient_gb, comm=cm.comm_s, bi=cm.b_intra_gbs,
                       bn=cm.b_net_gbs, assumed=t("compare.explain_assumed", lang) if cm.network_assumed else "",
                       overlap=st.overlap, cs=st.compute_s, step=cm.step_s, share=cm.share, fi=cm.intra_fraction,
                       fe=cm.inter_fraction, tcp=tcp, nodes=cm.nodes, g=cm.gpus_per_node))
    j = o.overhead.jitter
    if j.kind == "uniform":
        lines.append(t("compare.explain_jitter_uniform", lang, n=w.gpus, lo=j.low, hi=j.high, strag=tm.straggler))
    else:
        lines.append(t("compare.explain_jitter_tail", lang, n=w.gpus, m=j.low, q=j.high, strag=tm.straggler))
    if s.data_wait > 0:
        lines.append(t("compare.explain_data", lang, d=s.data_wait, keep=1 - s.data_wait, platform=s.platform,
                       total=s.total, k=s.data_sharpness))
    why = ""
    if o.overhead_alt is not None:
        why += t("compare.explain_tenancy_range", lang)
    if cm.network_assumed:
        why += t("compare.explain_network_range", lang, gbps=cm.assumed_gbps_per_gpu)
    ref = (t("compare.reference_multi", lang, nodes=cm.nodes, g=cm.gpus_per_node, bi=cm.b_intra_gbs,
             gbps=cm.ref_gbps_per_gpu) if cm.nodes > 1 else t("compare.reference_one", lang, bi=cm.b_intra_gbs))
    lines.append(t("compare.explain_reference", lang, ref=ref, lo=s.low, hi=s.high, why=why))
    if s.speed_source != "same-gpu":
        lines.append(t("compare.explain_speed", lang, factor=s.gpu_speed_factor, ref=w.gpus_allowed[0],
                       source=s.speed_source))
    if o.overhead.source:
        lines.append(t("compare.explain_overhead_source", lang, platform=o.platform, tenancy=o.tenancy, nic=o.nic,
                       estimate=t("compare.explain_estimate", lang) if o.overhead.estimate else "",
                       source=o.overhead.source))
    return lines


def _restart(w: Any, o: Any) -> float:
    from gpuplan.engines.cost import restart_hours

    return restart_hours(w, o)


def _explain_delays(w: Any, o: Any, c: Any, currency: str, lang: str) -> list[str]:
    """Data movement and interruptions (`models.delays`), with their inputs."""
    lines = []
    tr, it = c.transfer, c.interruptions
    if tr.moves > 0:
        lines.append(t("compare.explain_transfer", lang, gb=tr.gb, moves=tr.moves, path=" → ".join(tr.path),
                       gbps=tr.gbps, hours=tr.hours, cost=tr.cost, currency=currency))
    lw = c.preemption
    if lw is not None and o.preemption is not None:
        import math

        lines.append(t("compare.explain_spot", lang, rate=o.preemption.rate.mid,
                       nodes=math.ceil(w.gpus / o.gpus_per_node),
                       ckpt=t("compare.ckpt_none", lang) if math.isinf(w.checkpoint_hours)
                       else t("compare.ckpt_every", lang, h=w.checkpoint_hours),
                       restart=_restart(w, o), n=lw.preemptions, work=lw.work_hours,
                       expected=lw.expected_hours, p90=lw.p90_hours, lost=w.gpus * lw.lost_hours))
    if it.expected > 0:
        if o.mode == "container":
            how = t("compare.recovery_reschedule", lang)
        elif o.spares > 0:
            how = t("compare.recovery_spare", lang, n=o.spares)
        else:
            how = t("compare.recovery_support", lang, response=o.support_response_hours,
                    coverage=o.support_coverage or "?") if o.support_response_hours is not None \
                else t("compare.recovery_support_unknown", lang)
        lines.append(t("compare.explain_interruptions", lang, rate=o.interruptions_per_gpu_day, gpus=w.gpus,
                       n=it.expected, lost=it.lost_hours, ckpt=w.checkpoint_hours, rec=it.recovery_hours,
                       each=o.recovery_hours, how=how))
    return lines


