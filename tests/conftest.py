"""Shared test fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (a gate gives the same answer for the same code);
# HYPOTHESIS_PROFILE=explore draws new ones each run, to hunt for cases worth pinning with @example.
settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

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
