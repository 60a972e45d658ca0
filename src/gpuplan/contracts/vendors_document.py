"""`gpuplan vendors`: the checklist as its `gpuplan.vendors/1` document.

`vendors_json` words the engine's evidence (message keys and values) in the output language; the table
and markdown (`render.vendors`) read that document only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuplan.engines.vendors import Note, ProviderSummary, VendorsResult
from gpuplan.i18n import t

SCHEMA = "gpuplan.vendors/1"


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:g}"


def _words(key: str, values: Mapping[str, Any], lang: str) -> dict[str, Any]:
    """Each value as the sentence shows it."""
    out: dict[str, Any] = {}
    for k, v in values.items():
        if isinstance(v, tuple):
            out[k] = (" → " if k == "path" else t("vendors.list_sep", lang)).join(v)
        elif k == "kind":
            out[k] = t(f"vendors.kind.{v}", lang)
        elif k == "how":
            out[k] = t(f"vendors.moves.{v}", lang)
        elif k == "coverage":
            out[k] = t(f"vendors.coverage.{v}", lang) if v else ""
        elif isinstance(v, int | float) and not isinstance(v, bool):
            out[k] = _num(float(v))
        else:
            out[k] = v
    if key == "data_moves":
        out["hours"] = f"{values['hours']:,.1f}"
        out["share"] = f"{values['share']:.1%}"
        moves = float(values["moves"])
        out["times"] = "" if values["how"] == "once" else t("vendors.ev.data_times", lang, moves=_num(moves))
        cost = float(values["cost"])
        out["cost"] = t("vendors.ev.data_cost", lang, cost=_num(cost), currency=values["currency"]) if cost else ""
    elif key == "data_thresholds":
        out["warn"] = f"{values['warn']:.0%}"
        out["fail"] = f"{values['fail']:.0%}"
    return out


def note_text(note: Note, lang: str) -> str:
    return t(f"vendors.ev.{note.key}", lang, **_words(note.key, note.values, lang))


def _summary(p: ProviderSummary, lang: str) -> str:
    offers = t("vendors.list_sep", lang).join(p.offers)
    c = p.counts
    if not p.not_passed:
        return t("vendors.summary_all_pass", lang, offers=offers, passed=c["pass"])
    head = t("vendors.summary", lang, offers=offers, passed=c["pass"], warn=c["warn"], fail=c["fail"],
             unknown=c["unknown"])
    groups = []
    for status in ("fail", "warn", "unknown"):
        items = [check if len(p.offers) == 1 else f"{offer} {check}" for offer, check, st in p.not_passed
                 if st == status]
        if items:
            groups.append(t("vendors.summary_group", lang, status=t(f"vendors.status.{status}", lang),
                            items=t("vendors.list_sep", lang).join(items)))
    return head + " — " + t("vendors.group_sep", lang).join(groups)


def vendors_json(result: VendorsResult, lang: str = "en") -> dict[str, Any]:
    """The `gpuplan.vendors/1` document."""
    th = result.thresholds
    m = result.measured
    sep = t("vendors.group_sep", lang)
    return {
        "schema": SCHEMA,
        "scenario": result.scenario.path,
        "thresholds": {
            "min_network_gbps": float(th.min_network_gbps),
            "data_warn_share": th.data_warn_share,
            "data_fail_share": th.data_fail_share,
            "support_pass_hours": th.support_pass_hours,
            "support_fail_hours": th.support_fail_hours,
        },
        "measured": None if m is None else {"offer": m.offer, "gbps": m.gbps, "interface": m.interface,
                                            "file": m.file},
        "offers": [
            {
                "offer": oc.offer,
                "provider": oc.provider,
                "checks": [{"id": c.id, "status": c.status,
                            "evidence": sep.join(note_text(n, lang) for n in c.notes)} for c in oc.checks],
            }
            for oc in result.offers
        ],
        "providers": [
            {"provider": p.provider, "offers": list(p.offers),
             "counts": {s: p.counts[s] for s in ("pass", "warn", "fail", "unknown")},
             "summary": _summary(p, lang)}
            for p in result.providers
        ],
    }
