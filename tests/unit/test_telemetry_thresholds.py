"""The utilisation thresholds are defined once (gpuplan.constants), the 70% one equal to the catalog's."""

from __future__ import annotations

import importlib

from gpuplan import constants
from gpuplan.inputs.catalog import load_catalog
from gpuplan.telemetry import stream

# the module, not the function of the same name that gpuplan.telemetry exports
analyze = importlib.import_module("gpuplan.telemetry.analyze")


def test_the_70_percent_rule_is_the_catalogs() -> None:
    defaults = load_catalog().defaults
    assert defaults["utilization_threshold"] == constants.UTILIZATION_THRESHOLD
    assert "70%" in defaults["utilization_threshold_source"]


def test_telemetry_uses_the_one_definition() -> None:
    assert stream.BUSY_FROM is analyze.STARVED_MAX_MEAN is analyze.RULE_70 is constants.UTILIZATION_THRESHOLD
    assert stream.IDLE_BELOW is analyze.CLASS_IDLE_MEAN is constants.IDLE_UTILIZATION_BELOW
    assert analyze.CLASS_BUSY_MEAN is constants.BUSY_CLASS_MEAN
    # the float32 cuts sit just below the thresholds they stand for
    assert 0 < stream.BUSY_FROM - stream.BUSY_CUT < 1e-5 and 0 < stream.IDLE_BELOW - stream.IDLE_CUT < 1e-5


def test_documented_figures_unchanged() -> None:
    """docs/audit.md and --explain state these figures; moving them is a change of meaning."""
    rules = analyze.rules()
    assert (rules["idle_below"], rules["busy_from"], rules["near_idle_below"]) == (0.05, 0.70, 0.20)
    assert (rules["class_busy_mean"], rules["class_idle_mean"], rules["starved_max_mean"]) == (0.80, 0.05, 0.70)
    assert rules["rule_70"] == 0.70
    assert constants.IDLE_UTILIZATION_BELOW < constants.UTILIZATION_THRESHOLD < constants.BUSY_CLASS_MEAN
