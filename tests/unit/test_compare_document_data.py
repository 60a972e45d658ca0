"""`compare -o json` prints the document's data without validating the contract again
(`api.CompareResult.document_data`): it must be the validated document's JSON, key for key and byte
for byte, and it must still validate."""

import dataclasses
import json
import random
from pathlib import Path

import pytest

from gpuplan import api
from gpuplan.contracts.compare import CompareResult as CompareDoc
from gpuplan.render.compare import compare_json

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))


def generated(n: int, seed: int) -> str:
    """A scenario with every kind, requirement and schedule shape, and a node-leased offer."""
    rng = random.Random(seed)
    lines = [
        "version: 1", "currency: CNY", "days_per_month: 30",
        "team: {engineer_hour_cost: 150, researcher_hour_cost: 40}",
        "offers:",
        "  - {id: bm, gpu: ascend-910b, mode: bare-metal, price: {amount: [180, 260], per: gpu-day}, min_term: 30d}",
        "  - {id: ct, gpu: ascend-910b, mode: container, price: {amount: [8, 12], per: gpu-hour}}",
        "  - {id: node, gpu: ascend-910b, mode: bare-metal, price: {amount: 14000, per: node-month}, lease_unit: node}",
        "workloads:",
    ]
    for i in range(n):
        req = rng.choice(["[]", "[compliance]", "[elastic]", "[multi-node]", "[isolation]"])
        lines.append(
            f"  - {{id: w{i}, kind: {rng.choice(['training', 'fine-tuning', 'experiment', 'inference'])}, "
            f"gpu: ascend-910b, gpus: {rng.choice([1, 2, 8, 16])}, hours_per_day: {rng.choice([1, 6, 20, 24])}, "
            f"days_per_week: {rng.randint(1, 7)}, duration: {rng.choice([1, 5, 30, 200])}d, "
            f"utilization: {rng.uniform(0.2, 1):.2f}, requires: {req}}}")
    return "\n".join(lines) + "\n"


def _same(result: api.CompareResult, lang: str, explain: bool) -> None:
    fast = result.document_data(lang, explain=explain)
    slow = compare_json(result.document(lang, explain=explain))
    # the same text: keys in the same order, 30 not 30.0 where the contract says float, ...
    assert json.dumps(fast, ensure_ascii=False) == json.dumps(slow, ensure_ascii=False)
    CompareDoc.model_validate(fast)


@pytest.mark.parametrize("explain", [False, True])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_document_data_is_the_validated_document(example: Path, lang: str, explain: bool) -> None:
    _same(api.compare(example), lang, explain)


@pytest.mark.parametrize("seed", [1, 2])
def test_document_data_on_generated_scenarios(seed: int) -> None:
    result = api.compare_text(generated(40, seed))
    _same(result, "en", False)
    # a hand-built scenario may hold an int where the contract says float: printed as the contract's float
    as_int = dataclasses.replace(result, scenario=dataclasses.replace(result.scenario, days_per_month=30))
    _same(as_int, "en", False)
    assert '"days_per_month": 30.0' in json.dumps(as_int.document_data())


def test_the_schema_name_is_the_contracts() -> None:
    from gpuplan.contracts import compare_document
    from gpuplan.contracts.compare import SCHEMA

    assert compare_document.SCHEMA == SCHEMA


def test_compare_json_loads_no_contract_model() -> None:
    """`compare -o json` prints the document's data: the contract's pydantic models stay unloaded."""
    import subprocess
    import sys

    code = ("import sys; from gpuplan.cli import main; main(['compare', sys.argv[1], '-o', 'json']); "
            "print('gpuplan.contracts.compare' in sys.modules, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "examples" / "seed-910b.yaml")],
                         capture_output=True, text=True, check=True)
    assert out.stderr.strip().endswith("False")


@pytest.mark.parametrize("args", [[], ["--lang", "zh", "--explain"]])
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_compare_json_prints_the_validated_document(example: Path, args: list[str],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """What `compare -o json` prints, a workload at a time: json.dumps(indent=2) of the validated document."""
    from gpuplan.cli import main

    assert main(["compare", str(example), "-o", "json", *args]) == 0
    lang = "zh" if args else "en"
    doc = compare_json(api.compare(example).document(lang, explain=bool(args)))
    assert capsys.readouterr().out == json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
