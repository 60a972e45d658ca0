"""`gpuplan.probe/1`: what `gpuplan probe -o json` prints (`contracts.probe_document.to_json`), and what
`compare --measured` reads back.

Every probe is best effort: a value the node does not reveal is null, and `evidence` lists what was
seen. NVIDIA GPUs (NVML) and Huawei Ascend NPUs (npu-smi) have different shapes, told apart by `vendor`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from gpuplan.contracts._base import Count, Int, Record

SCHEMA = "gpuplan.probe/1"

Deployment = Literal["bare-metal", "vm", "container", "container-on-vm"]
# `bench` when nothing was measured, else one `bench_<figure>` per figure of `bench.results`
CheckId = Literal[
    "network_speed",
    "rdma",
    "gpu_interconnect",
    "gpu_shared",
    "deployment",
    "bench",
    "bench_hbm_copy",
    "bench_matmul_bf16",
    "bench_h2d_pinned",
    "bench_p2p",
    "bench_allreduce_busbw",
]
CheckStatus = Literal["pass", "warn", "fail", "unknown"]
# nvidia-smi topo's words: NVLink, or the PCIe path between two GPUs ("?": NVML did not say)
P2pLink = Literal["NV", "SELF", "PIX", "PXB", "PHB", "NODE", "SYS", "?"]


class Container(Record):
    detected: bool
    runtime: str | None = Field(description="docker, kubernetes, containerd, podman, ...; null if none seen.")
    evidence: list[str]


class Virtualization(Record):
    detected: bool
    hypervisor: str | None = Field(description="kvm, vmware, xen, hyper-v, nitro, ...; null if none seen.")
    evidence: list[str]


class Cpu(Record):
    model: str | None
    logical_cpus: Count | None
    sockets: Count | None
    physical_cores: Count | None


class CgroupLimits(Record):
    version: Literal[1, 2] | None
    cpu_cores: float | None = Field(description="CPU quota in cores; null when unlimited or unknown.")
    memory_gb: float | None = Field(description="Memory limit in GiB; null when unlimited or unknown.")
    evidence: list[str]


class GpuDirectRdma(Record):
    peermem_loaded: bool | None = Field(description="nvidia_peermem or nv_peer_mem loaded; null: unreadable.")
    evidence: list[str]


class DriverStatus(Record):
    available: bool
    reason: str | None = Field(description="Why not available; null when available.")


class GpuDrivers(Record):
    nvml: DriverStatus
    npu_smi: DriverStatus


class Host(Record):
    deployment: Deployment
    container: Container
    virtualization: Virtualization
    cpu: Cpu
    memory_gb: float | None = Field(description="MemTotal, GiB.")
    cgroup_limits: CgroupLimits
    gpudirect_rdma: GpuDirectRdma
    gpu_drivers: GpuDrivers


class MigInstance(Record):
    name: str | None
    memory_gb: float | None


class Mig(Record):
    enabled: bool
    instances: list[MigInstance]


class NvLink(Record):
    links: Count = Field(description="NVLink links the GPU reports.")
    active: Count
    version: Int | None


class Pcie(Record):
    gen: Int | None
    width: Int | None
    max_gen: Int | None
    max_width: Int | None


class Clocks(Record):
    sm: Int | None
    sm_max: Int | None
    mem: Int | None
    mem_max: Int | None


class GpuProcess(Record):
    pid: Int | None
    memory_gb: float | None


class NvidiaGpu(Record):
    index: Count
    vendor: Literal["nvidia"]
    model: str = Field(description="The name NVML reports.")
    catalog_id: str | None = Field(description="The catalog GPU this model matched; null if none.")
    memory_gb: float | None
    uuid: str | None
    pci_bus_id: str | None
    driver_version: str | None
    cuda_version: str | None
    mig: Mig | None = Field(description="null when the GPU has no MIG support.")
    nvlink: NvLink
    p2p: dict[str, P2pLink] = Field(description="To each other GPU (by index): NV or the PCIe path.")
    pcie: Pcie
    ecc: bool | None
    clocks_mhz: Clocks
    processes: list[GpuProcess]


class AscendNpu(Record):
    index: Count
    vendor: Literal["huawei"]
    model: str = Field(description="`Ascend <name>` from npu-smi.")
    catalog_id: str | None
    memory_gb: float | None
    health: str
    pci_bus_id: str
    driver_version: str | None = Field(description="npu-smi's version.")
    nvlink: None
    hccs: None = Field(description="Not read yet (always null).")
    processes: list[GpuProcess]


Gpu = Annotated[NvidiaGpu | AscendNpu, Field(discriminator="vendor")]


class RdmaRef(Record):
    device: str
    link_layer: str | None = Field(description="RoCE or InfiniBand.")
    state: str | None
    rate_gbps: float | None


class NetworkInterface(Record):
    name: str = Field(description="Interface name, or `device/port` for an RDMA port without one.")
    speed_gbps: float | None = Field(description="Link speed; null when unreadable (common on virtual NICs).")
    rdma: RdmaRef | None
    operstate: str | None
    virtual: bool


class Figure(Record):
    value: float = Field(description="Median over the iterations, in `unit`.")
    unit: Literal["TB/s", "TFLOPS", "GB/s"]
    spec: float | None = Field(description="The catalog's (or PCIe link's) figure; null when unknown.")
    ratio: float | None = Field(description="value / spec.")
    best: float
    samples_s: list[float] = Field(description="Every iteration's time, seconds.")


class BytesFigure(Figure):
    bytes: Count


class MatmulFigure(Figure):
    n: Count = Field(description="Matrix size (n x n, BF16).")


class AllreduceFigure(BytesFigure):
    ranks: Count


class BenchResults(Record):
    hbm_copy: BytesFigure
    matmul_bf16: MatmulFigure
    h2d_pinned: BytesFigure
    p2p: BytesFigure | None = Field(description="null with one GPU.")
    allreduce_busbw: AllreduceFigure | None = Field(description="null with one GPU.")


class NoResults(Record):
    """Always `{}`: nothing was measured."""


class BenchSkipped(Record):
    ran: Literal[False]
    reason: str
    device: None
    results: NoResults


class BenchRan(Record):
    ran: Literal[True]
    reason: None
    device: str = Field(description="torch's name of GPU 0.")
    catalog_id: str | None
    gpus: Count
    results: BenchResults


class Check(Record):
    id: CheckId
    status: CheckStatus
    detail: str = Field(description="In the output language.")


class ProbeResult(Record):
    """`gpuplan probe -o json`: what this node is, its GPUs, network, benchmarks and checks."""

    schema_: Literal["gpuplan.probe/1"] = Field(alias="schema")
    host: Host
    gpus: list[Gpu]
    network: list[NetworkInterface]
    bench: BenchRan | BenchSkipped | None = Field(description="null without --bench.")
    checks: list[Check]
