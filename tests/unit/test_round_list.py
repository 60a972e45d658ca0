"""`round_list` (the plan document's hourly demand) is Python's round, bit for bit, above all next to
the halves where numpy's scale-rint-unscale and Python's exact rounding can disagree."""

import numpy as np
import pytest

from gpuplan.contracts.plan_document import round_list


@pytest.mark.parametrize("nd", [0, 1, 2, 3, 4, 7])
def test_round_list_is_round(nd: int) -> None:
    rng = np.random.default_rng(nd)
    halves = (rng.integers(-10**7, 10**7, 20000) + 0.5) / 10.0**nd  # the float nearest each half
    ties = (rng.integers(-1000, 1000, 2000) * 2 + 1) / 2.0 ** rng.integers(1, 12, 2000)  # exact binary halves
    values = np.concatenate([
        halves, np.nextafter(halves, np.inf), np.nextafter(halves, -np.inf), ties, rng.random(2000) * 100,
        np.round(rng.random(2000) * 20, 4),  # a demand CSV's 4 places, as plan rounds them to 3
        [0.0, -0.0, 0.0005, -0.0005, -0.00049999, 2.675, 0.125, 0.375, 1e-300, 1e20, 2.0**40, np.inf, -np.inf]])
    got = np.array(round_list(values, nd))
    want = np.array([round(float(x), nd) for x in values])
    assert got.tobytes() == want.tobytes()  # bit for bit: -0.0 too
