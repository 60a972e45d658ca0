"""The audit renderers read the gpuplan.audit/1 contract, and the JSON validates against its schema."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import jsonschema
import pytest

from gpuplan.contracts import json_schema
from gpuplan.contracts.audit import AuditResult as AuditDoc
from gpuplan.contracts.audit_document import audit_document, document_json
from gpuplan.render.audit import lines, render_markdown
from gpuplan.telemetry import Collector, Price, analyze, read_into

sys.path.insert(0, str(Path(__file__).resolve().parent))
from telemetry_truth import write_logs  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "telemetry"


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> list[AuditDoc]:
    logs = write_logs(tmp_path_factory.mktemp("doc"))
    col = Collector()
    read_into([*logs.files, FIX / "dcgm-k80-scrapes.txt", FIX / "omniopt-a100-bus-id.csv"], col)
    s = col.finish()
    prices = (None, Price(8.0, "CNY"), Price(0.35, "USD", low=0.3, high=0.41))
    return [audit_document(analyze(s, p), {"file": "d.csv", "mode": "util", "rows": 3} if p else None)
            for p in prices]


def test_renderer_imports_only_the_contract() -> None:
    tree = ast.parse((ROOT / "src/gpuplan/render/audit.py").read_text())
    mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert {m for m in mods if m.startswith("gpuplan.")} <= {
        "gpuplan.contracts.audit", "gpuplan.contracts.audit_document", "gpuplan.i18n", "gpuplan.render.fit"}


def test_json_validates_against_the_schema(docs: list[AuditDoc]) -> None:
    schema = json_schema("audit")
    for doc in docs:
        data = json.loads(json.dumps(document_json(doc)))
        errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(data)]
        assert not errors, errors[:3]


def test_renderers_work_from_the_json_alone(docs: list[AuditDoc]) -> None:
    """What a reader of `-o json` has is enough: the markdown from a document rebuilt from JSON is
    the same, and the figures the text needs (fed utilisation, range costs) are in the JSON."""
    for doc in docs:
        again = AuditDoc.model_validate(json.loads(json.dumps(document_json(doc))))
        for lang in ("en", "zh"):
            assert render_markdown(again, lang, True) == render_markdown(doc, lang, True)
    starved = [g for g in docs[0].gpus if g.class_ == "starved"]
    assert starved and all(g.evidence.fed_util and g.evidence.fed_util > g.mean_util for g in starved)
    assert all(g.evidence.fed_util is None for g in docs[0].gpus if g.class_ != "starved")
    f = docs[2].fleet
    assert f.cost_low == pytest.approx(f.gpu_hours_observed * 0.3, abs=0.01)
    assert f.cost_high == pytest.approx(f.gpu_hours_observed * 0.41, abs=0.01)
    assert any("14.12" in x or f"{f.cost_low:,.2f}" in x for x in lines(docs[2], "en", False))
    assert docs[1].fleet.cost_low is None and "cost_low" not in document_json(docs[1])["fleet"]
