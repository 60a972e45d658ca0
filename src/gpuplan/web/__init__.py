"""The web interface: `create_app()` builds the FastAPI app `gpuplan serve` runs (see docs/web.md)."""

from __future__ import annotations

from typing import Any


def create_app(**kwargs: Any) -> Any:
    from gpuplan.web.app import create_app as _create

    return _create(**kwargs)


__all__ = ["create_app"]
