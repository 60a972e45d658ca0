"""A probe report as its `gpuplan.probe/1` document, its checks worded in the output language.

(Not in `contracts.probe`, whose pydantic models load only when a document is validated.)
"""

from __future__ import annotations

from typing import Any

from gpuplan.i18n.notes import check_text
from gpuplan.probe import ProbeReport


def to_json(report: ProbeReport, lang: str = "en") -> dict[str, Any]:
    """The `gpuplan.probe/1` document: the report plus checks as {id, status, detail}."""
    checks = [{"id": c.id, "status": c.status, "detail": check_text(c, lang)} for c in report.checks]
    return {**report.data, "checks": checks}
