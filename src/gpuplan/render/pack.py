"""The decision pack (`gpuplan report`): one self-contained HTML document, or markdown, of an
`api.DecisionPack`. The answer first (`summary`, built by `engines.pack`), then each command's own report
as a section (`compare`, `plan`, `commit`, `vendors`, `audit`) rendered by that command's renderer, then
the assumptions and their sources. Nothing here computes: every figure comes from the pack."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuplan.i18n import t


def pack_html(pack: Any, lang: str = "en", *, fragment: bool = False) -> str:
    """The pack as one HTML page (inline CSS and SVG, no script, nothing fetched; A4 print styles);
    `fragment`: only its `<main>` (for the web page)."""
    from gpuplan.render.html import Fmt, _compare_context, _env, _markup, _version, render_report

    cmp_ctx = _compare_context(pack.compare, lang)
    sections = {
        "compare_html": _markup(render_report("compare", pack.compare, lang, embedded=True)),
        "plan_html": _markup(render_report("plan", pack.plan, lang, embedded=True)),
        "commit_html": _markup(render_report("commit", pack.commit.view, lang, embedded=True)),
        "audit_html": _markup(render_report("audit", pack.audit, lang, embedded=True)) if pack.audit else "",
    }

    def tr(key: str, **values: Any) -> str:
        return t(key, lang, **values)

    return str(_env().get_template("pack.html.j2").render(
        kind="pack", lang=lang, t=tr, fragment=fragment, embedded=False, version=_version(),
        summary=pack.summary, f=Fmt(lang, pack.summary["currency"]), commit_paths=pack.commit.view["doc"]["paths"],
        vendors=cmp_ctx["vendors"], assumptions=cmp_ctx["assumptions"], scenario_name=pack.scenario, **sections))


def summary_lines(pack: Any, lang: str = "en") -> list[str]:
    """The answer as lines (the terminal and the markdown's first part)."""
    from gpuplan.render.html import Fmt

    s = pack.summary
    f = Fmt(lang, s["currency"])
    m = s["money"]
    out = []
    for key in ("lease", "rent", "sign", "buy"):
        rows = s[key]
        if key == "buy" and not rows:
            out.append(f"- **{t('pack.buy', lang)}**: {t('pack.buy_none', lang)}")
            continue
        items = []
        for r in rows:
            if key in ("lease", "buy"):
                items.append(t("pack.lease_row", lang, cards=r["cards"], gpu=r["gpu"], offer=r["offer"]))
            elif key == "rent":
                items.append(t("pack.rent_spot_row" if r.get("spot") else "pack.rent_row", lang, gpu=r["gpu"],
                               offer=r["offer"],
                               workloads=", ".join(r["workloads"])))
            else:
                items.append(t("pack.sign_row", lang, cards=r["cards"], gpu=r["gpu"], offer=r["offer"],
                               months=r["term_months"], start=r["start_month"], end=r["end_month"] - 1,
                               n=r["signings"]))
        out.append(f"- **{t(f'pack.{key}', lang)}**: " + ("; ".join(items) or t("pack.none", lang)))
    out += ["", f"**{t('pack.money', lang, months=m['horizon_months'])}**", "",
            f"| {t('pack.col_strategy', lang)} | {t('pack.col_expected', lang)} | {t('pack.col_range', lang)} | "
            f"{t('report.source', lang)} |", "|---|---:|---:|---|"]
    src = t("pack.src_commit", lang, paths=pack.commit.view["doc"]["paths"])
    for key, c in (("recommended", m["recommended"]), ("all_container", m["all_container"])):
        out.append(f"| {t(f'pack.s_{key}', lang)} | {f.money(c['expected'])} | {f.money(c['p10'])} – "
                   f"{f.money(c['p90'])} | {src} |")
    if m["all_bare_metal"]:
        out.append(f"| {t('pack.s_all_bare_metal', lang)} | {f.money(m['all_bare_metal']['expected'])} | — | "
                   f"{t('pack.src_plan_month', lang, months=m['horizon_months'])} |")
    if m["saving"]["all_bare_metal"] is not None:
        out += ["", t("pack.saving", lang, vs_c=f.money(m["saving"]["all_container"]),
                      vs_b=f.money(m["saving"]["all_bare_metal"]))]
    out += ["", f"**{t('pack.fx', lang)}**: " + ("; ".join(f"{x['offer']}: {x['note']}" for x in s["fx"])
                                                 or t("pack.fx_none", lang, currency=s["currency"]))]
    return out


def pack_markdown(pack: Any, lang: str = "en") -> str:
    """The pack as markdown: the answer, then each command's own markdown."""
    from gpuplan.contracts.plan import PlanResult
    from gpuplan.contracts.vendors_document import vendors_json
    from gpuplan.render.commit import commit_markdown
    from gpuplan.render.compare import compare_markdown
    from gpuplan.render.plan import plan_markdown
    from gpuplan.render.vendors import vendors_markdown

    parts = [f"# {t('pack.title', lang)}", "", f"{t('pack.scenario', lang)}: `{pack.scenario}`", "",
             f"## {t('pack.answer', lang)}", "", *summary_lines(pack, lang), ""]
    parts += [f'<a id="compare"></a>\n\n## {t("pack.sec_compare", lang)}', "",
              compare_markdown(pack.compare.document(lang), lang, pack.scenario), ""]
    parts += [f'<a id="plan"></a>\n\n## {t("pack.sec_plan", lang)}', "",
              plan_markdown(PlanResult.model_validate(pack.plan), lang), ""]
    parts += [f'<a id="commit"></a>\n\n## {t("pack.sec_commit", lang)}', "",
              commit_markdown(pack.commit.view, lang), ""]
    parts += [f'<a id="vendors"></a>\n\n## {t("pack.sec_vendors", lang)}', "",
              vendors_markdown(vendors_json(pack.vendors, lang), lang), ""]
    if pack.audit is not None:
        from gpuplan.contracts.audit import AuditResult
        from gpuplan.render.audit import render_markdown

        parts += [f'<a id="audit"></a>\n\n## {t("pack.sec_audit", lang)}', "",
                  render_markdown(AuditResult.model_validate(pack.audit), lang, False), ""]
    return "\n".join(parts)


def write_pack_html(pack: Any, path: str | Path, lang: str = "en") -> None:
    from gpuplan.errors import GpuplanError

    p = Path(path)
    try:
        p.write_text(pack_html(pack, lang), encoding="utf-8")
    except OSError as exc:
        raise GpuplanError(f"cannot write the HTML report: {exc.strerror}", file=p, field="--html",
                           hint="check that the folder exists and is writable.") from None
