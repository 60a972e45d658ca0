"""Self-contained HTML reports for compare, plan, simulate and audit.

One file: CSS inline, charts as inline SVG, no script, no font or image fetched, so it opens from an
e-mail attachment and prints cleanly. Every label comes from the i18n catalog (`report.*`); numbers
and money are formatted per locale with Babel. Rendering never computes: numbers come from the
command's JSON contract and the chart series from `gpuplan.render.report_data`.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

from gpuplan.i18n import t
from gpuplan.render import svg

KINDS = ("compare", "plan", "simulate", "audit", "commit")
LOCALES = {"en": "en_US", "zh": "zh_CN"}


class Fmt:
    """Locale-aware number formatting (Babel)."""

    def __init__(self, lang: str, currency: str | None = None) -> None:
        self.lang = lang
        self.locale = LOCALES.get(lang, "en_US")
        self.currency = currency or "USD"

    def money(self, x: float | None, currency: str | None = None) -> str:
        from babel.numbers import format_currency

        if x is None or (isinstance(x, float) and not math.isfinite(x)):
            return "—"
        cur = currency or self.currency
        if abs(x) >= 100 or float(x).is_integer():
            return format_currency(x, cur, format="¤#,##0", locale=self.locale, currency_digits=False)
        return format_currency(x, cur, locale=self.locale)

    def money_short(self, x: float) -> str:
        """Axis ticks: compact (31K, 3.1万) with the currency symbol."""
        from babel.numbers import format_compact_decimal, get_currency_symbol

        sym = get_currency_symbol(self.currency, locale=self.locale)
        if abs(x) < 1000:
            return f"{sym}{self.num(x, 0 if float(x).is_integer() else 1)}"
        return sym + format_compact_decimal(x, locale=self.locale, fraction_digits=1)

    def num(self, x: float | None, digits: int = 1) -> str:
        from babel.numbers import format_decimal

        if x is None or (isinstance(x, float) and not math.isfinite(x)):
            return "—"
        pattern = "#,##0" + ("." + "0" * digits if digits > 0 else "")
        return format_decimal(x, format=pattern, locale=self.locale)

    def num_g(self, x: float) -> str:
        """Tick values: as few digits as the value needs."""
        from babel.numbers import format_decimal

        return format_decimal(x, format="#,##0.##", locale=self.locale)

    def pct(self, x: float | None, digits: int = 0) -> str:
        from babel.numbers import format_percent

        if x is None:
            return "—"
        return format_percent(
            x, format="#,##0" + ("." + "0" * digits if digits else "") + "%", locale=self.locale
        )


@lru_cache(maxsize=1)
def _env() -> Any:
    from gpuplan.lazy import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("gpuplan.render", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"], default_for_string=True, default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env


def _markup(s: str) -> Any:
    from markupsafe import Markup

    return Markup(s)  # noqa: S704 - our own SVG, every text in it escaped by svg.py


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("gpuplan")
    except Exception:  # pragma: no cover - not installed
        return "dev"


# --- charts drawn for the width ------------------------------------------------------------------

NARROW = 340  # the phone drawing's width in CSS px: a 390 px screen shows it at about 1:1
MIN_PHONE_FONT = 11.0  # px: no chart text smaller on a phone


def _phone(chart: str) -> str:
    """The narrow drawing with every font size raised to at least `MIN_PHONE_FONT`."""
    import re

    return re.sub(r'font-size="([0-9.]+)"',
                  lambda m: f'font-size="{max(float(m.group(1)), MIN_PHONE_FONT):g}"', chart)


def _pair(wide: str, narrow: str) -> Any:
    """Both drawings of a chart; the stylesheet shows the narrow one below 640 px, so a chart is redrawn
    for the width instead of scaled down (its text would shrink with the viewBox)."""
    if not wide:
        return _markup("")
    return _markup(f'<div class="rchart"><div class="r-wide">{wide}</div>'
                   f'<div class="r-narrow">{_phone(narrow)}</div></div>')


class _Both:
    """`render.svg`'s chart functions, each drawn at its own width and at `NARROW`."""

    @staticmethod
    def line_chart(c: svg.Chart) -> Any:
        import dataclasses

        return _pair(svg.line_chart(c), svg.line_chart(dataclasses.replace(c, width=NARROW)))

    @staticmethod
    def stacked_bars(*args: Any, **kw: Any) -> Any:
        return _pair(svg.stacked_bars(*args, **kw), svg.stacked_bars(*args, **{**kw, "width": NARROW}))

    @staticmethod
    def hbars(*args: Any, **kw: Any) -> Any:
        return _pair(svg.hbars(*args, **kw), svg.hbars(*args, **{**kw, "width": NARROW}))

    @staticmethod
    def heatmap(*args: Any, **kw: Any) -> Any:
        return _pair(svg.heatmap(*args, **kw), svg.heatmap(*args, **{**kw, "width": NARROW}))


