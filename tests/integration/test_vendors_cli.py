"""`gpuplan vendors` end to end: table, markdown and JSON (against `gpuplan schema vendors`), Chinese,
a real probe document with --measured, and bad input (exit 2, naming the file or field)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from _probe_fakes import bare_metal_tree, vm_tree

from gpuplan.cli import main
from gpuplan.contracts.probe_document import to_json
from gpuplan.probe import probe_node

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sites-data.yaml"
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))

ONE_OFFER = """
version: 1
currency: USD
offers:
  - {id: bm, provider: acme, gpu: h100-sxm, mode: bare-metal, price: {amount: 2.2, per: gpu-hour}}
workloads:
  - {id: w, kind: training, gpu: h100-sxm, gpus: 16, hours_per_day: 24, duration: 30d}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, " ".join(out.err.split())


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["schema", "vendors"]) == 0
    data: dict[str, Any] = json.loads(buf.getvalue())
    jsonschema.Draft202012Validator.check_schema(data)
    assert data["title"] == "gpuplan.vendors/1"
    return data


def valid(schema: dict[str, Any], data: Any) -> None:
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
              for e in jsonschema.Draft202012Validator(schema).iter_errors(data)]
    assert not errors, errors[:5]


def test_table_of_the_articles_example(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    rc, out, _ = run(capsys, "vendors", str(EXAMPLE))
    assert rc == 0
    flat = " ".join(out.split())
    assert "ct-core" in out and "bm-remote" in out
    assert "111.1 h, 7.7% of its 60 d" in flat  # 50 TB over the 1 Gbps link, against the 60-day run
    assert "remote data centre: bm-remote: 2 pass, 2 warn, 0 fail, 0 unknown — warn: data-locality," in flat
    assert "core data centre: ct-core: all 4 checks pass" in flat
    assert max(len(line) for line in out.splitlines()) <= 100


def test_chinese_table_and_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "vendors", str(EXAMPLE), "--lang", "zh")
    assert rc == 0 and "供应商检查清单" in out and "警告" in out and "数据位置" in out
    rc, md, _ = run(capsys, "vendors", str(EXAMPLE), "-o", "markdown")
    assert rc == 0
    assert md.startswith("# Vendor checklist: ")
    assert "## bm-remote (remote data centre)" in md
    assert "| Data locality | **warn** | pretrain: 50,000 GB moved once over idc-core → idc-remote at 1 Gb/s" in md
    rc, md, _ = run(capsys, "vendors", str(EXAMPLE), "-o", "markdown", "--lang", "zh")
    assert rc == 0 and "| 数据位置 | **警告** |" in md


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_every_check_has_a_status_and_evidence(
    example: Path, lang: str, schema: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = run(capsys, "vendors", str(example), "-o", "json", "--lang", lang)
    assert rc == 0, err
    data = json.loads(out)
    valid(schema, data)
    assert data["schema"] == "gpuplan.vendors/1" and data["offers"]
    for o in data["offers"]:
        assert [c["id"] for c in o["checks"]] == ["network-25g", "nvlink-roce", "data-locality", "support-response"]
        for c in o["checks"]:
            assert c["status"] in ("pass", "warn", "fail", "unknown") and c["evidence"].strip()
    assert all(p["summary"].strip() for p in data["providers"])


def test_json_of_the_articles_example(schema: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "vendors", str(EXAMPLE), "-o", "json")
    data = json.loads(out)
    valid(schema, data)
    status = {(o["offer"], c["id"]): c["status"] for o in data["offers"] for c in o["checks"]}
    assert status == {
        ("ct-core", "network-25g"): "pass", ("ct-core", "nvlink-roce"): "pass",
        ("ct-core", "data-locality"): "pass", ("ct-core", "support-response"): "pass",
        ("bm-remote", "network-25g"): "pass", ("bm-remote", "nvlink-roce"): "pass",
        ("bm-remote", "data-locality"): "warn", ("bm-remote", "support-response"): "warn",
    }
    assert data["thresholds"]["min_network_gbps"] == 25 and data["measured"] is None
    # the same bytes twice
    assert run(capsys, "vendors", str(EXAMPLE), "-o", "json")[1] == out


def test_a_real_probe_document_supplies_the_measured_network(
    tmp_path: Path, schema: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text(ONE_OFFER)
    rc, out, _ = run(capsys, "vendors", str(scen), "-o", "json")
    assert json.loads(out)["offers"][0]["checks"][0]["status"] == "unknown"  # the offer does not say
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps(to_json(probe_node(bare_metal_tree(tmp_path / "root"), nvml=None))))
    rc, out, err = run(capsys, "vendors", str(scen), "-o", "json", "--measured", str(probe))
    assert rc == 0, err
    data = json.loads(out)
    valid(schema, data)
    net = data["offers"][0]["checks"][0]
    assert net["status"] == "pass" and "measured 400 Gb/s on mlx5_0/1" in net["evidence"]
    assert data["measured"] == {"offer": "bm", "gbps": 400.0, "interface": "mlx5_0/1", "file": str(probe)}


def test_bad_measured_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text(ONE_OFFER)
    two = tmp_path / "two.yaml"
    two.write_text(ONE_OFFER.replace(
        "workloads:", "  - {id: ct, gpu: h100-sxm, mode: container, price: {amount: 3, per: gpu-hour}}\nworkloads:"))
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps(to_json(probe_node(bare_metal_tree(tmp_path / "root"), nvml=None))))
    rc, _, err = run(capsys, "vendors", str(two), "--measured", str(probe))
    assert rc == 2 and "--measured-offer" in err and "bm, ct" in err
    rc, _, err = run(capsys, "vendors", str(two), "--measured", str(probe), "--measured-offer", "nope")
    assert rc == 2 and "no offer `nope`" in err
    assert run(capsys, "vendors", str(two), "--measured", str(probe), "--measured-offer", "ct")[0] == 0
    rc, _, err = run(capsys, "vendors", str(scen), "--measured-offer", "bm")
    assert rc == 2 and "--measured FILE" in err
    vm = tmp_path / "vm.json"
    vm.write_text(json.dumps(to_json(probe_node(vm_tree(tmp_path / "vmroot"), nvml=None))))
    rc, _, err = run(capsys, "vendors", str(scen), "--measured", str(vm))
    assert rc == 2 and "vm.json" in err and "no physical network link" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    rc, _, err = run(capsys, "vendors", str(scen), "--measured", str(bad))
    assert rc == 2 and "bad.json" in err and "not valid JSON" in err
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "gpuplan.plan/1"}))
    rc, _, err = run(capsys, "vendors", str(scen), "--measured", str(other))
    assert rc == 2 and "gpuplan.probe/1" in err
    rc, _, err = run(capsys, "vendors", str(scen), "--measured", str(tmp_path / "missing.json"))
    assert rc == 2 and "missing.json" in err and "Traceback" not in err


@pytest.mark.parametrize(("edit", "words"), [
    (("{from: idc-core, to: idc-remote", "{from: idc-core, to: idc-moon"), "links[0].to"),
    (("size_gb: 50000", "size_gb: -5"), "workloads[0].data.size_gb"),
    (("- {from: idc-core, to: idc-remote, gbps: 1, cost_per_gb: 0.0, latency_ms: 30}", "[]"), "no route"),
    (("site: idc-remote", "site: idc-nowhere"), "offers[1].site"),
])
def test_bad_scenarios_exit_2_naming_the_field(
    tmp_path: Path, edit: tuple[str, str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert edit[0] in text
    scen = tmp_path / "bad.yaml"
    scen.write_text(text.replace(edit[0], edit[1]))
    rc, out, err = run(capsys, "vendors", str(scen))
    assert rc == 2 and out == ""
    assert "bad.yaml" in err and words in err and "Traceback" not in err


def test_missing_scenario_and_bad_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run(capsys, "vendors", str(tmp_path / "none.yaml"))
    assert rc == 2 and "none.yaml" in err
    assert run(capsys, "vendors", str(EXAMPLE), "-o", "html")[0] == 2
