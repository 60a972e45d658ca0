"""Rendering of a probe document (`gpuplan.probe/1` dict): rich tables and markdown. No probing here."""

from __future__ import annotations

from typing import Any

from gpuplan.i18n import catalog as _messages
from gpuplan.i18n import t

_STATUS_STYLE = {"pass": "green", "warn": "yellow", "fail": "red", "unknown": "dim"}


def check_label(check_id: str, lang: str) -> str:
    if check_id.startswith("bench_"):
        key = f"probe.figure.{check_id[len('bench_'):]}"
        if key in _messages(lang):
            return t(key, lang)
    key = f"probe.check_id.{check_id}"
    return t(key, lang) if key in _messages(lang) else check_id


def _fmt(value: Any, lang: str) -> str:
    if value is None:
        return t("probe.unknown", lang)
    if isinstance(value, bool):
        return t("probe.val_yes" if value else "probe.val_no", lang)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _detected(detected: bool, name: str | None, lang: str) -> str:
    if not detected:
        return _fmt(False, lang)
    # a VM with no DMI strings and no systemd-detect-virt (a Firecracker microVM) names no hypervisor
    return t("probe.detected_with", lang, name=name) if name else t("probe.detected_unnamed", lang)


def _host_rows(doc: dict[str, Any], lang: str) -> list[tuple[str, str]]:
    host = doc["host"]
    c, v, cpu, lim = host["container"], host["virtualization"], host["cpu"], host["cgroup_limits"]
    rows = [
        (t("probe.deployment", lang), t(f"probe.deployment_{host['deployment']}", lang)),
        (t("probe.container", lang), _detected(c["detected"], c["runtime"], lang)),
        (t("probe.virtualization", lang), _detected(v["detected"], v["hypervisor"], lang)),
        (t("probe.cpu", lang), t("probe.cpu_value", lang, model=_fmt(cpu["model"], lang),
                                 cpus=_fmt(cpu["logical_cpus"], lang))),
        (t("probe.memory", lang), f"{_fmt(host['memory_gb'], lang)} GiB"),
    ]
    if lim["version"]:
        unl = t("probe.unlimited", lang)
        cpu_s = t("probe.cores", lang, n=f"{lim['cpu_cores']:g}") if lim["cpu_cores"] else unl
        mem_s = f"{lim['memory_gb']:g} GiB" if lim["memory_gb"] else unl
        rows.append((t("probe.cgroup_limits", lang),
                     t("probe.cgroup_value", lang, version=lim["version"], cpu=cpu_s, mem=mem_s)))
    peer = host.get("gpudirect_rdma", {}).get("peermem_loaded")
    rows.append((t("probe.gpudirect", lang), _fmt(peer, lang)))
    return rows


def _evidence(doc: dict[str, Any]) -> list[str]:
    host = doc["host"]
    return [*host["container"]["evidence"], *host["virtualization"]["evidence"],
            *host["cgroup_limits"]["evidence"], *host.get("gpudirect_rdma", {}).get("evidence", [])]


def _gpu_rows(doc: dict[str, Any], lang: str) -> list[list[str]]:
    rows = []
    for g in doc["gpus"]:
        nv = g.get("nvlink") or {}
        pcie = g.get("pcie") or {}
        mig = g.get("mig")
        rows.append([
            str(g["index"]), g["model"], _fmt(g.get("catalog_id"), lang), _fmt(g.get("memory_gb"), lang),
            f"{nv.get('active', 0)}/{nv.get('links', 0)}" if nv else "-",
            f"gen{pcie['gen']} x{pcie['width']}" if pcie.get("gen") else "-",
            (f"{len(mig['instances'])}" if mig and mig["enabled"] else _fmt(False, lang)) if mig else "-",
            str(len(g.get("processes") or [])),
        ])
    return rows


def _net_rows(doc: dict[str, Any], lang: str) -> list[list[str]]:
    rows = []
    for n in doc["network"]:
        r = n.get("rdma")
        rows.append([n["name"], _fmt(n.get("speed_gbps"), lang),
                     f"{r['device']} {r['link_layer']} {r.get('state') or ''}".strip() if r else "-"])
    return rows


def _bench_rows(doc: dict[str, Any], lang: str) -> list[list[str]]:
    rows = []
    for name, fig in (doc["bench"] or {}).get("results", {}).items():
        if fig is None:
            continue
        rows.append([t(f"probe.figure.{name}", lang), f"{fig['value']:g} {fig['unit']}",
                     f"{fig['spec']:g} {fig['unit']}" if fig.get("spec") else "-",
                     f"{100 * fig['ratio']:.0f}%" if fig.get("ratio") is not None else "-"])
    return rows


def _bench_note(doc: dict[str, Any], lang: str) -> str | None:
    bench = doc.get("bench")
    if bench is None:
        return t("probe.bench_not_requested", lang)
    if not bench.get("ran"):
        return t("probe.bench_skipped", lang, reason=bench.get("reason") or "")
    return t("probe.bench_device", lang, device=bench["device"], gpus=bench["gpus"],
             catalog=_fmt(bench.get("catalog_id"), lang))


