"""Run under a Python that has SkyPilot (not the project's environment: SkyPilot pins click and uvicorn
below the project's versions): SkyPilot's own Kubernetes feasibility check, `check_instance_fits`,
against fake clusters given as JSON on stdin. Only the node listing is replaced (no Kubernetes API);
the label-scheme detection, accelerator matching and resource-key logic are SkyPilot's.

stdin:  {"clusters": {CONTEXT: [{"name", "labels": {..}, "resource_key", "count"}]},
         "checks": [{"context", "instance", "resource_key": KEY or null}]}
stdout: [[fits, reason], ...] in the order of the checks
"""

from __future__ import annotations

import json
import logging
import os
import sys
from types import SimpleNamespace
from typing import Any


def _node(spec: dict[str, Any]) -> SimpleNamespace:
    cap = {"cpu": "192", "memory": "2048Gi", spec["resource_key"]: str(spec["count"])}
    node = SimpleNamespace(metadata=SimpleNamespace(name=spec["name"], labels=dict(spec["labels"])),
                           status=SimpleNamespace(capacity=cap, allocatable=cap))
    node.is_ready = lambda: True
    return node


def main() -> None:
    logging.disable(logging.WARNING)  # "Failed to load kube config": expected, there is no cluster
    from sky.provision.kubernetes import utils as ku
    from sky.utils import annotations

    data = json.load(sys.stdin)
    clusters = {ctx: [_node(n) for n in nodes] for ctx, nodes in data["clusters"].items()}
    ku.get_kubernetes_nodes = lambda context=None, **_: clusters[context]
    out = []
    for check in data["checks"]:
        annotations.clear_request_level_cache()
        if check.get("resource_key"):
            os.environ["CUSTOM_GPU_RESOURCE_KEY"] = check["resource_key"]
        else:
            os.environ.pop("CUSTOM_GPU_RESOURCE_KEY", None)
        fits, reason = ku.check_instance_fits(check["context"], check["instance"])
        out.append([bool(fits), reason])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