both = _Both()


# --- compare -----------------------------------------------------------------------------------


def _compare_context(result: Any, lang: str) -> dict[str, Any]:
    from gpuplan.render.compare import compare_json
    from gpuplan.render.report_data import compare_assumptions, compare_charts

    data = compare_json(result.document(lang))
    f = Fmt(lang, data["currency"])
    charts = compare_charts(result, data)
    workloads = []
    for wj, ch, adv in zip(data["workloads"], charts, result.advice, strict=True):
        w = adv.workload
        ylab = t(
            "report.cost_decision" if ch["waiting_priced"] else "report.cost_total", lang, currency=f.currency
        )
        lines = []
        for i, cv in enumerate(ch["curves"]):
            color = svg.MODE_COLORS.get(cv.mode, svg.PALETTE[i % len(svg.PALETTE)])
            same_mode = [c for c in ch["curves"] if c.mode == cv.mode]
            dash = len(same_mode) > 1 and same_mode.index(cv) > 0
            label = f"{cv.offer} ({t(f'compare.mode_{cv.mode}', lang)})"
            if not cv.feasible:
                label += " — " + t("report.infeasible", lang)
            lines.append(svg.Line(label, cv.points, color, dash=dash or not cv.feasible))
        markers = [svg.VMarker(ch["hours_now"], t("report.now", lang, h=f.num(ch["hours_now"])), "#444")]
        points = []
        if ch["break_even"] is not None:
            be = ch["break_even"]
            markers.append(svg.VMarker(be, t("report.break_even_mark", lang, h=f.num(be)), "#D55E00"))
            ys = [min((abs(px - be), py) for px, py in c.points)[1] for c in ch["curves"] if c.feasible]
            if ys:
                points.append(svg.PointMarker(be, min(ys), "", "#D55E00"))
        cost_chart = both.line_chart(
            svg.Chart(
                title=t("report.chart_cost_hours", lang, workload=wj["id"]),
                x_label=t("report.hours_per_day", lang),
                y_label=ylab,
                x_fmt=f.num_g,
                y_fmt=f.money_short,
                lines=lines,
                vmarkers=markers,
                points=points,
                x_ticks=(0, 3, 6, 9, 12, 15, 18, 21, 24),
            )
        )
        bd = ch["breakdown"]
        bars = both.stacked_bars(
            t("report.chart_breakdown", lang, workload=wj["id"]),
            bd["offers"],
            [
                svg.Stack(t("report.rental_used", lang), "#0072B2", bd["rental_used"]),
                svg.Stack(t("report.idle_part", lang), "#999999", bd["idle"], pattern=True),
                svg.Stack(t("compare.ops", lang), "#009E73", bd["ops"]),
                svg.Stack(t("compare.setup", lang), "#CC79A7", bd["setup"]),
                svg.Stack(t("compare.transfer", lang), "#E69F00", bd["transfer"]),
            ],
            y_label=t("report.money", lang, currency=f.currency),
            y_fmt=f.money_short,
            totals=[f.money(x) for x in bd["total"]],
            width=470,
            height=320,
        )
        wall = both.hbars(
            t("report.chart_wall", lang, workload=wj["id"]),
            [
                (o, d, svg.MODE_COLORS.get(m, "#888"), t("report.days", lang, d=f.num(d)))
                for o, m, d in ch["wall"]
            ],
            t("report.wall_days", lang),
            width=470,
        )
        workloads.append(
            {
                "j": wj,
                "kind": w.kind,
                "gpus": w.gpus_stated,
                "gpu": "/".join(w.gpus_allowed),
                "hours_per_day": w.hours_per_day,
                "duration_days": w.duration_days,
                "charts": [_markup(cost_chart), _markup(bars), _markup(wall)],
            }
        )
    from gpuplan.contracts.vendors_document import vendors_json

    vendors = vendors_json(result.vendors(), lang)  # the article's checklist, with evidence
    return {
        "data": data,
        "workloads": workloads,
        "vendors": vendors,
        "assumptions": compare_assumptions(result),
        "scenario_name": result.scenario.path or "",
        "f": f,
    }


