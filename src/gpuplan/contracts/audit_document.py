"""The audit as its `gpuplan.audit/1` contract: the engine's result, rounded and labelled.

`audit -o json`, the tables, markdown and the HTML report all read this document
(`gpuplan.render.audit` renders it); none of them reads the engine's dataclasses.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gpuplan.contracts.audit import SCHEMA
from gpuplan.contracts.audit import AuditResult as AuditDoc
from gpuplan.telemetry.analyze import AuditResult, GpuStat

# CLASSES and rules are re-exported: the classes in the order the renderers list them, and the thresholds that
# sort GPUs into them (`--explain`); here, not in contracts.audit, which `gpuplan schema` loads without numpy
from gpuplan.telemetry.rules import CLASSES as CLASSES
from gpuplan.telemetry.rules import RULE_70
from gpuplan.telemetry.rules import rules as rules


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(float(x), nd)


def _timeline(res: AuditResult, g: GpuStat) -> dict[str, Any] | None:
    if res.timeline_start_ms is None:
        return None
    start = datetime.fromtimestamp(res.timeline_start_ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "start": start,
        "step_s": res.timeline_step_s,
        "util": [None if v is None else round(v, 3) for v in g.timeline],
    }


def _evidence(g: GpuStat) -> dict[str, Any]:
    if g.cls == "starved":  # the renderers word the fed utilisation; the JSON carries it
        return {**g.evidence, "fed_util": _r(g.fed_util)}
    return g.evidence


def audit_data(res: AuditResult, demand: dict[str, Any] | None = None) -> dict[str, Any]:
    """The contract's JSON, keys in the contract's order (keys beyond the issue's are additive:
    bad_examples, money details, `gpus[].timeline`: the heat map's bins)."""
    price = res.price
    fleet: dict[str, Any] = {
        "gpus": res.fleet.gpus,
        "mean_util": _r(res.fleet.mean_util),
        "gpu_hours_observed": _r(res.fleet.observed_hours),
        "gpu_hours_busy": _r(res.gpu_hours_busy),
        "cost": _r(res.fleet.cost, 2),
        "idle_cost": _r(res.fleet.idle_cost, 2),
        "idle_share": _r(res.fleet.idle_share),
        "busy_share": _r(res.fleet.busy_share),
        "gap_hours": _r(res.fleet.gap_hours),
        "classes": res.fleet.classes,
        "unused_cost": _r(res.unused_cost, 2),
        "starved_savings": _r(res.starved_savings, 2),
        "currency": price.currency if price else None,
        "price_per_gpu_hour": _r(price.per_gpu_hour) if price else None,
        "price_low": _r(price.low) if price and price.low is not None else None,
        "price_high": _r(price.high) if price and price.high is not None else None,
        "rule_70": {"threshold": RULE_70, "below": res.rule_70_below, "gpus_below": res.gpus_below_70},
    }
    if price is not None and price.low is not None and price.high is not None:
        fleet["cost_low"] = _r(res.fleet.observed_hours * price.low, 2)
        fleet["cost_high"] = _r(res.fleet.observed_hours * price.high, 2)
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "input": {
            "files": res.files,
            "rows": res.rows,
            "bad_rows": res.bad_rows,
            "bad_by_kind": res.bad_by_kind,
            "bad_examples": res.bad_examples,
        },
        "gpus": [
            {
                "node": g.node,
                "gpu": g.gpu,
                "samples": g.samples,
                "observed_hours": _r(g.observed_hours),
                "gap_hours": _r(g.gap_hours),
                "mean_util": _r(g.mean_util),
                "idle_share": _r(g.idle_share),
                "busy_share": _r(g.busy_share),
                "class": g.cls,
                "evidence": _evidence(g),
                "timeline": _timeline(res, g),
            }
            for g in res.gpus
        ],
        "nodes": [
            {
                "node": n.name,
                "gpus": n.gpus,
                "observed_hours": _r(n.observed_hours),
                "gap_hours": _r(n.gap_hours),
                "mean_util": _r(n.mean_util),
                "idle_share": _r(n.idle_share),
                "busy_share": _r(n.busy_share),
                "classes": n.classes,
                "cost": _r(n.cost, 2),
                "idle_cost": _r(n.idle_cost, 2),
            }
            for n in res.nodes
        ],
        "fleet": fleet,
    }
    if demand is not None:
        out["demand"] = demand
    return out


def audit_document(res: AuditResult, demand: dict[str, Any] | None = None) -> AuditDoc:
    """The `gpuplan.audit/1` document of an audit (validated: a wrong field fails here, not in a reader)."""
    return AuditDoc.model_validate(audit_data(res, demand))


def to_json(res: AuditResult, demand: dict[str, Any] | None = None) -> dict[str, Any]:
    """What `audit -o json` prints: the document as JSON."""
    return document_json(audit_document(res, demand))


def document_json(doc: AuditDoc) -> dict[str, Any]:
    return doc.model_dump(mode="json", by_alias=True, exclude_unset=True)
