"""Chinese output (compare, plan, simulate, audit; table and markdown) holds no untranslated English
words: only ids (offers, workloads, GPUs, nodes, files, warning codes, from the command's own JSON),
units, product and standard names, flags and field names the user types."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from web_inputs import SEED, write_nvsmi, write_trace

from gpuplan.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))

# units, currencies, product and standard names, the Kueue queueing policies (names in Kueue's docs)
ALLOWED = {
    "CNY", "USD", "EUR", "GPU", "GPUs", "GB", "GiB", "TB", "MB", "MiB", "GPU-hours", "h", "d", "m", "s", "x",
    "R", "P95", "p95", "p50", "mean", "max", "NVLink", "HCCS", "RDMA", "InfiniBand", "RoCE", "PCIe", "TCP",
    "NCCL", "HCCL", "Kueue", "Volcano", "Slurm", "SkyPilot", "best-effort-fifo", "strict-fifo", "gpuplan",
    "generic", "alibaba-2023", "alibaba-pai-2020", "philly", "helios", "tiresias",  # --trace-format ids
    "HBM", "BF16", "Gbps", "Gb/s", "GB/s", "TB/s", "FP16", "TFLOPS", "MIG", "NVIDIA", "Ascend", "CSV", "JSON",
}
FIELD = re.compile(r"^([a-z0-9_]+\.)*[a-z0-9]+(_[a-z0-9]+)+$")  # a field the user types: team.engineer_hour_cost


def capture(*args: str) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(list(args))
    assert rc == 0, args
    return buf.getvalue()


def strings(doc: Any) -> set[str]:
    """Every string in a JSON document, and the words of each: the ids the output may show."""
    out: set[str] = set()
    if isinstance(doc, dict):
        for k, v in doc.items():
            out |= strings(v)
            out.add(str(k))
    elif isinstance(doc, list):
        for v in doc:
            out |= strings(v)
    elif isinstance(doc, str) and not re.search(r"[\u4e00-\u9fff]", doc) and " " not in doc:
        out.add(doc)
    return out


def untranslated(text: str, ids: set[str]) -> list[str]:
    bad = []
    for token in re.findall(r"[A-Za-z0-9_.\-/:+~]*[A-Za-z][A-Za-z0-9_.\-/:+~]*", text):
        if token.startswith("--"):
            continue  # a flag the user types
        word = token.strip(".:-/")
        if not word or not re.search(r"[A-Za-z]{2,}", word):
            continue  # 30d, 2h, x16, v1: numbers with a unit letter
        if word in ALLOWED or word in ids or word.startswith("--") or FIELD.match(word):
            continue
        if "/" in word or word.endswith((".yaml", ".csv", ".json")):
            parts = [p for p in re.split(r"[/]", word) if p]
            if all(p in ALLOWED or p in ids or p.endswith((".yaml", ".csv", ".json")) or
                   not re.search(r"[A-Za-z]{2,}", p) or "." in p for p in parts):
                continue
            if word.count("/") > 1:  # a file path
                continue
        if any(word in i for i in ids if len(word) >= 3):  # a piece of an id cut at a hyphen by wrapping
            continue
        bad.append(word)
    return sorted(set(bad))


def cases(tmp: Path) -> list[tuple[str, list[str]]]:
    trace = write_trace(tmp / "jobs.csv")
    log = write_nvsmi(tmp / "node1.csv")
    out: list[tuple[str, list[str]]] = []
    for ex in EXAMPLES:
        out.append(("compare", [str(ex)]))
        out.append(("plan", [str(ex)]))
    out.append(("simulate", [str(trace), "-r", "0:16:4", "-w", "1h", "-s", str(SEED), "--max-wait", "p95=30m"]))
    out.append(("simulate", [str(trace), "-r", "8:16:8", "--packing", "node", "-w", "inf", "--max-wait", "p95=1h"]))
    out.append(("audit", [str(log), "--price", "8/gpu-hour", "--currency", "CNY"]))
    return out


def test_chinese_output_has_no_untranslated_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    found: dict[str, list[str]] = {}
    for cmd, args in cases(tmp_path):
        try:
            doc = json.loads(capture(cmd, *args, "-o", "json"))
        except AssertionError:
            continue  # an example this command does not take (e.g. plan of a scenario with several GPUs)
        ids = strings(doc) | {Path(a).name for a in args} | {Path(a).stem for a in args}
        if args[0].endswith(".yaml"):  # the scenario's own offer and workload ids, which prose may name
            raw = yaml.safe_load(Path(args[0]).read_text(encoding="utf-8"))
            ids |= {str(x["id"]) for key in ("offers", "workloads") for x in raw.get(key) or [] if "id" in x}
        for fmt in ("table", "markdown"):
            bad = untranslated(capture(cmd, *args, "--lang", "zh", "-o", fmt), ids)
            if bad:
                found[f"{cmd} {Path(args[0]).name} -o {fmt}"] = bad
    assert not found, found


def test_the_check_can_fail() -> None:
    assert untranslated("规划期 30 天，来源：schedules；CNY/gpu-hour", {"bm-910b"}) == ["CNY/gpu-hour", "schedules"]
    assert untranslated("租用 bm-910b：30d × 8.00 CNY/卡时", {"bm-910b"}) == []
