"""The page and the answers that never change while the server runs (health, catalog, starter scenario)."""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from gpuplan.web.runtime import dumps, rt

router = APIRouter()

ENGINES = ("compare", "plan", "simulate", "audit", "export", "commit")

_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)
_HANDLER = re.compile(r'\son[a-z]+="([^"]*)"')


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def page_csp(html: str) -> str:
    """The page's Content-Security-Policy: its own inline scripts (by hash) and its inline event handlers
    (by hash, `'unsafe-hashes'`) run, nothing else does; requests go to this server only; inline styles
    and `data:` images (the charts) are allowed; no frames, plugins, forms sent elsewhere or `<base>`."""
    scripts = sorted({_sha(s) for s in _SCRIPT.findall(html)})
    handlers = sorted({_sha(h) for h in _HANDLER.findall(html)})
    script_src = " ".join(scripts + (["'unsafe-hashes'", *handlers] if handlers else []))
    return (f"default-src 'none'; script-src {script_src}; style-src 'unsafe-inline'; img-src 'self' data:; "
            "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'")


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
async def index(request: Request, lang: str = "en") -> Response:
    from gpuplan.web.page import render_page

    pages = rt(request).pages  # the page depends only on its language: rendered once each
    lang = lang if lang in ("en", "zh") else "en"
    if lang not in pages:
        html = render_page(lang)
        pages[lang] = (html.encode(), page_csp(html))
    body, csp = pages[lang]
    return HTMLResponse(body, headers={"content-security-policy": csp})


@router.get("/api/health", tags=["meta"])
async def health(request: Request) -> Response:
    """`{"ok": true, "version": …, "engines": {"compare": true, "plan": true, …}}`"""
    return Response(request.app.state.health_body, media_type="application/json")


@router.get("/api/catalog", tags=["catalog"])
async def get_catalog(request: Request) -> Response:
    """The GPUs, offers and defaults the server uses (bundled plus its --catalog file)."""
    return Response(request.app.state.catalog_body, media_type="application/json")


@router.get("/api/example", tags=["meta"])
async def example() -> dict[str, str]:
    """A starter scenario (what `gpuplan init` writes)."""
    from gpuplan.web.page import starter_scenario

    return {"scenario": starter_scenario()}


def fixed_bodies(cat: Any, version: str) -> tuple[bytes, bytes]:
    """The health and catalog answers, encoded once."""
    health = dumps({"ok": True, "version": version, "engines": dict.fromkeys(ENGINES, True)})
    catalog = dumps({
        "files": list(cat.files),
        "gpus": [g.model_dump(mode="json") for g in cat.gpus.values()],
        "offers": [{k: v for k, v in o.items() if not k.startswith("_")} for o in cat.offers.values()],
        "defaults": cat.defaults,
    })
    return health, catalog
