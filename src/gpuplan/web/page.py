"""The one page of `gpuplan serve`: a form, a YAML editor and the report fragment, all inline (the
page loads nothing else; its script talks to the JSON API of the same server)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from gpuplan.i18n import catalog, t

TRACE_FORMATS = ("auto", "generic", "alibaba-2023", "alibaba-pai-2020", "philly", "helios", "tiresias")
"""The replay form's trace formats: `gpuplan.sim.traces.FORMATS` (a test holds them equal) without loading
the trace reader (and numpy) into the server to draw a page."""


def starter_scenario() -> str:
    from gpuplan.api import STARTER

    return STARTER


@lru_cache(maxsize=8)
def _static(name: str) -> str:
    return resources.files("gpuplan.web").joinpath("static", name).read_text(encoding="utf-8")


def _labels(lang: str) -> dict[str, str]:
    return {k.removeprefix("web."): v for k, v in catalog(lang).items() if k.startswith("web.")}


def render_page(lang: str) -> str:
    from markupsafe import Markup

    from gpuplan.render.html import _env

    env = _env()
    tmpl = env.from_string(_static("index.html"))
    cfg: dict[str, Any] = {"lang": lang, "labels": _labels(lang), "starter": starter_scenario()}

    def tr(key: str, **values: Any) -> str:
        return t(f"web.{key}", lang, **values)

    # </script> cannot appear inside the JSON: escape '<' as \u003c
    cfg_json = json.dumps(cfg, ensure_ascii=False).replace("<", "\\u003c")
    from gpuplan.constants import DEFAULT_QUEUEING, PACKINGS, QUEUEINGS
    from gpuplan.inputs.units import PRICE_PERIODS
    from gpuplan.quotes import MODES

    return tmpl.render(
        lang=lang, t=tr,
        queueings=QUEUEINGS, default_queueing=DEFAULT_QUEUEING, packings=PACKINGS, trace_formats=TRACE_FORMATS,
        quote_modes=MODES, price_periods=PRICE_PERIODS,
        report_css=Markup(env.loader.get_source(env, "report.css")[0]),  # noqa: S704 - our own file
        page_css=Markup(_static("page.css")),  # noqa: S704
        page_js=Markup(_static("page.js")),  # noqa: S704
        config=Markup(cfg_json),  # noqa: S704
    )
