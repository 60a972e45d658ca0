"""Rendering a commit from its view (`contracts.commit_document.commit_view`): a Rich table, markdown,
--explain, and the charts of its HTML report (a fan chart of cost over the horizon, the ladder as a
timeline, the price bands), which `render.html` lays out in the reports' frame (`commit.html.j2`). Every
figure comes from the view; these functions only lay it out."""

from __future__ import annotations

from typing import Any

from gpuplan.i18n import t
from gpuplan.render.svg import PALETTE, Band, Chart, Line, Stack, line_chart, stacked_bars


def _m(x: float) -> str:
    return f"{x:,.0f}"


def _strategy_rows(view: dict[str, Any], lang: str, doc_names: bool = False) -> list[tuple[str, dict[str, float]]]:
    doc = view["doc"]
    rows = [(t("commit.s_ladder", lang), doc["cost"]), (t("commit.s_all_container", lang),
                                                        doc["against"]["all_container"])]
    cards: dict[str, int] = {}
    for g in view["gpus"]:
        for k, v in g["single_term_cards"].items():
            cards[k] = cards.get(k, 0) + v
    for k, c in doc["against"]["single_term"].items():
        name = t("commit.s_single_doc", lang, months=k) if doc_names else \
            t("commit.s_single", lang, months=k, cards=cards.get(k, 0))
        rows.append((name, c))
    return rows


def _runs(view: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for g in view["gpus"] for r in g["runs"]]


def commit_table(view: dict[str, Any], lang: str, console: Any, *, explain: bool = False) -> None:
    from rich.table import Table

    doc = view["doc"]
    console.print(t("commit.heading", lang, months=doc["horizon_months"], paths=doc["paths"], seed=doc["seed"],
                    currency=doc["currency"]))
    runs = _runs(view)
    if runs:
        lt = Table(title=t("commit.ladder", lang), title_justify="left")
        for key in ("col_gpu", "col_offer", "col_term", "col_cards", "col_months", "col_signings"):
            lt.add_column(t(f"commit.{key}", lang), justify="right" if key in ("col_cards", "col_signings") else "left")
        for r in runs:
            span = t("commit.months_span", lang, start=r["start_month"], end=r["end_month"] - 1)
            lt.add_row(r["gpu"], r["offer"], t("commit.term_months", lang, n=r["term_months"]), str(r["cards"]),
                       span, str(r["signings"]))
        console.print(lt)
    else:
        console.print(t("commit.no_ladder", lang))
    st = Table(title=t("commit.strategies", lang), title_justify="left")
    st.add_column(t("commit.col_strategy", lang))
    for key in ("col_expected", "col_p10", "col_p50", "col_p90"):
        st.add_column(t(f"commit.{key}", lang), justify="right")
    for name, c in _strategy_rows(view, lang):
        st.add_row(name, _m(c["expected"]), _m(c["p10"]), _m(c["p50"]), _m(c["p90"]))
    console.print(st)
    console.print("  " + t("commit.regret", lang, e=_m(doc["regret"]["expected"]), p90=_m(doc["regret"]["p90"])))
    console.print("  " + t("commit.reasons", lang) + ":")
    for r in doc["reasons"]:
        console.print(f"    • {r}", soft_wrap=True)
    if explain:
        for line in explain_lines(view, lang):
            console.print("  " + line, soft_wrap=True)


def explain_lines(view: dict[str, Any], lang: str) -> list[str]:
    out = [t(f"commit.explain_{k}", lang) for k in ("model", "lease", "container", "overtime", "search")]
    for g in view["gpus"]:
        by_offer: dict[str, list[str]] = {}
        slow: dict[str, float] = {}
        for term in g["terms"]:
            slow[term["offer"]] = term.get("slowdown", 1.0)
            ex = t("commit.explain_exit", lang, share=term["early_exit"]) if term["early_exit"] is not None else ""
            price = f"{term['price_per_gpu_hour']:.4g}"
            by_offer.setdefault(term["offer"], []).append(
                t("commit.explain_term", lang, months=term["months"], price=price, exit=ex))
        for offer, terms in by_offer.items():
            out.append(t("commit.explain_terms", lang, offer=offer, terms="; ".join(terms)))
            out.append(t("commit.explain_slowdown", lang, offer=offer, s_b=f"{slow[offer]:.6g}"))
    return out