# --- plan --------------------------------------------------------------------------------------


def _fig(title: str, chart: str, note: str = "") -> dict[str, Any]:
    return {"title": title, "svg": _markup(chart), "note": note}


def _plan_context(d: dict[str, Any], lang: str) -> dict[str, Any]:
    from gpuplan.render.report_data import plan_breakdown, plan_charts

    f = Fmt(lang, d.get("currency"))
    money = t("report.per_month_money", lang, currency=f.currency)
    pools = []
    cpm = d.get("cost_per_month") or {}
    for pc in plan_charts(d):
        figs = []
        if pc["curve"]:
            lines = [svg.Line(t("report.plan_cost_line", lang), pc["curve"], svg.MODE_COLORS["hybrid"],
                              dots=len(pc["curve"]) <= 40)]
            bands = []
            if pc["band"]:
                bands.append(svg.Band(t("report.price_band", lang), pc["band"][0], pc["band"][1], "#009E73"))
            pts = []
            if pc["optimum_cost"] is not None:
                pts.append(svg.PointMarker(pc["reserved"], pc["optimum_cost"],
                                           t("report.optimum", lang, r=f.num(pc["reserved"], 0)), "#D55E00"))
            marks = []
            if pc["reserved_low_high"]:
                lo, hi = pc["reserved_low_high"]
                marks = [svg.VMarker(lo, t("report.optimum_low", lang, r=f.num(lo, 0)), "#56B4E9"),
                         svg.VMarker(hi, t("report.optimum_high", lang, r=f.num(hi, 0)), "#CC79A7")]
            title = t("report.chart_plan_cost", lang, gpu=pc["gpu"])
            figs.append(_fig(title, both.line_chart(svg.Chart(
                title=title, x_label=t("report.leased_cards", lang), y_label=money, x_fmt=f.num_g,
                y_fmt=f.money_short, lines=lines, bands=bands, points=pts, vmarkers=marks)),
                t("report.plan_cost_note", lang)))
        if pc["demand"]:
            lines = [svg.Line(t("report.demand", lang), pc["demand"], "#0072B2", width=1.4),
                     svg.Line(t("report.leased_line", lang, r=f.num(pc["reserved"], 0)),
                              [(pc["demand"][0][0], pc["reserved"]), (pc["demand"][-1][0], pc["reserved"])],
                              "#D55E00", dash=True)]
            bands = [svg.Band(t("report.spill", lang), pc["spill"][0], pc["spill"][1], "#E69F00", 0.45)]
            title = t("report.chart_demand", lang, gpu=pc["gpu"])
            figs.append(_fig(title, both.line_chart(svg.Chart(
                title=title, x_label=t("report.hour_of_horizon", lang), y_label=t("report.gpus", lang),
                x_fmt=f.num_g, y_fmt=f.num_g, lines=lines, bands=bands))))
        pools.append({"gpu": pc["gpu"], "figs": figs, "has_demand": bool(pc["demand"])})
    figs = []
    keys = [k for k in ("hybrid", "all_bare_metal", "all_container") if isinstance(cpm.get(k), int | float)]
    if keys:
        colors = {"hybrid": svg.MODE_COLORS["hybrid"], "all_bare_metal": svg.MODE_COLORS["bare-metal"],
                  "all_container": svg.MODE_COLORS["container"]}
        title = t("report.chart_plan_options", lang)
        items = [(t(f"report.plan_{k}", lang), float(cpm[k]), colors[k], f.money(cpm[k])) for k in keys]
        figs.append(_fig(title, both.hbars(title, items, money, width=470)))
    bd = plan_breakdown(d)
    if bd:
        title = t("report.chart_plan_breakdown", lang)
        stacks = [svg.Stack(t(f"report.part_{k}", lang), c, bd[k]) for k, c in
                  (("lease", "#0072B2"), ("ops", "#009E73"), ("spill", "#E69F00"), ("elastic", "#CC79A7"))]
        figs.append(_fig(title, both.stacked_bars(title, bd["gpus"], stacks, money, f.money_short,
                                                 [f.money(x) for x in bd["total"]], width=470, height=300)))
    return {"data": d, "pools": pools, "cpm": cpm, "top_figs": figs, "f": f, "scenario_name": d.get("scenario") or ""}


