"""`gpuplan quotes` against real databases: SQLite files and a real PostgreSQL server (Debian's
`postgresql` package, started by the test on a Unix socket in a temporary folder, stopped after)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuplan import api
from gpuplan.cli import main

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT / "examples" / "seed-910b-quotes.csv"


def _count(db: str) -> int:
    return len(api.quotes_list(db=db))


# ------------------------------------------------------------------------------------------- servers


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    hits = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return hits[-1] if hits else None


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL server programs (initdb, pg_ctl) not installed: apt-get install postgresql")
    prefix: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root: run it as `nobody`
        runuser = shutil.which("runuser")
        if not runuser:
            pytest.skip("running as root without runuser: cannot start PostgreSQL as another user")
        prefix = [runuser, "-u", "nobody", "--"]
    base = tempfile.mkdtemp(prefix="gpuplan-pg-", dir="/tmp")
    os.chmod(base, 0o777)
    if prefix:
        shutil.chown(base, "nobody")
    data = os.path.join(base, "data")
    try:
        subprocess.run([*prefix, initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"], check=True,
                       capture_output=True, cwd=base, timeout=120)
        subprocess.run([*prefix, pg_ctl, "-D", data, "-o", f"-k {base} -c listen_addresses=''", "-l",
                        os.path.join(base, "log"), "-w", "start"], check=True, capture_output=True, cwd=base,
                       timeout=120)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip(f"could not start PostgreSQL: {exc}")
    try:
        yield f"postgresql://postgres@/postgres?host={base}"
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", data, "-m", "fast", "-w", "stop"], capture_output=True, cwd=base,
                       timeout=120)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def sqlite_db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'q' / 'quotes.sqlite'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'quotes.sqlite'}"
        return
    url: str = request.getfixturevalue("postgres")
    # a fresh schema state per test: drop what an earlier test stored
    from sqlalchemy import create_engine, text

    eng = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    with eng.begin() as conn:
        conn.execute(text("DROP TABLE IF EXISTS quotes"))
        conn.execute(text("DROP TABLE IF EXISTS alembic_version"))
    eng.dispose()
    from gpuplan.quotes import store

    store._ENGINES.clear()
    yield url
    store._ENGINES.clear()


# --------------------------------------------------------------------------------------------- tests


def test_import_list_and_trend(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["quotes", "import", str(CSV), "--db", db]) == 0
    assert "imported 24 quotes" in capsys.readouterr().out
    qs = api.quotes_list(db=db)
    assert len(qs) == 24
    assert [q.quoted_on for q in qs] == sorted(q.quoted_on for q in qs)
    fits = {(f["gpu"], f["mode"]): f for f in api.quotes_trend(db=db)}
    from_csv = {(f["gpu"], f["mode"]): f for f in api.quotes_trend(quotes=CSV)}
    assert fits == from_csv
    ct = fits[("ascend-910b", "container")]
    # the file's containers fall about 20% a year, bare metal about 10%
    assert -0.25 < ct["drift_per_year"] < -0.15 and ct["drift_low"] < ct["drift_per_year"] < ct["drift_high"]
    assert -0.15 < fits[("ascend-910b", "bare-metal")]["drift_per_year"] < -0.05
    assert main(["quotes", "list", "--db", db, "--gpu", "ascend-910b", "--mode", "container", "-o", "json"]) == 0
    import json

    listed = json.loads(capsys.readouterr().out)
    assert len(listed) == 12 and {q["mode"] for q in listed} == {"container"}


def test_add_one_quote_and_a_bad_one_stores_nothing(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["quotes", "add", "--provider", "idc-b", "--gpu", "ascend-910b", "--mode", "bare-metal", "--price", "185",
            "--per", "gpu-day", "--currency", "CNY", "--date", "2026-11-20", "--term", "12mo", "--db", db]
    assert main(args) == 0
    q = api.quotes_list(db=db)
    assert len(q) == 1 and q[0].term_months == 12 and q[0].price_per_gpu_hour == pytest.approx(185 / 24)
    bad = [a if a != "2026-11-20" else "2026-13-01" for a in args]
    assert main(bad) == 2
    assert "--date" in capsys.readouterr().err
    assert _count(db) == 1


def test_a_bad_csv_row_stores_nothing(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = CSV.read_text(encoding="utf-8").splitlines()
    text.insert(10, "cloud-a,ascend-910b,container,,-3,gpu-hour,CNY,2025-06-01,negative")
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(text) + "\n", encoding="utf-8")
    assert main(["quotes", "import", str(bad), "--db", db]) == 2
    err = capsys.readouterr().err
    assert "bad.csv:11" in err and "price" in err
    assert _count(db) == 0


WRITER = textwrap.dedent("""
    import sys
    from gpuplan import api
    from gpuplan.quotes.csvio import make_quote
    db, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for i in range(n):
        q = make_quote(provider=who, gpu="ascend-910b", mode="container", term=None, price=10 + i / 100,
                       per="gpu-hour", currency="CNY", when="2026-01-%02d" % (1 + i % 28), note=str(i))
        api.quotes_add([q], db=db)
