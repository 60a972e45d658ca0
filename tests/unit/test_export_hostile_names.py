"""Hostile names fed straight to the exporters (bypassing the readers' name checks, issue 27): every file
keeps its lines, the YAML parses to what was meant, and what a format cannot hold is refused."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml
from export_plans import three_gpu

from gpuplan.errors import ExportError
from gpuplan.export import kueue, skypilot, slurm, volcano
from gpuplan.export.common import ExportOptions, one_line
from gpuplan.export.model import Plan, parse_plan

EXPORTERS = {"slurm": slurm.export, "kueue": kueue.export, "volcano": volcano.export, "skypilot": skypilot.export}

HOSTILE = [
    "a\nPartitionName=evil Nodes=ALL Default=YES",
    "b\r\nevil: 1",
    "c\revil: 1",
    "d\u2028evil: 1",
    "e\u2029evil: 1",
    "f\x85evil: 1",
    "g\x1b[2Kevil: 1",
    "h: {evil: 1} # '\"&*!|>%@`",
    "i\x00evil",
]


def hostile_plan() -> Plan:
    plan = parse_plan(three_gpu(), "plan\nPartitionName=evil.json")
    renamed = [dataclasses.replace(a, workload=HOSTILE[i % len(HOSTILE)], reason="why\nevil: 1")
               for i, a in enumerate(plan.assignments)]
    extra = [dataclasses.replace(plan.assignments[1], workload=w, reason="") for w in HOSTILE[len(renamed):]]
    return dataclasses.replace(plan, scenario="s.yaml\nevil: 1", assignments=tuple(renamed + extra))


def keys(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [str(k) for k in node] + [k for v in node.values() for k in keys(v)]
    if isinstance(node, list):
        return [k for v in node for k in keys(v)]
    return []


@pytest.mark.parametrize("target", sorted(EXPORTERS))
def test_no_injected_line_and_valid_yaml(target: str) -> None:
    result = EXPORTERS[target](hostile_plan(), ExportOptions())
    texts = [f.text for f in result.files] + [result.stdout]
    assert result.files
    for text in texts:
        assert not any(c in text for c in "\x00\x1b\x85\u2028\u2029\r"), target
        if target == "slurm":  # a line is a comment, or configuration no name reached
            for line in text.splitlines():
                assert line.startswith("#") or "evil" not in line, line
            live = [ln for ln in text.splitlines() if ln.startswith("PartitionName=")]
            assert len(live) <= 1
        else:  # the YAML parses, and no name became a key (multi-line quoted scalars are fine)
            for line in text.splitlines():
                if line.startswith("#"):
                    continue
                assert not line.startswith(("evil", "- evil")), line
            docs = [d for d in yaml.safe_load_all(text) if d is not None]
            assert docs and not any("evil" in k for d in docs for k in keys(d)), target
    if target == "slurm":
        conf = next(f.text for f in result.files if f.name == "gpuplan.conf")
        assert [ln for ln in conf.splitlines() if ln.startswith("PartitionName=")] == [
            next(ln for ln in conf.splitlines() if ln.startswith("PartitionName=gpuplan "))]


def test_skypilot_names_survive_as_values() -> None:
    result = skypilot.export(hostile_plan(), ExportOptions())
    names = [yaml.safe_load(f.text)["name"] for f in result.files]
    assert all(n and "\n" not in n and len(n) <= 128 for n in names)
    assert len({f.name for f in result.files}) == len(result.files)


def test_skypilot_refuses_a_file_name_too_long() -> None:
    plan = parse_plan(three_gpu(), "plan.json")
    long_id = "w" * 300  # before: OSError 'File name too long' when written with -o DIR (exit 1)
    plan = dataclasses.replace(plan, assignments=(dataclasses.replace(plan.assignments[0], workload=long_id),))
    with pytest.raises(ExportError, match="cannot be a file name: it is 300 characters long") as info:
        skypilot.export(plan, ExportOptions())
    assert info.value.field == "assignments[0].workload"


def test_skypilot_refuses_two_workloads_in_one_file() -> None:
    plan = parse_plan(three_gpu(), "plan.json")
    a, b = plan.assignments[:2]
    plan = dataclasses.replace(plan, assignments=(dataclasses.replace(a, workload="Train A"),
                                                  dataclasses.replace(b, workload="train-a")))
    with pytest.raises(ExportError, match="would both be written to train-a.sky.yaml"):
        skypilot.export(plan, ExportOptions())


def test_the_plan_reader_refuses_them_first() -> None:
    data = three_gpu()
    data["assignments"][0]["workload"] = HOSTILE[0]
    with pytest.raises(ExportError, match="U[+]000A") as info:
        parse_plan(data, "plan.json")
    assert info.value.field == "assignments[0].workload"
    data = three_gpu()
    data["pools"][0]["gpu"] = "x" * 129
    with pytest.raises(ExportError, match="129 characters long"):
        parse_plan(data, "plan.json")


@pytest.mark.parametrize(("flag", "value"), [("name", "gp u"), ("name", "a\nb"), ("leased_context", "x#y")])
def test_options_that_would_break_a_line_are_refused(flag: str, value: str) -> None:
    with pytest.raises(ExportError, match=f"--{flag.replace('_', '-')}"):
        ExportOptions(**{flag: value}).check()


def test_one_line_escapes_like_python() -> None:
    assert one_line("a\nb\tc\u2028d\x85") == "a\\nb\\tc\\u2028d\\x85"
    assert one_line("训练 ok") == "训练 ok"
