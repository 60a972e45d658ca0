"""A one-host Slurm cluster built from `gpuplan export slurm -o DIR`, driven by real slurmctld/slurmd.

The exported gpuplan.conf and gres.conf are included as written, with three test-only changes:
paths (/etc/slurm, /dev) point into the test directory, each node gets a loopback Port (several
slurmd on one host), and ResumeTimeout is short. Device files are links to /dev/null. The exported
gpuplan-resume.sh is the ResumeProgram; its user command (gpuplan-power.env) starts one more local
slurmd as the "cloud" node and prints its address. Checked: a job fills the leased node first, the
overflow job goes to the elastic (CLOUD) node, which the resume script brings up, and runs there; a
typed-GRES job (`--gres=gpu:ascend910b:1`) lands on its model and gets ASCEND_RT_VISIBLE_DEVICES from
the exported TaskProlog. Everything started is stopped at the end. Skipped without Slurm's binaries
(Debian: slurmctld, slurmd, slurm-client) or when not root (slurmd runs jobs as their user).
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from export_plans import seed

from gpuplan.export import ExportOptions, export, parse_plan

BINARIES = {name: shutil.which(name) or next(
    (str(p) for p in (Path("/usr/sbin") / name, Path("/usr/bin") / name) if p.is_file()), None
) for name in ("slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo", "scancel")}  # fmt: skip
MISSING = [name for name, path in BINARIES.items() if not path]
pytestmark = [
    pytest.mark.skipif(bool(MISSING), reason=f"Slurm binaries missing: {', '.join(MISSING)} "
                       "(Debian: apt-get install slurmctld slurmd slurm-client; CI has them)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="slurmd must run as root to start jobs"),
]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def plan() -> dict:
    """H100: 2 leased cards, spilling to 2 more (one CLOUD node), and a spot tier of one 1-card CLOUD node;
    Ascend 910B: 1 leased card, no spill."""
    data = seed()
    base = data["pools"][0]
    h100 = copy.deepcopy(base)
    h100.update(gpu="h100-sxm", vendor="nvidia", reserved_gpus=2, nodes=1, gpus_per_node=8, lease_unit="gpu")
    h100["demand"].update(peak=4.0, mean=2.2, hourly=[2.0] * 20 + [4.0] * 4)
    h100["spot"] = {"offer": "h100-spot", "gpus": 1, "gpus_per_node": 1, "gpu_hours_per_month": 10.0,
                    "lost_gpu_hours_per_month": 1.0, "preemptions_per_month": 2.0, "preemption_rate": 0.05,
                    "workloads": ["sweep"]}
    ascend = copy.deepcopy(base)
    ascend.update(reserved_gpus=1, nodes=1, gpus_per_node=8, lease_unit="gpu")
    ascend["demand"].update(peak=1.0, mean=1.0, hourly=[1.0] * 24)
    data["pools"] = [h100, ascend]
    data["curve"] = []
    job = data["assignments"][0]
    data["assignments"] = [
        {**job, "workload": "train", "gpu": "h100-sxm", "gpus": 2, "placement": "container", "pool_share": 0.5},
        {**job, "workload": "npu-job", "gpu": "ascend-910b", "gpus": 1},
        {**job, "workload": "sweep", "gpu": "h100-sxm", "gpus": 1, "placement": "spot", "pool_share": 0.0,
         "kind": "experiment", "requires": []},
    ]
    return data


class Cluster:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = {**os.environ, "SLURM_CONF": str(root / "slurm.conf")}
        self.procs: list[subprocess.Popen[bytes]] = []

    def run(self, *args: str, check: bool = True) -> str:
        name, *rest = args
        out = subprocess.run(
            [BINARIES[name] or name, *rest], capture_output=True, text=True, env=self.env, timeout=30
        )
        if check:
            assert out.returncode == 0, f"{args}: {out.stdout}{out.stderr}"
        return out.stdout

    def start(self, *args: str) -> None:
        log = open(self.root / f"{Path(args[0]).name}-{len(self.procs)}.out", "wb")  # noqa: SIM115
        self.procs.append(
            subprocess.Popen(args, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        )

    def wait(self, what: str, predicate: Callable[[], Any], timeout: float = 90.0) -> Any:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            value = predicate()
            if value:
                return value
            time.sleep(0.5)
        logs = "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(self.root.glob("*.log"))
        )
        raise AssertionError(f"timed out waiting for {what}\n{self.run('sinfo', '-N', '-l', check=False)}\n{logs}")

    def node_state(self, node: str) -> str:
        out = self.run("scontrol", "show", "node", node, check=False)
        m = re.search(r"State=(\S+)", out)
        return m.group(1) if m else ""

    def job(self, job_id: str) -> dict[str, str]:
        out = self.run("scontrol", "show", "job", job_id, check=False)
        return dict(re.findall(r"(\w+)=(\S*)", out))

    def stop(self) -> None:
        # cancel the jobs while their slurmd still runs, so every slurmstepd ends with them
        self.run("scancel", "--user=root", check=False)
        end = time.monotonic() + 30
        while time.monotonic() < end and self.run("squeue", "-h", check=False).strip():
            time.sleep(0.5)
        pids = [int(p.read_text().strip()) for p in self.root.glob("slurmd-*.pid") if p.read_text().strip()]
        for pid in pids:  # the cloud slurmd the resume hook started (daemonized)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        for pid in pids:
            for _ in range(30):
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.2)
            else:
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    # a short directory: slurmstepd's socket path (spool dir + node + job) must fit 108 bytes
    root = Path(tempfile.mkdtemp(prefix="gpsl", dir="/tmp"))
    try:
        yield from _cluster(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _cluster(root: Path) -> Iterator[Cluster]:
    result = export("slurm", parse_plan(plan(), "live"), ExportOptions(cpu_per_gpu="1", memory_per_gpu="64Mi"))
    files = {f.name: f.text for f in result.files}
    dev = root / "dev"
    dev.mkdir()
    for name in ("nvidia0", "nvidia1", "davinci0"):
        (dev / name).symlink_to("/dev/null")
    ports = {}
    cloud: set[str] = set()
    conf_lines = []
    for line in files["gpuplan.conf"].replace("/etc/slurm/", f"{root}/").splitlines():
        if line.startswith("ResumeTimeout="):
            line = "ResumeTimeout=60"
        if line.startswith("NodeName="):
            node = line.split()[0].removeprefix("NodeName=")
            assert "[" not in node  # one node per line in this plan
            ports[node] = free_port()
            (root / f"s-{node}").mkdir()
            line += f" Port={ports[node]}" + ("" if "State=CLOUD" in line else " NodeAddr=127.0.0.1")
            if "State=CLOUD" in line:
                cloud.add(node)
        conf_lines.append(line)
    (root / "gpuplan.conf").write_text("\n".join(conf_lines) + "\n")
    (root / "gres.conf").write_text(files["gres.conf"].replace("File=/dev/", f"File={dev}/"))
    for name in ("gpuplan-resume.sh", "gpuplan-suspend.sh", "gpuplan-task-prolog.sh"):
        (root / name).write_text(files[name])
        (root / name).chmod(0o755)
    # the user's provider commands: start / stop a local slurmd for the node, print its address
    (root / "provider.sh").write_text(
        "#!/bin/bash\n"
        f'if [ "$1" = create ]; then {BINARIES["slurmd"]} -b -f {root}/slurm.conf -N "$2" || exit 1; echo 127.0.0.1;\n'
        f'else kill "$(cat {root}/slurmd-$2.pid)"; fi\n'
    )
    (root / "provider.sh").chmod(0o755)
    (root / "gpuplan-power.env").write_text(
        files["gpuplan-power.env"]
        .replace("GPUPLAN_RESUME_COMMAND=", f"GPUPLAN_RESUME_COMMAND='{root}/provider.sh create'")
        .replace("GPUPLAN_SUSPEND_COMMAND=", f"GPUPLAN_SUSPEND_COMMAND='{root}/provider.sh delete'")
        .replace("${GPUPLAN_POWER_LOG:-/var/log/slurm/gpuplan-power.log}", f"{root}/power.log")
        + f"SLURM_CONF={root}/slurm.conf\nSCONTROL={BINARIES['scontrol']}\n"
    )
    host = socket.gethostname().split(".")[0]
    (root / "slurm.conf").write_text(
        f"""ClusterName=gpuplanlive
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/s-%n
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd-%n.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
SlurmctldParameters=idle_on_node_suspend
Include {root}/gpuplan.conf
"""
    )
    (root / "state").mkdir()
    c = Cluster(root)
    try:
        c.start(BINARIES["slurmctld"] or "slurmctld", "-D", "-f", str(root / "slurm.conf"))
        c.wait("slurmctld", lambda: c.run("sinfo", check=False))
        for node, _port in ports.items():
            if node not in cloud:
                c.start(BINARIES["slurmd"] or "slurmd", "-D", "-f", str(root / "slurm.conf"), "-N", node)
        for node in ports:
            if node not in cloud:
                c.wait(f"{node} idle", lambda n=node: c.node_state(n).startswith("IDLE"))
        yield c
    finally:
        c.stop()


def test_leased_first_overflow_to_elastic_and_typed_gres(cluster: Cluster) -> None:
    c = cluster
    out = c.root / "out"
    out.mkdir()

    def submit(gres: str, name: str, seconds: int, *extra: str) -> str:
        text = c.run(
            "sbatch", "--parsable", *extra, f"--gres={gres}", "-n", "1", f"-J{name}", f"-o{out}/{name}.txt",
            "--wrap", f"echo node=$SLURMD_NODENAME ascend=${{ASCEND_RT_VISIBLE_DEVICES:-none}}; sleep {seconds}",
        )  # fmt: skip
        return text.strip().split(";")[0]

    # the elastic node is powered down (CLOUD) until needed
    assert "POWERED_DOWN" in c.node_state("h100-sxm-elastic1") or "CLOUD" in c.node_state("h100-sxm-elastic1")
    first = submit("gpu:h100:2", "fill", 120)
    c.wait("the first job to run", lambda: c.job(first).get("JobState") == "RUNNING")
    assert c.job(first)["NodeList"] == "h100-sxm-leased1"  # leased node first (lowest Weight)
    # spot work (issue 26): its own partition of spot nodes, powered up on demand, requeued when reclaimed
    spot = submit("gpu:h100:1", "sweep", 1, "--partition=gpuplan-spot", "--requeue")
    c.wait("the spot job to finish", lambda: c.job(spot).get("JobState") == "COMPLETED", timeout=120)
    assert c.job(spot)["NodeList"] == "h100-sxm-spot1" and c.job(spot)["Requeue"] == "1"
    assert "creating h100-sxm-spot1" in (c.root / "power.log").read_text()
    second = submit("gpu:h100:1", "overflow", 1)
    c.wait("the overflow job to finish", lambda: c.job(second).get("JobState") == "COMPLETED", timeout=120)
    assert c.job(second)["NodeList"] == "h100-sxm-elastic1"
    assert (out / "overflow.txt").read_text().startswith("node=h100-sxm-elastic1 ascend=none")
    power = (c.root / "power.log").read_text()
    assert "creating h100-sxm-elastic1" in power and "h100-sxm-elastic1 is at 127.0.0.1" in power
    npu = submit("gpu:ascend910b:1", "npu", 1)
    c.wait("the typed-GRES job to finish", lambda: c.job(npu).get("JobState") == "COMPLETED")
    assert c.job(npu)["NodeList"] == "ascend-910b-leased1"
    assert (out / "npu.txt").read_text().startswith("node=ascend-910b-leased1 ascend=0")


def test_the_gpu_accounting_line_is_off_where_accounting_is(cluster: Cluster) -> None:
    # this cluster has no slurmdbd (AccountingStorageType=accounting_storage/none): slurmctld started on the
    # exported fragment, whose AccountingStorageTRES line is commented (slurmctld is fatal on it otherwise)
    config = cluster.run("scontrol", "show", "config")
    assert "accounting_storage/none" in config
    assert "gres/gpu" not in next(x for x in config.splitlines() if x.startswith("AccountingStorageTRES"))