# --- simulate ----------------------------------------------------------------------------------


def _simulate_context(d: Any, lang: str) -> dict[str, Any]:
    from gpuplan.render.report_data import simulate_charts

    sc = simulate_charts(d)
    runs = sc["runs"]
    cur = next(((r.get("cost") or {}).get("currency") for r in runs if r.get("cost")), None)
    f = Fmt(lang, cur)
    money = t("report.money", lang, currency=f.currency)
    figs = []
    if sc["cost"]:
        bands = [svg.Band(t("report.price_band", lang), sc["band"][0], sc["band"][1], "#009E73")] if sc["band"] else []
        best = sc["best"]
        pts = [svg.PointMarker(best[0], best[1], t("report.optimum", lang, r=f.num(best[0], 0)))]
        title = t("report.chart_sim_cost", lang)
        figs.append(_fig(title, both.line_chart(svg.Chart(
            title=title, x_label=t("report.reserved_r", lang), y_label=money, x_fmt=f.num_g, y_fmt=f.money_short,
            lines=[svg.Line(t("report.total_cost", lang), sc["cost"], "#009E73", dots=len(sc["cost"]) <= 40)],
            bands=bands, points=pts, width=470, height=300))))
    if sc["wait"]:
        title = t("report.chart_sim_wait", lang)
        figs.append(_fig(title, both.line_chart(svg.Chart(
            title=title, x_label=t("report.reserved_r", lang), y_label=t("report.mean_wait_h", lang),
            x_fmt=f.num_g, y_fmt=f.num_g, width=470, height=300,
            lines=[svg.Line(t("report.mean_wait", lang), sc["wait"], "#0072B2", dots=len(sc["wait"]) <= 40)]))))
    if sc["trade"]:
        pts_sorted = sorted(sc["trade"])
        labels = [f"R={r}" for _, _, r in pts_sorted] if len(pts_sorted) <= 16 else []
        title = t("report.chart_sim_trade", lang)
        figs.append(_fig(title, both.line_chart(svg.Chart(
            title=title, x_label=t("report.mean_wait_h", lang), y_label=money, x_fmt=f.num_g,
            y_fmt=f.money_short, y_zero=False,
            lines=[svg.Line(t("report.trade_off", lang), [(w, c) for w, c, _ in pts_sorted], "#CC79A7", dots=True,
                            point_labels=labels)])), t("report.trade_note", lang)))
    from gpuplan.render.simulate import recommendation_lines

    doc = d if isinstance(d, dict) and "runs" in d else {"runs": runs}
    rec = doc.get("recommended")
    return {"runs": runs, "figs": figs, "f": f, "scenario_name": "",
            "rec_r": rec["reserved_gpus"] if rec else None, "rec_lines": recommendation_lines(doc, lang)}


# --- audit -------------------------------------------------------------------------------------

CLASS_COLORS = {"busy": "#1b7a3e", "idle": "#D55E00", "starved": "#E69F00", "mixed": "#56B4E9", "partial": "#CC79A7"}


