"""The checks the CRDs make in CEL (which jsonschema cannot run), made before anything is written.

- ClusterQueue/Cohort: every flavor of a resource group lists exactly the `coveredResources`, in
  that order, once each (Kueue's CEL checks the count; the controller rejects the rest);
- `borrowingLimit` only when the ClusterQueue has a cohort (`cohort` in v1beta1, `cohortName` in v1beta2);
- flavorFungibility.preference only with both TryNextFlavor; reclaimWithinCohort=Never only with
  borrowWithinCohort.policy=Never;
- every quota (nominalQuota, borrowingLimit, lendingLimit; Volcano capability/deserved/guarantee) is
  a valid Kubernetes quantity; Volcano queues keep guarantee <= deserved <= capability;
- object names are RFC 1123 names, namespaces RFC 1123 labels, label values valid;
- references resolve: ClusterQueue flavors -> ResourceFlavors, LocalQueue -> ClusterQueue,
  admission checks -> AdmissionChecks and their flavors.
A failure is an `ExportError` naming the object and the field path.
"""

from __future__ import annotations

import re
from typing import Any

from gpuplan.errors import ExportError
from gpuplan.export.quantity import is_quantity, to_decimal

QUOTA_FIELDS = ("nominalQuota", "borrowingLimit", "lendingLimit")


def _fail(obj: dict[str, Any], path: str, message: str) -> ExportError:
    where = f"{obj.get('kind', '?')}/{obj.get('metadata', {}).get('name', '?')}"
    return ExportError(
        message,
        field=f"{where}: {path}",
        hint="This is a bug in the exporter or a bad option value; please report it.",
    )


def check_cluster_queue(obj: dict[str, Any], api: str) -> None:
    spec = obj.get("spec", {})
    cohort_key = "cohortName" if api == "v1beta2" else "cohort"
    other_key = "cohort" if api == "v1beta2" else "cohortName"
    if other_key in spec:
        raise _fail(obj, f"spec.{other_key}", f"is not a field of {api}; use spec.{cohort_key}")
    has_cohort = bool(spec.get(cohort_key))
    for g, group in enumerate(spec.get("resourceGroups", [])):
        covered = list(group.get("coveredResources", []))
        if len(set(covered)) != len(covered):
            raise _fail(
                obj, f"spec.resourceGroups[{g}].coveredResources", f"lists a resource twice: {covered}"
            )
        for f, flavor in enumerate(group.get("flavors", [])):
            names = [r.get("name") for r in flavor.get("resources", [])]
            path = f"spec.resourceGroups[{g}].flavors[{f}]"
            if names != covered:
                raise _fail(
                    obj,
                    f"{path}.resources",
                    f"flavor {flavor.get('name')!r} lists {names}; must list exactly the "
                    f"coveredResources {covered} in that order",
                )
            for r, res in enumerate(flavor.get("resources", [])):
                for key in QUOTA_FIELDS:
                    if key in res and not is_quantity(res[key]):
                        raise _fail(
                            obj, f"{path}.resources[{r}].{key}", f"{res[key]!r} is not a Kubernetes quantity"
                        )
                if "nominalQuota" not in res:
                    raise _fail(obj, f"{path}.resources[{r}].nominalQuota", "is required")
                if "borrowingLimit" in res and not has_cohort:
                    raise _fail(
                        obj,
                        f"{path}.resources[{r}].borrowingLimit",
                        f"borrowingLimit must be nil when {cohort_key} is empty",
                    )
    fung = spec.get("flavorFungibility", {})
    if "preference" in fung and not (
        fung.get("whenCanBorrow") == "TryNextFlavor" and fung.get("whenCanPreempt") == "TryNextFlavor"
    ):
        raise _fail(
            obj,
            "spec.flavorFungibility.preference",
            "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor",
        )
    pre = spec.get("preemption", {})
    if (
        pre.get("reclaimWithinCohort", "Never") == "Never"
        and pre.get("borrowWithinCohort", {}).get("policy", "Never") != "Never"
    ):
        raise _fail(obj, "spec.preemption", "reclaimWithinCohort=Never and borrowWithinCohort.policy!=Never")


