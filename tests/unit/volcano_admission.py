"""A port of Volcano's queue admission, to run on every Queue the exporter writes.

Ported from volcano-sh/volcano `pkg/webhooks/admission/queues/validate/validate_queue.go`, the
version after Volcano 1.13 whose validateQueue notes "weight >= 1 validation is now enforced by CRD
schema (minimum: 1)" (the CRD in ../shared/schemas/volcano has that minimum), i.e. the rules a
CREATE of a v1beta1 Queue goes through in Volcano 1.14 / 1.15, and `pkg/scheduler/api`
(NewResource, LessPartly, the newer form that counts a scalar missing on the left as less).
The 1.15 chart's ValidatingAdmissionPolicy was not found in the sources searched; not ported.

- validateStateOfQueue: status.state empty, Open or Closed;
- weight >= 1 (CRD schema);
- validateResourceOfQueue: every quantity in capability / deserved / guarantee.resource is not
  negative (k8s ValidateResourceQuantityValue); then, comparing as api.Resource (cpu in millicores,
  memory in bytes, every other resource a scalar in milli-units; a scalar present on the right side
  and absent on the left counts as less, `LessPartly(.., Zero)`):
  capability non-empty and capability <partly deserved   -> "deserved should less equal than capability";
  capability non-empty and capability <partly guarantee  -> "guarantee should less equal than capability";
  guarantee non-empty and deserved <partly guarantee     -> "guarantee should less equal than deserved";
- validateHierarchicalAttributes: the hierarchy / hierarchy-weights annotations have the same number
  of parts and every weight is a number > 0;
- validateHierarchicalQueue: spec.parent is not the queue itself (the lookups of other queues need a
  cluster and are not ported; the exporter writes no parent).
Returns the list of messages (empty = admitted).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpuplan.export.quantity import to_decimal

HIERARCHY = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS = "volcano.sh/hierarchy-weights"
# resources api.NewResource ignores (k8s "native" resources other than cpu/memory that are not scalars)
_NOT_SCALAR = {"pods", "ephemeral-storage"}


def new_resource(resources: dict[str, Any]) -> dict[str, Decimal]:
    """api.NewResource: cpu -> millicores, memory -> bytes, scalars (extended resources, hugepages)
    -> milli-units; a dimension without value is absent (scalars) or 0 (cpu, memory)."""
    out: dict[str, Decimal] = {"cpu": Decimal(0), "memory": Decimal(0)}
    for name, value in resources.items():
        q = to_decimal(value)
        if name == "cpu":
            out["cpu"] += q * 1000
        elif name == "memory":
            out["memory"] += q
        elif name not in _NOT_SCALAR:
            out[name] = out.get(name, Decimal(0)) + q * 1000
    return out


def less_partly(left: dict[str, Decimal], right: dict[str, Decimal]) -> bool:
    """Resource.LessPartly(rr, Zero): some dimension of left is below right's."""
    if left["cpu"] < right["cpu"] or left["memory"] < right["memory"]:
        return True
    scalars = lambda r: {k: v for k, v in r.items() if k not in ("cpu", "memory")}  # noqa: E731
    if any(name not in scalars(left) for name in scalars(right)):
        return True
    return any(v < right.get(name, Decimal(0)) for name, v in scalars(left).items())


def admit(queue: dict[str, Any]) -> list[str]:
    errors: list[str] = []
    spec = queue.get("spec", {})
    state = queue.get("status", {}).get("state", "")
    if state and state not in ("Open", "Closed"):
        errors.append("queue state must be in [Open Closed]")
    if int(spec.get("weight", 1)) < 1:
        errors.append("spec.weight: should be greater than or equal to 1")
    cap_raw = spec.get("capability") or {}
    des_raw = spec.get("deserved") or {}
    gua_raw = (spec.get("guarantee") or {}).get("resource") or {}
    for where, raw in (("capability", cap_raw), ("deserved", des_raw), ("guarantee.resource", gua_raw)):
        for name, value in raw.items():
            if to_decimal(value) < 0:
                errors.append(f"spec.{where}.{name}: must be greater than or equal to 0")
    cap, des, gua = new_resource(cap_raw), new_resource(des_raw), new_resource(gua_raw)
    if cap_raw and less_partly(cap, des):
        errors.append("spec.deserved: deserved should less equal than capability")
    elif cap_raw and less_partly(cap, gua):
        errors.append("spec.guarantee: guarantee should less equal than capability")
    elif gua_raw and less_partly(des, gua):
        errors.append("spec.guarantee: guarantee should less equal than deserved")
    notes = queue.get("metadata", {}).get("annotations", {}) or {}
    hierarchy, weights = notes.get(HIERARCHY, ""), notes.get(HIERARCHY_WEIGHTS, "")
    if hierarchy or weights:
        if len(hierarchy.split("/")) != len(weights.split("/")):
            errors.append(f"{HIERARCHY} must have the same length with {HIERARCHY_WEIGHTS}")
        for w in weights.split("/"):
            try:
                if float(w) <= 0:
                    errors.append(f"{w} in the {weights} must be larger than 0")
            except ValueError:
                errors.append(f"{w} in the {weights} is invalid number")
    if spec.get("parent") and spec["parent"] == queue.get("metadata", {}).get("name"):
        errors.append("cannot use itself as parent")
    return errors