def _audit_context(d: dict[str, Any], lang: str) -> dict[str, Any]:
    from gpuplan.render.report_data import audit_classes, audit_fleet_money, audit_heat, audit_money

    fleet = d.get("fleet") or {}
    f = Fmt(lang, fleet.get("currency"))
    money = t("report.money", lang, currency=f.currency)
    heat = audit_heat(d)
    cols: list[str] = []
    if heat["timeline"] and heat["start"]:
        try:
            start = datetime.fromisoformat(str(heat["start"]).replace("Z", "+00:00"))
            cols = [(start + timedelta(seconds=heat["step_s"] * j)).strftime("%m-%d %H:%M")
                    for j in range(len(heat["cells"][0]))]
        except ValueError:
            cols = []
    elif not heat["timeline"]:
        cols = [t("report.mean_util", lang)]
    figs = []
    if heat["rows"]:
        title = t("report.chart_heat", lang)
        figs.append(_fig(title, both.heatmap(title, heat["rows"], heat["cells"], cols, t("report.idle_low", lang),
                                            t("report.busy_high", lang), t("report.gap", lang)),
                         "" if heat["timeline"] else t("report.no_timeline", lang)))
    classes = audit_classes(d)
    if classes:
        title = t("report.chart_classes", lang)
        items = [(_cls(k, lang), float(v), CLASS_COLORS.get(k, "#888"), f.num(v, 0))
                 for k, v in sorted(classes.items(), key=lambda p: -p[1])]
        figs.append(_fig(title, both.hbars(title, items, t("report.gpus", lang), width=470)))
    fm = audit_fleet_money(d)
    if fm:
        title = t("report.chart_fleet_money", lang)
        colors = {"cost": "#0072B2", "unused_cost": "#999999", "idle_cost": "#D55E00", "starved_savings": "#E69F00"}
        items = [(t(f"report.money_{k}", lang), v, colors[k], f.money(v)) for k, v in fm]
        figs.append(_fig(title, both.hbars(title, items, money, width=470)))
    level, idle = audit_money(d)
    if idle:
        title = t(f"report.chart_idle_money_{level}", lang)
        figs.append(_fig(title, both.hbars(title, [(name, v, "#D55E00", f.money(v)) for name, v in idle[:20]], money,
                                          width=470)))
    return {"data": d, "fleet": fleet, "figs": figs, "f": f, "heat_timeline": heat["timeline"], "scenario_name": ""}


def _cls(name: str, lang: str) -> str:
    from gpuplan.i18n import catalog

    key = f"report.class_{name}"
    return t(key, lang) if key in catalog(lang) else name


# --- commit ------------------------------------------------------------------------------------


def _commit_context(view: dict[str, Any], lang: str) -> dict[str, Any]:
    from gpuplan.render.commit import _runs, _strategy_rows, explain_lines, fan_svg, price_band_svgs, timeline_svg

    f = Fmt(lang, view["doc"]["currency"])
    bands = zip(price_band_svgs(view, lang), price_band_svgs(view, lang, NARROW), strict=True)
    return {"view": view, "f": f, "runs": _runs(view), "strategies": _strategy_rows(view, lang),
            "timeline": _pair(timeline_svg(view, lang), timeline_svg(view, lang, NARROW)),
            "fan": _pair(fan_svg(view, lang), fan_svg(view, lang, NARROW)),
            "bands": [_pair(w, n) for w, n in bands], "explain": explain_lines(view, lang),
            "scenario_name": view.get("scenario") or ""}


# --- entry points ------------------------------------------------------------------------------


def render_report(kind: str, result: Any, lang: str = "en", *, fragment: bool = False,
                  embedded: bool = False) -> str:
    """The report as one HTML string; `fragment` gives only the `<main>` part (for the web page);
    `embedded` gives it as a `<section id=KIND>` of the decision pack (`render.pack`), which implies
    `fragment`."""
    if kind not in KINDS:
        raise ValueError(f"unknown report kind {kind!r}; expected one of {', '.join(KINDS)}")
    if lang not in LOCALES:
        raise ValueError(f"unknown language {lang!r}")
    if kind == "compare":
        if isinstance(result, dict):
            raise TypeError("the compare report needs the api.CompareResult, not its JSON")
        ctx = _compare_context(result, lang)
    elif kind == "plan":
        ctx = _plan_context(result, lang)
    elif kind == "simulate":
        ctx = _simulate_context(result, lang)
    elif kind == "commit":
        ctx = _commit_context(result, lang)
    else:
        ctx = _audit_context(result, lang)
    env = _env()

    def tr(key: str, **values: Any) -> str:
        return t(key, lang, **values)

    def cls(name: str) -> str:
        return _cls(name, lang)

    html = env.get_template(f"{kind}.html.j2").render(
        kind=kind, lang=lang, t=tr, cls=cls, fragment=fragment or embedded, embedded=embedded,
        version=_version(), **ctx
    )
    return html


def write_report(kind: str, result: Any, path: str | Path, lang: str = "en") -> None:
    """Write the self-contained report of `kind` (compare: an api.CompareResult; plan, simulate,
    audit: the dict their `-o json` prints; commit: the CommitReport's `view`) to `path`."""
    from gpuplan.errors import GpuplanError

    html = render_report(kind, result, lang)
    p = Path(path)
    try:
        p.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise GpuplanError(
            f"cannot write the HTML report: {exc.strerror}",
            file=p,
            field="--html",
            hint="check that the folder exists and is writable.",
        ) from None
