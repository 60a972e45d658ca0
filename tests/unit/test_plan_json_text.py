"""`plan -o json` is written by `render.json_text.dumps_indented` (lists of floats, the hourly demand,
in one join): the text must be json.dumps's, character for character, on every plan and on values
json writes its own way."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from gpuplan import api
from gpuplan.render.json_text import dumps_indented
from gpuplan.render.plan import plan_json

ROOT = Path(__file__).resolve().parents[2]


def _dumps(doc: object) -> str:
    return json.dumps(plan_json(doc), ensure_ascii=False, indent=2)  # type: ignore[arg-type]


def plan_json_text(doc: object) -> str:
    return dumps_indented(plan_json(doc))  # type: ignore[arg-type]


@pytest.mark.parametrize("example", sorted(p.name for p in (ROOT / "examples").glob("*.yaml")))
def test_examples_are_json_dumps(example: str) -> None:
    for lang in ("en", "zh"):
        doc = api.plan_document(ROOT / "examples" / example, lang=lang)  # type: ignore[arg-type]
        assert plan_json_text(doc) == _dumps(doc)


def test_a_demand_file_with_waiting_is_json_dumps(tmp_path: Path) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text("version: 1\ncurrency: USD\noffers:\n"
                    "  - {id: bm, gpu: l4, mode: bare-metal, price: {amount: 1.5, per: gpu-hour}}\n"
                    "  - {id: ct, gpu: l4, mode: container, price: {amount: 3.0, per: gpu-hour}}\n"
                    "  - {id: bm2, gpu: h100-sxm, mode: bare-metal, price: {amount: 2.5, per: gpu-hour}}\n"
                    "  - {id: ct2, gpu: h100-sxm, mode: container, price: {amount: 5.0, per: gpu-hour}}\n"
                    "workloads:\n  - {id: w, kind: training, gpu: l4, gpus: 8, hours_per_day: 12, duration: 30d}\n"
                    "  - {id: v, kind: training, gpu: h100-sxm, gpus: 8, hours_per_day: 12, duration: 30d}\n")
    rng = np.random.default_rng(5)
    rows = [f"2026-01-{1 + h // 24:02d}T{h % 24:02d}:00:00Z,{g},{x:g}"
            for g in ("l4", "h100-sxm") for h, x in enumerate(np.round(rng.random(24 * 20) * 12, 4))]
    dem = tmp_path / "d.csv"
    dem.write_text("time,gpu,gpus\n" + "\n".join(rows) + "\n")
    doc = api.plan_document(scen, demand=dem, max_wait="p95=2h")
    assert plan_json_text(doc) == _dumps(doc)
    hourly = doc.pools[0].demand.hourly
    for values in ([0.1 + 0.2, 1e-7, 12345678901234.5], [math.nan, 1.0], [math.inf], [-0.0, 2.0], [], [3.0]):
        pools = [doc.pools[0].model_copy(update={"demand": doc.pools[0].demand.model_copy(
            update={"hourly": values})}), *doc.pools[1:]]
        odd = doc.model_copy(update={"pools": pools})
        assert plan_json_text(odd) == _dumps(odd), values
    assert hourly == doc.pools[0].demand.hourly


def test_float_lists_are_reprs() -> None:
    rng = np.random.default_rng(2)
    values = [round(float(x), 3) for x in rng.random(5000) * 10.0 ** rng.integers(-3, 12, 5000)]
    values += [0.0, -0.0, 1.0, 0.001, 0.05, 0.5, 10.0, 100.25, 999999999999.999, 1e-7, 1e300]
    for data in ({"a": values[:7], "b": [values[7:2000], values[2000:]]}, [1.0, 2], [1.0, math.nan],
                 [1e308, 1e308], [math.inf, -1.0], {"x": [0.1 + 0.2]}):
        assert dumps_indented(data) == json.dumps(data, ensure_ascii=False, indent=2)