def _no_gpu_note(doc: dict[str, Any], lang: str) -> str:
    drivers = doc["host"].get("gpu_drivers", {})
    why = "; ".join(f"{k}: {v['reason']}" for k, v in drivers.items() if v.get("reason"))
    return t("probe.no_gpus", lang, why=why)


def render_table(doc: dict[str, Any], lang: str, width: int = 100) -> list[Any]:
    """Rich renderables, top to bottom, each table fitted to `width` columns (numbers never cut)."""
    from rich.table import Table
    from rich.text import Text

    from gpuplan.render.fit import add_columns

    out: list[Any] = []
    host = Table(title=t("probe.section_host", lang), show_header=False, title_justify="left")
    host_rows = [list(r) for r in _host_rows(doc, lang)]
    add_columns(host, ["", ""], host_rows, [False, False], width)
    host.columns[0].style = "bold"
    out.append(host)
    ev = _evidence(doc)
    if ev:
        out.append(Text(t("probe.section_evidence", lang) + ":", style="bold"))
        out.extend(Text(f"  - {e}") for e in ev)
    if doc["gpus"]:
        g = Table(title=t("probe.section_gpus", lang), title_justify="left")
        keys = ("col_index", "col_model", "col_catalog", "col_memory", "col_nvlink", "col_pcie", "col_mig",
                "col_procs")
        add_columns(g, [t(f"probe.{key}", lang) for key in keys], _gpu_rows(doc, lang),
                    [key in ("col_index", "col_memory", "col_procs") for key in keys], width)
        out.append(g)
    else:
        out.append(Text(_no_gpu_note(doc, lang)))
    n = Table(title=t("probe.section_network", lang), title_justify="left")
    add_columns(n, [t(f"probe.{key}", lang) for key in ("col_name", "col_speed", "col_rdma")], _net_rows(doc, lang),
                [False, True, False], width)
    out.append(n)
    note = _bench_note(doc, lang)
    rows = _bench_rows(doc, lang)
    if rows:
        b = Table(title=t("probe.section_bench", lang), caption=Text(note) if note else None,
                  title_justify="left")
        add_columns(b, [t(f"probe.{key}", lang) for key in ("col_figure", "col_value", "col_spec", "col_ratio")],
                    rows, [False, True, True, True], width)
        out.append(b)
    elif note:
        out.append(Text(f"{t('probe.section_bench', lang)}: {note}"))  # Text: no markup parsing
    c = Table(title=t("probe.section_checks", lang), title_justify="left")
    add_columns(c, [t(f"probe.{key}", lang) for key in ("col_status", "col_check", "col_detail")],
                [[t(f"probe.status.{chk['status']}", lang), check_label(chk["id"], lang), chk["detail"]]
                 for chk in doc["checks"]], [False, False, False], width)
    for row, chk in zip(c.rows, doc["checks"], strict=True):
        row.style = _STATUS_STYLE[chk["status"]]
    out.append(c)
    return out


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    def esc(s: str) -> str:
        return s.replace("|", "\\|")

    lines = ["| " + " | ".join(esc(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(doc: dict[str, Any], lang: str) -> str:
    parts = [f"# {t('probe.title', lang)}", "", f"## {t('probe.section_host', lang)}", ""]
    parts.append(_md_table(["", ""], [[k, v] for k, v in _host_rows(doc, lang)]))
    ev = _evidence(doc)
    if ev:
        parts += ["", f"**{t('probe.section_evidence', lang)}:**", ""] + [f"- `{e}`" for e in ev]
    parts += ["", f"## {t('probe.section_gpus', lang)}", ""]
    if doc["gpus"]:
        parts.append(_md_table([t(f"probe.{k}", lang) for k in (
            "col_index", "col_model", "col_catalog", "col_memory", "col_nvlink", "col_pcie", "col_mig",
            "col_procs")], _gpu_rows(doc, lang)))
    else:
        parts.append(_no_gpu_note(doc, lang))
    parts += ["", f"## {t('probe.section_network', lang)}", ""]
    net = _net_rows(doc, lang)
    parts.append(_md_table([t(f"probe.{k}", lang) for k in ("col_name", "col_speed", "col_rdma")], net)
                 if net else t("probe.no_network", lang))
    parts += ["", f"## {t('probe.section_bench', lang)}", ""]
    note = _bench_note(doc, lang)
    if note:
        parts.append(note)
    rows = _bench_rows(doc, lang)
    if rows:
        parts += ["", _md_table([t(f"probe.{k}", lang) for k in ("col_figure", "col_value", "col_spec",
                                                                  "col_ratio")], rows)]
    parts += ["", f"## {t('probe.section_checks', lang)}", ""]
    parts.append(_md_table(
        [t(f"probe.{k}", lang) for k in ("col_status", "col_check", "col_detail")],
        [[t(f"probe.status.{c['status']}", lang), check_label(c["id"], lang), c["detail"]]
         for c in doc["checks"]]))
    return "\n".join(parts) + "\n"
