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
