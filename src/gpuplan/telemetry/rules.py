"""The audit's definitions: per-sample thresholds, gap rule and class rules (numbers only, no code).

The analysis (`stream`, `analyze`) decides with them; the renderers word them for `--explain` and the
docs. Idle and busy are defined once, in gpuplan.constants (busy is the article's 70% rule, the same
figure as the catalog's); see docs/audit.md for each rule.
"""

from __future__ import annotations

from gpuplan.constants import BUSY_CLASS_MEAN, IDLE_UTILIZATION_BELOW, UTILIZATION_THRESHOLD

IDLE_BELOW = IDLE_UTILIZATION_BELOW
BUSY_FROM = UTILIZATION_THRESHOLD
NEAR_IDLE_BELOW = 0.20
GAP_FACTOR = 3.0
MIN_GAP_S = 30.0
# Class thresholds on a GPU's mean: idle is the same 5% as an idle sample; the starved ceiling and
# the 70% rule are the article's threshold, as is BUSY_FROM.
CLASS_BUSY_MEAN = BUSY_CLASS_MEAN
CLASS_IDLE_MEAN = IDLE_UTILIZATION_BELOW
STARVED_MAX_MEAN = UTILIZATION_THRESHOLD
STARVED_MIN_SWITCHES = 6
STARVED_SWITCHES_PER_HOUR = 2.0
STARVED_MAX_RUN_MIN = 10.0
MIXED_MIN_RUN_H = 0.5
RULE_70 = UTILIZATION_THRESHOLD
CLASSES = ("busy", "idle", "starved", "mixed", "partial")


def rules() -> dict[str, float]:
    """The thresholds, for --explain and the docs."""
    return {
        "idle_below": IDLE_BELOW,
        "busy_from": BUSY_FROM,
        "near_idle_below": NEAR_IDLE_BELOW,
        "class_busy_mean": CLASS_BUSY_MEAN,
        "class_idle_mean": CLASS_IDLE_MEAN,
        "starved_max_mean": STARVED_MAX_MEAN,
        "starved_min_switches": STARVED_MIN_SWITCHES,
        "starved_switches_per_hour": STARVED_SWITCHES_PER_HOUR,
        "starved_max_run_min": STARVED_MAX_RUN_MIN,
        "mixed_min_run_h": MIXED_MIN_RUN_H,
        "gap_factor": GAP_FACTOR,
        "min_gap_s": MIN_GAP_S,
        "rule_70": RULE_70,
    }