""")


def test_concurrent_writers_lose_no_quote(db: str) -> None:
    api.quotes_list(db=db)  # the schema exists before the writers start (they would also serialise it)
    writers, each = 6, 25
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, db, f"w{k}", str(each)], env=env,
                              stderr=subprocess.PIPE) for k in range(writers)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    qs = api.quotes_list(db=db)
    assert len(qs) == writers * each
    assert len({q.id for q in qs}) == writers * each
    for k in range(writers):
        assert sorted(int(q.note) for q in qs if q.provider == f"w{k}") == list(range(each))


def test_the_first_open_creates_the_schema_with_alembic(sqlite_db: str) -> None:
    from sqlalchemy import create_engine, inspect, text

    assert _count(sqlite_db) == 0
    eng = create_engine(sqlite_db)
    assert {"quotes", "alembic_version"} <= set(inspect(eng).get_table_names())
    with eng.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0002"


def test_an_unreachable_database_is_exit_2_without_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["quotes", "list", "--db", "postgresql://gpuplan:secret@127.0.0.1:1/none"])
    err = capsys.readouterr().err
    assert code == 2
    assert "cannot use the quotes database" in err and "secret" not in err and "Traceback" not in err
    assert main(["quotes", "list", "--db", "mysql+nodriver://x/y"]) == 2


def test_gpuplan_db_environment_variable_and_the_default_data_folder(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuplan.quotes import store

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("GPUPLAN_DB", raising=False)
    assert store.resolve_url(None).endswith(str(tmp_path / "xdg" / "gpuplan" / "quotes.sqlite"))
    url = f"sqlite:///{tmp_path / 'env.sqlite'}"
    monkeypatch.setenv("GPUPLAN_DB", url)
    assert store.resolve_url(None) == url
    assert main(["quotes", "import", str(CSV)]) == 0
    assert (tmp_path / "env.sqlite").exists()


def test_commit_takes_its_drifts_from_the_quote_history(db: str) -> None:
    assert main(["quotes", "import", str(CSV), "--db", db]) == 0
    from_db = api.commit(ROOT / "examples" / "seed-910b.yaml", paths=500, db=db).to_json()
    from_csv = api.commit(ROOT / "examples" / "seed-910b.yaml", paths=500, quotes=CSV).to_json()
    flat = api.commit(ROOT / "examples" / "seed-910b.yaml", paths=500).to_json()
    assert from_db == from_csv
    assert from_db["against"]["all_container"]["expected"] < flat["against"]["all_container"]["expected"]
    assert any("quote history" in r for r in from_db["reasons"])


PULLED = """# as `gpuplan catalog pull` writes it
version: 1
offers:
- id: aws-p5-48xlarge
  provider: aws
  gpu: h100-sxm
  mode: vm
  tenancy: dedicated
  currency: USD
  price: {amount: [6.0, 8.0], per: gpu-hour}
  gpus_per_node: 8
  source: gpuhunt:aws p5.48xlarge (VM, 8 GPU, on-demand) in 2 locations
  as_of: '2026-11-30T21:00:00Z'
- id: runpod-h100
  provider: runpod
  gpu: h100-sxm
  mode: container
  currency: USD
  price: {amount: 2.5, per: gpu-hour}
  as_of: 2026-11
