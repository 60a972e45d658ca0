"""The quote store's edge (issue 27): bounded waits on a locked store, one-line errors, unknown schemes and
unwritable paths exit 2, and quote fields are names."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from gpuplan.cli import main
from gpuplan.quotes import store

ADD = ["quotes", "add", "--provider", "acme", "--gpu", "ascend-910b", "--mode", "container", "--price", "10",
       "--per", "gpu-hour", "--currency", "CNY", "--date", "2026-01-02"]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, float]:
    t0 = time.perf_counter()
    rc = main(list(args))
    secs = time.perf_counter() - t0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return rc, " ".join(err.split()), secs


@pytest.fixture(autouse=True)
def fresh_engines() -> None:
    store._ENGINES.clear()


def _locked_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, sqlite3.Connection]:
    path = tmp_path / "quotes.sqlite"
    url = f"sqlite:///{path}"
    assert main([*ADD, "--db", url]) == 0  # the schema exists
    capsys.readouterr()
    store._ENGINES.clear()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another writer holds the store
    return url, holder


def test_a_locked_store_waits_the_timeout_then_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # before: 488 s (a 60 s lock timeout times 8 migrate attempts)
    monkeypatch.setenv(store.TIMEOUT_ENV, "1")
    url, holder = _locked_store(tmp_path, capsys)
    try:
        rc, err, secs = run(capsys, *ADD, "--db", url)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert rc == 2 and "locked by another writer" in err and store.TIMEOUT_ENV in err, err
    assert 0.9 < secs < 6
    store._ENGINES.clear()
    assert main(["quotes", "list", "--db", url]) == 0
    assert capsys.readouterr().out.count("acme") == 1  # the timed-out add stored nothing


def test_the_default_wait_is_a_few_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(store.TIMEOUT_ENV, raising=False)
    assert 1 <= store.wait_seconds() <= 10
    assert store.wait_seconds({store.TIMEOUT_ENV: "30"}) == 30


@pytest.mark.parametrize("value", ["0", "-1", "abc", "nan", "inf", "1e9"])
def test_a_bad_timeout_is_exit_2(value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(store.TIMEOUT_ENV, value)
    rc, err, _ = run(capsys, *ADD, "--db", f"sqlite:///{tmp_path / 'q.sqlite'}")
    assert rc == 2 and store.TIMEOUT_ENV in err, err


@pytest.mark.parametrize("url", ["mysql://user:pw@localhost/db", "mssql+pyodbc://x/y", "oracle://a:b@c/d"])
def test_unknown_schemes_exit_2_with_a_hint(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    # before: mysql:// was ModuleNotFoundError, exit 1
    rc, err, _ = run(capsys, "quotes", "list", "--db", url)
    assert rc == 2 and "SQLite or PostgreSQL" in err and "Hint: sqlite:///" in err, err
    assert "pw@" not in err and ":b@" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_sqlite_folder_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        rc, err, _ = run(capsys, *ADD, "--db", f"sqlite:///{ro / 'sub' / 'q.sqlite'}")
    finally:
        ro.chmod(stat.S_IRWXU)
    assert rc == 2 and "cannot create the folder" in err, err


def test_a_sqlite_path_that_is_a_folder_or_under_a_file_exits_2(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    rc, err, _ = run(capsys, *ADD, "--db", f"sqlite:///{tmp_path / 'file' / 'q.sqlite'}")
    assert rc == 2 and "cannot create the folder" in err, err
    (tmp_path / "dir.sqlite").mkdir()
    rc, err, secs = run(capsys, *ADD, "--db", f"sqlite:///{tmp_path / 'dir.sqlite'}")
    assert rc == 2 and "cannot use the quotes database" in err and secs < 5, err


def test_database_errors_are_one_line_without_sql() -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import SQLAlchemyError

    eng = create_engine("sqlite://")
    with pytest.raises(SQLAlchemyError) as info, eng.connect() as conn:
        conn.execute(text("INSERT INTO nowhere (secret) VALUES (:p)"), [{"p": "hunter2"}] * 10)
    assert "INSERT" in str(info.value)  # SQLAlchemy's own text carries the statement and parameters
    line = store.cause(info.value)
    assert line == "no such table: nowhere"
    assert "\n" not in line and "INSERT" not in line and "hunter2" not in line


@pytest.mark.parametrize(("flag", "value", "words"), [
    ("--provider", "acme\nPartitionName=evil", "U+000A"),
    ("--provider", "p" * 129, "129 characters long"),
    ("--gpu", "ascend\x1b[31m", "U+001B"),
    ("--note", "one\ntwo", "control character U+000A"),
    ("--note", "n" * 1001, "1,001 characters long"),
])
def test_quote_fields_are_names(flag: str, value: str, words: str, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    args = list(ADD)
    if flag in args:
        args[args.index(flag) + 1] = value
    else:
        args += [flag, value]
    url = f"sqlite:///{tmp_path / 'q.sqlite'}"
    rc, err, _ = run(capsys, *args, "--db", url)
    assert rc == 2 and flag.removeprefix("--") in err and words in err, err
    assert main(["quotes", "list", "--db", url]) == 0
    assert "acme" not in capsys.readouterr().out


def test_a_quotes_csv_with_a_bad_name_names_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "q.csv"
    p.write_text("provider,gpu,mode,price,per,currency,date\n"
                 "acme,ascend-910b,container,10,gpu-hour,CNY,2026-01-02\n"
                 '"ac\x07me",ascend-910b,container,10,gpu-hour,CNY,2026-01-02\n', encoding="utf-8")
    rc, err, _ = run(capsys, "quotes", "import", str(p), "--db", f"sqlite:///{tmp_path / 'q.sqlite'}")
    assert rc == 2 and "q.csv:3" in err and "provider" in err and "U+0007" in err, err
