"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """`../shared` beside the project (CI always has it; a user's own checkout may not)."""
    if not SHARED.is_dir():
        pytest.skip("../shared is absent: this test needs the shared traces/schemas (CI has them)")
    return SHARED


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    return ROOT / "examples"
