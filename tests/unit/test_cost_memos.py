"""The cost memos hold one compare's objects at a time (engines.cost.forget, called by api.compare)."""

from __future__ import annotations

from pathlib import Path

from gpuplan import api
from gpuplan.engines import cost

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_compare_starts_from_empty_memos() -> None:
    first = api.compare(EXAMPLES / "seed-910b.yaml")
    assert cost._TARIFFS and all(hit[1] is first.scenario for hit in cost._TARIFFS.values())
    second = api.compare(EXAMPLES / "h100-multinode.yaml")
    assert cost._TARIFFS and all(hit[1] is second.scenario for hit in cost._TARIFFS.values())
    assert all(hit[0] in second.scenario.offers for hit in cost._TARIFFS.values())
    cost.forget()
    assert not cost._TARIFFS and not cost._SLOWDOWNS
