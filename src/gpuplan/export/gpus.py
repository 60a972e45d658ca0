"""The names each scheduler knows a GPU model by, keyed by the gpuplan catalog id.

The rows below were checked against each scheduler's own lists (the tests hold them equal to the one
alias table, `gpuplan.inputs.gpu_names`); any other catalog GPU takes its names from that alias table.
One row per GPU:

- `short`: the Slurm GRES type and node feature (`Gres=gpu:h100:8`, `--gres=gpu:h100:8`,
  `--constraint=h100`): lower case, no `:` or `,`;
- `gfd`: the `nvidia.com/gpu.product` node label NVIDIA GPU feature discovery (GPU Operator) sets:
  the product name the driver reports (`nvidia-smi --query-gpu=name`) with spaces as dashes, for
  the SXM parts in the catalog. None for non-NVIDIA cards, which are pinned by the plan's own label
  `gpuplan.io/gpu=<gpu id>` (set it on the nodes yourself);
- `skypilot`: the accelerator name SkyPilot uses (its catalog / `sky show-gpus` spelling);
- `skypilot_canonical`: whether that name is in SkyPilot's canonical GPU list for Kubernetes
  (`sky/utils/gpu_names.py` CANONICAL_GPU_NAMES, skypilot 0.14.1), i.e. whether SkyPilot finds such
  nodes from the GPU feature discovery label alone. Other names work on Kubernetes only on nodes
  labelled `skypilot.co/accelerator=<name in lower case>` (SkyPilot's own label).

A GPU id in neither table gets its slug (without dashes) as short name and as SkyPilot name, no GFD label.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplan.export.model import Pool, slugify

GFD_LABEL = "nvidia.com/gpu.product"
PLAN_GPU_LABEL = "gpuplan.io/gpu"
SKYPILOT_LABEL = "skypilot.co/accelerator"
# The GPU resource keys SkyPilot's Kubernetes backend requests (skypilot 0.14.1,
# sky/provision/kubernetes/utils.py SUPPORTED_GPU_RESOURCE_KEYS, NEURON_RESOURCE_KEY, and TPUs);
# any other key must be set with the CUSTOM_GPU_RESOURCE_KEY environment variable.
SKYPILOT_K8S_RESOURCE_KEYS = ("nvidia.com/gpu", "amd.com/gpu", "google.com/tpu", "aws.amazon.com/neuron")


@dataclass(frozen=True)
class GpuNames:
    short: str
    gfd: str | None
    skypilot: str
    skypilot_canonical: bool


TABLE: dict[str, GpuNames] = {
    "a100-40g": GpuNames("a100-40gb", "NVIDIA-A100-SXM4-40GB", "A100", True),
    "a100-80g": GpuNames("a100-80gb", "NVIDIA-A100-SXM4-80GB", "A100-80GB", True),
    "a800-80g": GpuNames("a800", "NVIDIA-A800-SXM4-80GB", "A800", False),
    "h100-sxm": GpuNames("h100", "NVIDIA-H100-80GB-HBM3", "H100", True),
    "h800-sxm": GpuNames("h800", "NVIDIA-H800", "H800", False),
    "h200-sxm": GpuNames("h200", "NVIDIA-H200", "H200", True),
    "h20": GpuNames("h20", "NVIDIA-H20", "H20", False),
    "l40s": GpuNames("l40s", "NVIDIA-L40S", "L40S", True),
    "l20": GpuNames("l20", "NVIDIA-L20", "L20", False),
    "rtx-4090": GpuNames("rtx4090", "NVIDIA-GeForce-RTX-4090", "RTX4090", False),
    "b200": GpuNames("b200", "NVIDIA-B200", "B200", True),
    "ascend-910b": GpuNames("ascend910b", None, "Ascend910B", False),
}


def names(gpu: str) -> GpuNames:
    """The rows above, else the one alias table's names (`inputs.gpu_names`: GFD product label and
    SkyPilot name where it knows them), else the id's slug."""
    found = TABLE.get(gpu)
    if found:
        return found
    from gpuplan.inputs.gpu_names import k8s_product, skypilot_name

    slug = slugify(gpu)
    short = slug.replace("-", "")
    return GpuNames(short, k8s_product(gpu), skypilot_name(gpu) or slug, False)


def node_labels(pool: Pool) -> dict[str, str]:
    """The label that selects this GPU model's nodes: GFD's product label for NVIDIA cards in the
    table, else the plan's own `gpuplan.io/gpu=<slug>`."""
    gfd = names(pool.gpu).gfd if pool.vendor == "nvidia" else None
    return {GFD_LABEL: gfd} if gfd else {PLAN_GPU_LABEL: pool.slug}


__all__ = ["GFD_LABEL", "PLAN_GPU_LABEL", "SKYPILOT_LABEL", "TABLE", "GpuNames", "names", "node_labels"]
