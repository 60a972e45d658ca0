"""The ResumeProgram / SuspendProgram / TaskProlog the Slurm export writes, run with bash: they call
the user's command per node, log, and report to slurmctld through scontrol (a recording stand-in
here; the real one needs a running slurmctld)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from export_plans import seed

from gpuplan.export import ExportOptions, export, parse_plan

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(not BASH, reason="bash is not installed")

FAKE_SCONTROL = """#!/bin/bash
# `show hostnames a[1-2]` expands the two forms the exporter writes; every call is recorded
echo "$*" >> "$SCONTROL_LOG"
if [ "$1 $2" = "show hostnames" ]; then
    if [[ "$3" =~ ^(.*)\\[([0-9]+)-([0-9]+)\\]$ ]]; then
        for i in $(seq "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"); do echo "${BASH_REMATCH[1]}$i"; done
    else
        echo "$3"
    fi
fi
"""


def write_files(tmp_path: Path) -> dict[str, Path]:
    result = export("slurm", parse_plan(seed(), "seed"), ExportOptions())
    paths = {}
    for f in result.files:
        path = tmp_path / f.name
        path.write_text(f.text)
        path.chmod(0o755)
        paths[f.name] = path
    scontrol = tmp_path / "scontrol"
    scontrol.write_text(FAKE_SCONTROL)
    scontrol.chmod(0o755)
    return paths


def run(script: Path, arg: str, tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {
        "PATH": os.environ["PATH"],
        "SCONTROL": str(tmp_path / "scontrol"),
        "SCONTROL_LOG": str(tmp_path / "scontrol.log"),
        **env,
    }
    return subprocess.run([BASH or "bash", str(script), arg], capture_output=True, text=True, env=full, timeout=30)


def test_resume_and_suspend_call_the_users_command(tmp_path: Path) -> None:
    files = write_files(tmp_path)
    provider = tmp_path / "provider.sh"
    provider.write_text(f'#!/bin/bash\necho "$0 $*" >> {tmp_path}/provider.log\necho "log line"\necho 10.0.0.7\n')
    provider.chmod(0o755)
    # the settings file beside the scripts is read (the export's own, filled in)
    env_file = files["gpuplan-power.env"]
    text = env_file.read_text()
    assert "GPUPLAN_RESUME_COMMAND=\n" in text
    env_file.write_text(
        text.replace("GPUPLAN_RESUME_COMMAND=", f"GPUPLAN_RESUME_COMMAND='{provider} create'")
        .replace("GPUPLAN_SUSPEND_COMMAND=", f"GPUPLAN_SUSPEND_COMMAND='{provider} delete'")
        .replace("${GPUPLAN_POWER_LOG:-/var/log/slurm/gpuplan-power.log}", str(tmp_path / "power.log"))
    )
    r = run(files["gpuplan-resume.sh"], "gpu-elastic[1-2]", tmp_path, {})
    assert r.returncode == 0, r.stderr
    calls = (tmp_path / "provider.log").read_text().splitlines()
    assert calls == [f"{provider} create gpu-elastic1", f"{provider} create gpu-elastic2"]
    updates = [c for c in (tmp_path / "scontrol.log").read_text().splitlines() if c.startswith("update")]
    assert updates == [
        "update NodeName=gpu-elastic1 NodeAddr=10.0.0.7 NodeHostname=gpu-elastic1",
        "update NodeName=gpu-elastic2 NodeAddr=10.0.0.7 NodeHostname=gpu-elastic2",
    ]
    log = (tmp_path / "power.log").read_text()
    assert "creating gpu-elastic1" in log and "gpu-elastic2 is at 10.0.0.7" in log

    r = run(files["gpuplan-suspend.sh"], "gpu-elastic1", tmp_path, {})
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "provider.log").read_text().splitlines()[-1] == f"{provider} delete gpu-elastic1"
    assert "released gpu-elastic1" in (tmp_path / "power.log").read_text()


def test_a_failing_or_missing_command_marks_the_node_down(tmp_path: Path) -> None:
    files = write_files(tmp_path)
    log = {"GPUPLAN_POWER_LOG": str(tmp_path / "power.log")}
    r = run(files["gpuplan-resume.sh"], "gpu-elastic1", tmp_path, log)  # nothing set in the env file
    assert r.returncode == 1
    assert "State=DOWN" in (tmp_path / "scontrol.log").read_text()
    assert "GPUPLAN_RESUME_COMMAND is not set" in (tmp_path / "power.log").read_text()
    (tmp_path / "scontrol.log").unlink()
    # settings from the environment when no settings file is there (the file, when present, wins)
    no_file = {**log, "GPUPLAN_POWER_CONF": str(tmp_path / "absent.env"), "GPUPLAN_RESUME_COMMAND": "false"}
    r = run(files["gpuplan-resume.sh"], "gpu-elastic1", tmp_path, no_file)
    assert r.returncode == 1
    assert 'update NodeName=gpu-elastic1 State=DOWN Reason=gpuplan: resume command failed (exit 1)' in (
        tmp_path / "scontrol.log"
    ).read_text()


def test_task_prolog_sets_ascend_devices_on_ascend_nodes_only(tmp_path: Path) -> None:
    prolog = write_files(tmp_path)["gpuplan-task-prolog.sh"]

    def prolog_out(node: str, cards: str) -> str:
        env = {"PATH": os.environ["PATH"], "SLURMD_NODENAME": node, "CUDA_VISIBLE_DEVICES": cards}
        r = subprocess.run([BASH or "bash", str(prolog)], capture_output=True, text=True, env=env, timeout=30)
        assert r.returncode == 0, r.stderr
        return r.stdout

    assert prolog_out("ascend-910b-leased1", "0,1,2,3") == "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3\n"
    assert prolog_out("ascend-910b-elastic1", "1") == "export ASCEND_RT_VISIBLE_DEVICES=1\n"
    assert prolog_out("h100-sxm-leased1", "0") == ""
