"""The compare report carries the article's vendor checklist (issue 17), every check with its evidence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuplan import api
from gpuplan.render.html import render_report

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_compare_report_has_the_vendor_checklist(lang: str) -> None:
    result = api.compare(EXAMPLES / "sites-data.yaml", hours_curves=True)
    html = render_report("compare", result, lang)
    doc = api.vendors(EXAMPLES / "sites-data.yaml")
    rows = re.findall(r'<tr data-offer="([^"]+)" data-check="([^"]+)">', html)
    assert rows == [(o.offer, c.id) for o in doc.offers for c in o.checks]
    assert len(rows) == 4 * len(doc.offers)
    assert 'id="vendors"' in html and "status-warn" in html  # bm-remote: data 1 Gbps away