def commit_markdown(view: dict[str, Any], lang: str) -> str:
    doc = view["doc"]

    def mc(x: float) -> str:  # every amount with its currency
        return f"{_m(x)} {doc['currency']}"

    lines = [f"# {t('commit.title', lang, scenario=view['scenario'])}", "",
             t("commit.heading", lang, months=doc["horizon_months"], paths=doc["paths"], seed=doc["seed"],
               currency=doc["currency"]), "", f"## {t('commit.ladder', lang)}", ""]
    runs = _runs(view)
    if runs:
        heads = [t(f"commit.{k}", lang) for k in ("col_gpu", "col_offer", "col_term", "col_cards", "col_months",
                                                    "col_signings")]
        lines += ["| " + " | ".join(heads) + " |", "|---|---|---|---:|---|---:|"]
        for r in runs:
            lines.append(f"| {r['gpu']} | {r['offer']} | {t('commit.term_months', lang, n=r['term_months'])} | "
                         f"{r['cards']} | {r['start_month']}–{r['end_month'] - 1} | {r['signings']} |")
    else:
        lines.append(t("commit.no_ladder", lang))
    lines += ["", f"## {t('commit.strategies', lang)}", "",
              "| " + " | ".join(t(f"commit.{k}", lang) for k in ("col_strategy", "col_expected", "col_p10", "col_p50",
                                                                   "col_p90")) + " |",
              "|---|---:|---:|---:|---:|"]
    for name, c in _strategy_rows(view, lang):
        lines.append(f"| {name} | {mc(c['expected'])} | {mc(c['p10'])} | {mc(c['p50'])} | {mc(c['p90'])} |")
    lines += ["", t("commit.regret", lang, e=mc(doc["regret"]["expected"]), p90=mc(doc["regret"]["p90"])), "",
              f"## {t('commit.reasons', lang)}", ""]
    lines += [f"- {r}" for r in doc["reasons"]]
    return "\n".join(lines)


def fan_svg(view: dict[str, Any], lang: str, width: int = 680) -> str:
    fan = view["fan"]
    xs = list(range(1, len(fan["p50"]) + 1))
    return line_chart(Chart(
        title=t("commit.fan", lang), x_label=t("commit.axis_month", lang), width=width,
        y_label=view["doc"]["currency"], y_fmt=_m,
        x_ticks=[float(x) for x in xs] if len(xs) <= 24 else (),
        bands=[Band("p10–p90", [(x, y) for x, y in zip(xs, fan["p10"], strict=True)],
                    [(x, y) for x, y in zip(xs, fan["p90"], strict=True)], PALETTE[0])],
        lines=[Line("p50", list(zip(xs, fan["p50"], strict=True)), PALETTE[0]),
               Line(t("commit.s_all_container", lang), list(zip(xs, fan["all_container_mean"], strict=True)),
                    PALETTE[1], dash=True)]))


def price_band_svgs(view: dict[str, Any], lang: str, width: int = 680) -> list[str]:
    """One fan chart a band of `gpuplan.commit/1`: the price per GPU-hour the paths span by month."""
    out = []
    for i, b in enumerate(view["doc"].get("bands", [])):
        xs = list(range(len(b["p50"])))
        color = PALETTE[i % len(PALETTE)]
        title = t("commit.price_band", lang, gpu=b["gpu"], tier=t(f"commit.tier_{b['tier']}", lang))
        out.append(line_chart(Chart(
            title=title, x_label=t("commit.axis_month", lang), width=width,
            y_label=f"{view['doc']['currency']} / GPU-h",
            y_fmt=lambda y: f"{y:,.2f}",
            x_ticks=[float(x) for x in xs] if len(xs) <= 24 else (),
            bands=[Band("p10–p90", [(x, y) for x, y in zip(xs, b["p10"], strict=True)],
                        [(x, y) for x, y in zip(xs, b["p90"], strict=True)], color)],
            lines=[Line("p50", list(zip(xs, b["p50"], strict=True)), color)])))
    return out


def timeline_svg(view: dict[str, Any], lang: str, width: int = 680) -> str:
    months = len(view["fan"]["p50"])
    stacks = []
    for i, r in enumerate(_runs(view)):
        vals = [float(r["cards"]) if r["start_month"] <= m < r["end_month"] else 0.0 for m in range(months)]
        label = f"{r['gpu']} · {r['offer']} · {t('commit.term_months', lang, n=r['term_months'])} · " \
            f"{t('commit.months_span', lang, start=r['start_month'], end=r['end_month'] - 1)}"
        stacks.append(Stack(label, PALETTE[i % len(PALETTE)], vals))
    if not stacks:
        return ""
    return stacked_bars(t("commit.timeline", lang), [str(m) for m in range(months)], stacks,
                        t("commit.col_cards", lang), width=width)
