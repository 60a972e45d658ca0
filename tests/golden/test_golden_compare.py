"""Golden JSON for every example: the compare contract must not drift silently.

Regenerate after an intended change with `GPUPLAN_REGEN=1 pytest tests/golden` and review the diff.
"""

import json
import os
from pathlib import Path

import pytest

from gpuplan import api
from gpuplan.render.compare import compare_json

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.yaml") if not p.stem.startswith("seed-hybrid"))
GOLDEN = Path(__file__).parent / "compare"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_golden(example: Path, lang: str) -> None:
    data = compare_json(api.compare(example).document(lang))
    target = GOLDEN / f"{example.stem}.{lang}.json"
    text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    if os.environ.get("GPUPLAN_REGEN"):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    assert target.exists(), f"missing golden {target.name}: run with GPUPLAN_REGEN=1"
    assert json.loads(target.read_text(encoding="utf-8")) == json.loads(text)