- {use: aws-p5-h100}
"""


def test_a_catalog_file_from_catalog_pull_imports_as_quotes(sqlite_db: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "pulled.yaml"
    f.write_text(PULLED, encoding="utf-8")
    assert main(["quotes", "import", str(f), "--db", sqlite_db]) == 0
    qs = {q.provider: q for q in api.quotes_list(db=sqlite_db)}
    assert set(qs) == {"aws", "runpod"}
    assert qs["aws"].mode == "vm" and qs["aws"].price == 7.0  # a VM stays a VM quote
    assert str(qs["aws"].quoted_on) == "2026-11-30" and str(qs["runpod"].quoted_on) == "2026-11-01"
    f.write_text(PULLED.replace("as_of: 2026-11", "as_of: soon"), encoding="utf-8")
    assert main(["quotes", "import", str(f), "--db", sqlite_db]) == 2
    assert "offers[1].date" in capsys.readouterr().err
    assert _count(sqlite_db) == 2
    bundled = ROOT / "src" / "gpuplan" / "inputs" / "catalog" / "data" / "offers.yaml"
    assert len(api.quotes_read_csv(bundled)) > 10


# ------------------------------------------------------------------ names, modes, ranges, term ladders


def test_gpu_names_resolve_vm_is_a_mode_and_a_range_is_kept(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["quotes", "add", "--provider", "p", "--per", "gpu-day", "--currency", "CNY", "--db", db]
    assert main([*base, "--gpu", "910B", "--mode", "bare-metal", "--price", "180-260", "--date", "2026-01-05"]) == 0
    assert main([*base, "--gpu", "H100 SXM", "--mode", "vm", "--price", "300", "--date", "2026-01-06"]) == 0
    assert main([*base, "--gpu", "no-such-gpu", "--mode", "vm", "--price", "300", "--date", "2026-01-06"]) == 2
    assert "--gpu" in capsys.readouterr().err
    assert main([*base, "--gpu", "910B", "--mode", "vm", "--price", "260-180", "--date", "2026-01-06"]) == 2
    assert "180-260" in capsys.readouterr().err  # the hint shows a range the right way round
    bm, vm = api.quotes_list(db=db)
    assert bm.gpu == "ascend-910b" and (bm.price_low, bm.price, bm.price_high) == (180.0, 220.0, 260.0)
    assert abs(bm.price_per_gpu_hour - 220.0 / 24) < 1e-9
    assert vm.gpu == "h100-sxm" and vm.mode == "vm" and vm.price_low is None
    assert [q.mode for q in api.quotes_list(db=db, gpu="910B")] == ["bare-metal"]  # filters resolve too


def test_one_quote_per_term_on_three_days_gives_a_bare_metal_trend(db: str) -> None:
    """Three quotes at 1, 6 and 12 months on three days. Built by hand on the default term curve
    price = 200 x term^-0.138 x 0.8^years, so the term-normalised drift is exactly -20% a year."""
    days = ("2026-01-01", "2026-07-02", "2027-01-01")  # 0, 182 and 365 days: years = days / 365.25
    years = (0.0, 182 / 365.25, 365 / 365.25)
    base = ["quotes", "add", "--provider", "p", "--gpu", "ascend-910b", "--mode", "bare-metal", "--per", "gpu-day",
            "--currency", "CNY", "--db", db]
    for day, y, term in zip(days, years, (1, 6, 12), strict=True):
        price = 200 * term ** -0.138 * 0.8 ** y
        assert main([*base, "--price", f"{price:.10f}", "--date", day, "--term", f"{term}mo"]) == 0
    (fit,) = api.quotes_trend(db=db)
    assert (fit["gpu"], fit["mode"], fit["quotes"]) == ("ascend-910b", "bare-metal", 3)
    assert abs(fit["drift_per_year"] - (-0.2)) < 1e-3
    assert fit["drift_low"] <= fit["drift_per_year"] <= fit["drift_high"]


def _columns(text: str) -> list[str]:
    """A rich table's body as one string per column: its cells' wrapped lines joined, spaces removed."""
    cols: list[str] = []
    body = False
    for line in text.splitlines():
        if line.startswith("┡"):
            body = True
        elif body and line.startswith("│"):
            parts = [c.replace(" ", "") for c in line.strip("│").split("│")]
            cols = [a + b for a, b in zip(cols, parts, strict=True)] if cols else parts
    return cols


@pytest.mark.parametrize("columns", ["80", None])
def test_quotes_list_shows_every_value_whole(sqlite_db: str, columns: str | None) -> None:
    long_note = "renewal offered if signed before the end of the quarter"
    for i in range(3):
        assert main(["quotes", "add", "--provider", f"a-rather-long-provider-name-{i}", "--gpu", "ascend-910b",
                     "--mode", "bare-metal", "--price", "12000-17040", "--per", "node-month", "--currency", "CNY",
                     "--date", f"2026-05-0{i + 1}", "--term", "12mo", "--note", long_note, "--db", sqlite_db]) == 0
    env = {**os.environ, "GPUPLAN_DB": sqlite_db}
    env.pop("COLUMNS", None)
    if columns:
        env["COLUMNS"] = columns
    out = subprocess.run([sys.executable, "-m", "gpuplan", "quotes", "list"], capture_output=True, text=True,
                         env=env, check=True).stdout  # a pipe
    assert "…" not in out
    if columns:
        assert max(len(line) for line in out.splitlines()) <= int(columns)
    whole = _columns(out)
    # per GPU-hour: the midpoint 14,520 a node-month / 8 GPUs / 720 h = 2.5208
    values = ["ascend-910b", "bare-metal", "12mo", "12,000.00-17,040.00CNY", "node-month", "2.5208",
              long_note.replace(" ", "")]
    values += [f"2026-05-0{i + 1}" for i in range(3)] + [f"a-rather-long-provider-name-{i}" for i in range(3)]
    for v in values:
        assert any(v in col for col in whole), (v, whole)


# ------------------------------------------------------------------------------ the schema, by command


def test_quotes_db_commands_move_the_schema(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["quotes", "db", "current", "--db", db]) == 0
    assert capsys.readouterr().out.startswith("none")
    assert main(["quotes", "db", "upgrade", "--db", db]) == 0
    assert main(["quotes", "db", "current", "--db", db]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "0002"
    assert main(["quotes", "db", "downgrade", "0001", "--db", db]) == 0
    assert api.quotes_db_current(db=db) == "0001"
    assert main(["quotes", "db", "downgrade", "nope", "--db", db]) == 2
    assert "quotes db history" in capsys.readouterr().err
    assert main(["quotes", "db", "history"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == ["0002", "0001"]
    api.quotes_add([], db=db)  # opening the store upgrades it again
    assert len(api.quotes_list(db=db)) == 0 and api.quotes_db_current(db=db) == "0002"


def test_alembics_own_cli_works_from_the_packaged_config(sqlite_db: str) -> None:
    import gpuplan.quotes

    ini = Path(gpuplan.quotes.__file__).parent / "alembic.ini"
    api.quotes_list(db=sqlite_db)  # creates the schema
    env = {**os.environ, "GPUPLAN_DB": sqlite_db}
    out = subprocess.run([sys.executable, "-m", "alembic", "-c", str(ini), "current"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "0002" in out.stdout
    out = subprocess.run([sys.executable, "-m", "alembic", "-c", str(ini), "-x", f"url={sqlite_db}", "history"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0 and "0001 -> 0002" in out.stdout


def test_autogenerate_against_the_migrated_schema_proposes_nothing(db: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy import create_engine

    from gpuplan.quotes.store import QUOTES, resolve_url

    api.quotes_list(db=db)  # migrated to head
    engine = create_engine(resolve_url(db))
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), QUOTES.metadata)
    engine.dispose()
    assert diff == []


def test_a_locked_postgresql_table_waits_the_timeout_then_exits_2(postgres: str, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27: PostgreSQL's lock_timeout is GPUPLAN_DB_TIMEOUT; a writer holding the table does not hang an add."""
    import time

    from sqlalchemy import create_engine, text

    from gpuplan.quotes import store

    store._ENGINES.clear()
    api.quotes_list(db=postgres)  # the schema exists
    store._ENGINES.clear()
    monkeypatch.setenv(store.TIMEOUT_ENV, "1")
    holder = create_engine(postgres.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with holder.connect() as conn:
            tx = conn.begin()
            conn.execute(text("LOCK TABLE quotes IN ACCESS EXCLUSIVE MODE"))
            t0 = time.perf_counter()
            code = main(["quotes", "add", "--provider", "p", "--gpu", "ascend-910b", "--mode", "container",
                         "--price", "10", "--per", "gpu-hour", "--currency", "CNY", "--date", "2026-01-02",
                         "--db", postgres])
            secs = time.perf_counter() - t0
            tx.rollback()
    finally:
        holder.dispose()
        store._ENGINES.clear()
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2 and "Traceback" not in err and secs < 10, (secs, err)
    assert "locked" in err and store.TIMEOUT_ENV in err, err
    assert all(q.provider != "p" for q in api.quotes_list(db=postgres))


def test_the_open_stores_are_closed_at_exit(db: str) -> None:
    """`gpuplan` exits without collecting objects in reference cycles (cli.entry), so the store closes
    its pooled connections itself at exit: a fresh process opens the store through the command, and
    an exit handler that runs after the store's finds the pool empty."""
    script = textwrap.dedent(f"""
        import atexit, sys
        pools = []
        atexit.register(lambda: print("checked in at exit:", [p.checkedin() for p in pools]))
        from gpuplan.quotes import store
        engine = store.open_store({db!r})
        with engine.connect():
            pass
        pools.append(engine.pool)
        print("checked in before:", engine.pool.checkedin())
        sys.argv = ["gpuplan", "quotes", "list", "--db", {db!r}]
        from gpuplan.cli import entry
        entry()
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "checked in before: 1" in done.stdout and done.stdout.rstrip().endswith("checked in at exit: [0]")
