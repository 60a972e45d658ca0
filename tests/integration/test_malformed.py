"""A corpus of malformed scenarios: each exits 2 with a message naming the file and the field."""

from pathlib import Path

import pytest

from gpuplan.cli import main

CORPUS = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "malformed").glob("*.yaml"))


def test_corpus_is_big_enough() -> None:
    assert len(CORPUS) >= 20


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_malformed_scenario(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expect = path.read_text().splitlines()[0].removeprefix("# expect:").strip()
    rc = main(["compare", str(path)])
    err = capsys.readouterr().err
    flat = " ".join(err.split())
    assert rc == 2, err
    assert path.name in flat
    if expect != "-":
        assert f": {expect}:" in flat, flat
    assert "Hint:" in flat
    assert "Traceback" not in err


def test_line_numbers_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    path = next(p for p in CORPUS if p.stem.startswith("03-"))
    main(["compare", str(path)])
    flat = " ".join(capsys.readouterr().err.split())
    assert f"{path.name}:8:" in flat  # the line of hours_per_day


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["compare", str(tmp_path / "nope.yaml")]) == 2
    assert "nope.yaml" in capsys.readouterr().err


def test_alias_bomb_is_refused_quickly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\nversion: 1\n")
    assert main(["compare", str(bomb)]) == 2  # 10^9 values: refused before anything expands them
    assert "aliases expand to" in capsys.readouterr().err


def test_plain_aliases_still_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text("""version: 1
currency: CNY
offers:
  - {id: a, gpu: l40s, mode: container, price: &p {amount: 5, per: gpu-hour}}
  - {id: b, gpu: l40s, mode: bare-metal, price: *p}
workloads:
  - {id: w, kind: training, gpu: l40s, gpus: 2, hours_per_day: 8, duration: 30d, gpux: 1}
""")
    assert main(["compare", str(scen)]) == 2
    assert "s.yaml:7: workloads[0].gpux" in " ".join(capsys.readouterr().err.split())
