"""Trace formats known by their header, without numpy: the columns each format needs and the
format a file's first line says (used by the readers, `sim.traces`).
"""

from __future__ import annotations

from pathlib import Path

from gpuplan.errors import TraceError

FORMATS = ("generic", "alibaba-2023", "alibaba-pai-2020", "philly", "helios", "tiresias")

HEADERS: dict[str, tuple[str, ...]] = {
    "generic": ("submit_time", "duration", "gpus"),
    "alibaba-2023": ("name", "num_gpu", "gpu_milli", "creation_time", "deletion_time", "scheduled_time"),
    "alibaba-pai-2020": ("job_name", "task_name", "inst_num", "start_time", "end_time", "plan_gpu"),
    "helios": ("job_id", "gpu_num", "submit_time", "start_time"),
    "tiresias": ("job_id", "num_gpu", "submit_time", "duration"),
}
PAI_TASK_COLUMNS = (
    "job_name",
    "task_name",
    "inst_num",
    "status",
    "start_time",
    "end_time",
    "plan_cpu",
    "plan_mem",
    "plan_gpu",
    "gpu_type",
)
PAI_JOB_COLUMNS = ("job_name", "inst_id", "user", "status", "start_time", "end_time")


def first_line(p: Path) -> str:
    with p.open("r", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.strip():
                return line.strip()
    raise TraceError(
        "the file is empty",
        file=p,
        line=1,
        hint="a trace needs a header and at least one job row (or a JSON list for Philly).",
    )


def detect_format(p: Path) -> str:
    first = first_line(p).lstrip("\ufeff")
    if first.startswith(("[", "{")):
        return "philly"
    cols = {c.strip().strip('"').lower() for c in first.split(",")}
    for fmt in ("alibaba-2023", "alibaba-pai-2020", "helios", "tiresias", "generic"):
        if set(HEADERS[fmt]) <= cols:
            return fmt
    if set(PAI_JOB_COLUMNS) <= cols:
        return "alibaba-pai-2020"
    parts = first.split(",")
    if len(parts) in (len(PAI_TASK_COLUMNS), len(PAI_JOB_COLUMNS)) and _is_number(parts[4]):
        return "alibaba-pai-2020"  # the released PAI tables have no header line
    raise TraceError(
        "cannot tell the trace format from the header",
        file=p,
        line=1,
        hint="expected a header such as `submit_time,duration,gpus` (generic), the Alibaba openb pod list, "
        "the PAI 2020 task table, Helios cluster_log.csv, a Tiresias CSV or a Philly JSON list; "
        "or name it with --trace-format.",
    )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
