"""Calibration: the model against published measurements (cases.yaml; sources and tolerances there)."""

from __future__ import annotations

import pytest
from fidelity import evaluate, load_cases  # type: ignore[import-not-found]

CASES = load_cases()["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_published_case_within_tolerance(case: dict) -> None:
    row = evaluate(case)
    assert row.ok, (f"{row.id}: predicted {row.predicted:+.1%}, measured {row.measured:+.1%}, "
                    f"error {row.error:+.1%} > tolerance {row.tolerance:.1%} ({row.why})")


def test_enough_cases_from_independent_sources() -> None:
    assert len(CASES) >= 10
    families = {c["source"].split(":")[0].split(",")[0].split(" (")[0] for c in CASES}
    assert len(families) >= 3, families
    assert sum(not c["in_sample"] for c in CASES) >= 5  # not only the cases the defaults came from
    for c in CASES:
        assert c["source"] and c["tolerance_why"] and 0 < c["tolerance"] <= 0.06