def check_kueue(objs: list[dict[str, Any]], api: str) -> None:
    """Raise ExportError at the first object that Kueue's admission would reject."""
    by_kind: dict[str, set[str]] = {}
    for o in objs:
        by_kind.setdefault(o["kind"], set()).add(o["metadata"]["name"])
    for o in objs:
        check_names(o)
        if o["apiVersion"] != f"kueue.x-k8s.io/{api}":
            raise _fail(o, "apiVersion", f"expected kueue.x-k8s.io/{api}, got {o['apiVersion']}")
        spec = o.get("spec", {})
        if o["kind"] == "ClusterQueue":
            check_cluster_queue(o, api)
            flavors = set()
            for g, group in enumerate(spec.get("resourceGroups", [])):
                for f, flavor in enumerate(group.get("flavors", [])):
                    flavors.add(flavor["name"])
                    if flavor["name"] not in by_kind.get("ResourceFlavor", set()):
                        raise _fail(
                            o,
                            f"spec.resourceGroups[{g}].flavors[{f}].name",
                            f"no ResourceFlavor named {flavor['name']!r}",
                        )
            checks = spec.get("admissionChecksStrategy", {}).get("admissionChecks", [])
            for c, check in enumerate(checks):
                if check["name"] not in by_kind.get("AdmissionCheck", set()):
                    raise _fail(
                        o,
                        f"spec.admissionChecksStrategy.admissionChecks[{c}].name",
                        f"no AdmissionCheck named {check['name']!r}",
                    )
                for flavor_name in check.get("onFlavors", []):
                    if flavor_name not in flavors:
                        raise _fail(
                            o,
                            f"spec.admissionChecksStrategy.admissionChecks[{c}].onFlavors",
                            f"{flavor_name!r} is not a flavor of this ClusterQueue",
                        )
        elif o["kind"] == "LocalQueue":
            if spec.get("clusterQueue") not in by_kind.get("ClusterQueue", set()):
                raise _fail(o, "spec.clusterQueue", f"no ClusterQueue named {spec.get('clusterQueue')!r}")
        elif o["kind"] == "AdmissionCheck":
            params = spec.get("parameters")
            if (
                params
                and params.get("kind") == "ProvisioningRequestConfig"
                and params.get("name") not in by_kind.get("ProvisioningRequestConfig", set())
            ):
                raise _fail(
                    o, "spec.parameters.name", f"no ProvisioningRequestConfig named {params.get('name')!r}"
                )


def check_volcano(objs: list[dict[str, Any]]) -> None:
    """Volcano's queue admission (pkg/webhooks/admission/queues/validate, 1.14+): quantities valid and
    not negative, weight >= 1, and guarantee <= deserved <= capability in every resource (a resource
    missing from the larger side counts as 0)."""
    for o in objs:
        check_names(o)
        spec = o.get("spec", {})
        levels = {
            "spec.capability": spec.get("capability", {}),
            "spec.deserved": spec.get("deserved", {}),
            "spec.guarantee.resource": spec.get("guarantee", {}).get("resource", {}),
        }
        for path, resources in levels.items():
            for name, value in resources.items():
                if not is_quantity(value) or to_decimal(value) < 0:
                    raise _fail(o, f"{path}.{name}", f"{value!r} is not a non-negative Kubernetes quantity")
        if int(spec.get("weight", 1)) < 1:
            raise _fail(o, "spec.weight", "queue weight must be a positive integer")
        cap, des, gua = levels.values()
        pairs = [("spec.deserved", des, "spec.capability", cap)] if cap else []
        pairs += [("spec.guarantee.resource", gua, "spec.capability", cap)] if cap else []
        pairs += [("spec.guarantee.resource", gua, "spec.deserved", des)] if gua else []
        for low_path, low, high_path, high in pairs:
            for name, value in low.items():
                if to_decimal(value) > to_decimal(high.get(name, 0)):
                    raise _fail(
                        o,
                        f"{low_path}.{name}",
                        f"{value} exceeds {high_path}.{name} ({high.get(name, 'absent')}); Volcano requires "
                        "guarantee <= deserved <= capability",
                    )


DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def is_dns_label(text: str) -> bool:
    """RFC 1123 label (namespaces, and names that become labels): a-z, 0-9, -, at most 63."""
    return len(text) <= 63 and DNS_LABEL.fullmatch(text) is not None


def check_names(obj: dict[str, Any]) -> None:
    """metadata.name an RFC 1123 subdomain (<= 253), metadata.namespace an RFC 1123 label, and
    every label value / nodeLabels value a valid label value (<= 63)."""
    meta = obj.get("metadata", {})
    name = str(meta.get("name", ""))
    if len(name) > 253 or not DNS_SUBDOMAIN.fullmatch(name):
        raise _fail(obj, "metadata.name", f"{name!r} is not a valid Kubernetes name (RFC 1123 subdomain)")
    if "namespace" in meta and not is_dns_label(str(meta["namespace"])):
        raise _fail(obj, "metadata.namespace", f"{meta['namespace']!r} is not an RFC 1123 label")
    for path, labels in (
        ("metadata.labels", meta.get("labels", {})),
        ("spec.nodeLabels", obj.get("spec", {}).get("nodeLabels", {})),
    ):
        for key, value in labels.items():
            if len(str(value)) > 63 or not LABEL_VALUE.fullmatch(str(value)):
                raise _fail(obj, f"{path}.{key}", f"{value!r} is not a valid label value")
