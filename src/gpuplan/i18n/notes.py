"""Translating engine `Note`s and probe checks (message key + values) into text in the user's language."""

from __future__ import annotations

from typing import Any

from gpuplan.i18n import t

SEP = {"en": "; ", "zh": "；"}


def note_text(note: Any, lang: str, area: str = "compare") -> str:
    params = dict(note.params)
    if "rule" in params:
        params["rule"] = t(f"{area}.{params['rule']}", lang)
    if "mode" in params:
        params["mode"] = t(f"{area}.mode_{params['mode']}", lang)
    if "per" in params:  # a price unit: gpu-hour, node-day, ... (卡时, 节点·天 in Chinese)
        params["per"] = t(f"compare.per_{params['per']}", lang)
    if "dir" in params:
        params["dir"] = t(f"{area}.dir_{params['dir']}", lang)
    if "why" in params:
        params["why"] = SEP[lang].join(t(f"{area}.why_{k}", lang) for k in params["why"])
    for key in ("ct", "bm"):
        if isinstance(params.get(key), list):
            items = params[key]
            none = t(f"{area}.none_item", lang)
            params[key] = SEP[lang].join(t(f"{area}.{k}", lang) for k in items) if items else none
    if isinstance(params.get("ckpt"), float):  # a checkpoint interval in hours; inf: none
        h = params["ckpt"]
        params["ckpt"] = t("compare.ckpt_none", lang) if h == float("inf") else t("compare.ckpt_every", lang, h=h)
    if isinstance(params.get("req"), list):
        params["req"] = ", ".join(params["req"])
    return t(f"{area}.{note.key}", lang, **params)


def check_text(check: Any, lang: str) -> str:
    """A probe check (`probe.checks.Check`: its message `key` and `values`) in words."""
    values = dict(check.values)
    if "figure" in values:
        values["figure"] = t(f"probe.figure.{values['figure']}", lang)
    if "deployment" in values:
        values["deployment"] = t(f"probe.deployment_{values['deployment']}", lang)
    return t(f"probe.check.{check.key}", lang, **values)
