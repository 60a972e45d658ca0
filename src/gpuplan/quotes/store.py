"""Where quotes live: SQLite (default: `quotes.sqlite` in the user's data folder) or PostgreSQL.

The database is `--db URL`, else the `GPUPLAN_DB` environment variable, else the SQLite file. URLs are
SQLAlchemy's: `sqlite:///path/quotes.sqlite`, `postgresql://user@host/db` (psycopg 3 is used),
`postgresql://user@/db?host=/run/postgresql` for a Unix socket. The schema is created and upgraded by
Alembic (`gpuplan/quotes/migrations`) when a store is opened; concurrent openers are serialised (an
advisory lock on PostgreSQL, a retry on SQLite). Adding quotes is one transaction: all or none.

Waits are bounded (issue 27): a store locked by another writer is waited on for `GPUPLAN_DB_TIMEOUT`
seconds (default 5; SQLite's busy timeout, PostgreSQL's `lock_timeout`), then the command exits 2
saying so. Every database error is one line: the driver's first line of cause, never the SQL
statement, its parameters or the URL's password.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpuplan.errors import GpuplanError
from gpuplan.quotes import Quote

ENV = "GPUPLAN_DB"
TIMEOUT_ENV = "GPUPLAN_DB_TIMEOUT"
DEFAULT_TIMEOUT_S = 5.0
MAX_TIMEOUT_S = 3600.0
BACKENDS = ("sqlite", "postgresql")
_LOCK_KEY = 0x67707570  # "gpup": the advisory lock migrations take on PostgreSQL


def default_url() -> str:
    from platformdirs import user_data_dir

    return f"sqlite:///{Path(user_data_dir('gpuplan', appauthor=False)) / 'quotes.sqlite'}"


def resolve_url(db: str | None) -> str:
    url = db or os.environ.get(ENV) or default_url()
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def wait_seconds(environ: Any = None) -> float:
    """How long to wait on a locked store: `GPUPLAN_DB_TIMEOUT` seconds (0 < t <= 3600), default 5."""
    text = (os.environ if environ is None else environ).get(TIMEOUT_ENV)
    if text is None or not text.strip():
        return DEFAULT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_TIMEOUT_S:  # also NaN
        raise GpuplanError(f"{TIMEOUT_ENV}: expected seconds in (0, {MAX_TIMEOUT_S:g}], got {text!r}",
                           field=TIMEOUT_ENV, hint=f"e.g. {TIMEOUT_ENV}=30 to wait half a minute on a busy store.")
    return value


def cause(exc: BaseException) -> str:
    """One line saying why a database call failed: the driver's own first line (SQLAlchemy's text adds
    the SQL statement and every parameter set), at most 300 characters."""
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip()
    first = text.splitlines()[0].strip() if text else type(orig).__name__
    return first if len(first) <= 300 else first[:297] + "..."


def _locked(exc: BaseException) -> bool:
    text = cause(exc).lower()
    return "locked" in text or "lock timeout" in text or "canceling statement due to lock" in text


def _timed_out(u: Any, waited: float, what: str) -> GpuplanError:
    return GpuplanError(f"{what}: the quotes database {_safe(u)} stayed locked by another writer for "
                        f"{waited:.1f} s", field="--db",
                        hint=f"nothing was written; try again, or wait longer with {TIMEOUT_ENV}=SECONDS "
                             f"(now {wait_seconds():g}).")


def _safe(url: Any) -> str:
    try:
        return str(url.render_as_string(hide_password=True))
    except AttributeError:
        return str(url)


def _table() -> Any:
    from sqlalchemy import Column, Date, DateTime, Float, Index, Integer, MetaData, String, Table, Text

    md = MetaData()
    # The same schema as the migrations build (a test runs autogenerate against it: nothing to propose).
    return Table(
        "quotes", md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("provider", String(200), nullable=False),
        Column("gpu", String(100), nullable=False),
        Column("mode", String(20), nullable=False),
        Column("term_months", Integer, nullable=True),
        Column("price", Float, nullable=False),
        Column("per", String(20), nullable=False),
        Column("price_per_gpu_hour", Float, nullable=False),
        Column("currency", String(3), nullable=False),
        Column("quoted_on", Date, nullable=False),
        Column("note", Text, nullable=False, default=""),
        Column("gpus_per_node", Integer, nullable=False, default=8),
        Column("added_at", DateTime(timezone=True), nullable=False),
        Column("price_low", Float, nullable=True),
        Column("price_high", Float, nullable=True),
        Index("ix_quotes_gpu_mode_date", "gpu", "mode", "quoted_on"),
    )


QUOTES = _table()
_ENGINES: dict[str, Any] = {}
_OPEN = threading.Lock()  # two threads opening the same store at once must not both migrate it


def _dispose_engines() -> None:
    """Close the open stores' pooled connections at exit, so that a PostgreSQL server sees the client
    leave rather than a dropped socket: the `gpuplan` command exits without collecting the objects in
    reference cycles (`cli.entry`), which a connection pool is."""
    for engine in list(_ENGINES.values()):
        with contextlib.suppress(Exception):  # a server already gone: nothing to say goodbye to
            engine.dispose()
    _ENGINES.clear()


atexit.register(_dispose_engines)


def alembic_config(url: str | None = None) -> Any:
    """Alembic's configuration for the quotes schema: the packaged `alembic.ini` (so `alembic -c
    <that file> current` works from a shell too) with the store's URL."""
    from alembic.config import Config

    cfg = Config(str(Path(__file__).parent / "alembic.ini"))
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    if url is not None:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def _migrate(engine: Any) -> None:
    from alembic import command
    from sqlalchemy import text

    cfg = alembic_config()
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


def open_store(db: str | None = None) -> Any:
    """An SQLAlchemy engine on the quotes database, its schema at the latest revision (thread-safe)."""
    with _OPEN:
        return _open_store(db)


def _open_store(db: str | None) -> Any:
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

    url = resolve_url(db)
    if url in _ENGINES:
        return _ENGINES[url]
    hint_urls = "sqlite:///path/quotes.sqlite or postgresql://user@host/dbname"
    try:
        u = make_url(url)
    except ArgumentError:
        raise GpuplanError(f"not a database URL: {url.split('://')[0]!r}...", field="--db", hint=hint_urls) from None
    backend = u.get_backend_name()
    if backend not in BACKENDS:  # mysql:// was a ModuleNotFoundError (exit 1)
        raise GpuplanError(f"the quotes store runs on SQLite or PostgreSQL, not {backend!r} ({_safe(u)})",
                           field="--db", hint=hint_urls)
    timeout = wait_seconds()
    kwargs: dict[str, Any] = {}
    if backend == "sqlite":
        if u.database and u.database != ":memory:":
            folder = Path(u.database).expanduser().parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise GpuplanError(f"cannot create the folder of the quotes database {folder}: {exc.strerror}",
                                   field="--db", hint=f"choose a folder you can write (--db sqlite:///PATH or "
                                   f"{ENV}).") from None
        kwargs["connect_args"] = {"timeout": timeout}
    else:
        kwargs["connect_args"] = {"connect_timeout": 10,
                                  "options": f"-c lock_timeout={max(1, round(timeout * 1000))}"}
    try:
        engine = create_engine(u, **kwargs)
    except (NoSuchModuleError, ArgumentError, ImportError) as exc:
        raise GpuplanError(f"cannot use the database URL {_safe(u)}: {cause(exc)}", field="--db",
                           hint="for PostgreSQL install psycopg (pip install 'psycopg[binary]'); "
                           + hint_urls) from None
    start = time.monotonic()
    attempt = 0
    while True:
        try:
            _migrate(engine)
            break
        except DBAPIError as exc:
            waited = time.monotonic() - start
            if _locked(exc) and not exc.connection_invalidated:
                if waited < timeout:  # another process is creating the schema (SQLite)
                    attempt += 1
                    time.sleep(min(0.2 * attempt, max(timeout - waited, 0.01)))
                    continue
                raise _timed_out(u, waited, "cannot open the store") from None
            raise GpuplanError(f"cannot use the quotes database {_safe(u)}: {cause(exc)}",
                               field="--db", hint=f"check the URL (--db or {ENV}), that the server is running "
                               "and reachable, and that the file's folder is writable.") from None
        except SQLAlchemyError as exc:
            raise GpuplanError(f"cannot use the quotes database {_safe(u)}: {cause(exc)}", field="--db",
                               hint=f"check the URL (--db or {ENV}).") from None
    _ENGINES[url] = engine
    return engine


def add_quotes(engine: Any, quotes: Sequence[Quote]) -> int:
    """Insert every quote in one transaction; on any error nothing is stored."""
    from sqlalchemy.exc import SQLAlchemyError

    if not quotes:
        return 0
    now = datetime.now(UTC)
    rows = [{"provider": q.provider, "gpu": q.gpu, "mode": q.mode, "term_months": q.term_months, "price": q.price,
             "per": q.per, "price_per_gpu_hour": q.price_per_gpu_hour, "currency": q.currency,
             "quoted_on": q.quoted_on, "note": q.note, "gpus_per_node": q.gpus_per_node, "added_at": now,
             "price_low": q.price_low, "price_high": q.price_high}
            for q in quotes]
    timeout = wait_seconds()
    start = time.monotonic()
    attempt = 0
    while True:
        try:
            with engine.begin() as conn:
                conn.execute(QUOTES.insert(), rows)
            return len(rows)
        except SQLAlchemyError as exc:
            waited = time.monotonic() - start
            if _locked(exc):
                if waited < timeout:
                    attempt += 1
                    time.sleep(min(0.05 * attempt, max(timeout - waited, 0.01)))
                    continue
                raise _timed_out(engine.url, waited, "the quotes were not stored") from None
            raise GpuplanError(f"the quotes were not stored: {cause(exc)}", field="--db",
                               hint="nothing was written; check the database and try again.") from None


def list_quotes(engine: Any, *, gpu: str | None = None, mode: str | None = None) -> list[Quote]:
    from sqlalchemy import select
    from sqlalchemy.exc import SQLAlchemyError

    stmt = select(QUOTES).order_by(QUOTES.c.quoted_on, QUOTES.c.id)
    if gpu:
        stmt = stmt.where(QUOTES.c.gpu == gpu)
    if mode:
        stmt = stmt.where(QUOTES.c.mode == mode)
    try:
        with engine.connect() as conn:
            rows = list(conn.execute(stmt))
    except SQLAlchemyError as exc:
        if _locked(exc):
            raise _timed_out(engine.url, wait_seconds(), "the quotes were not read") from None
        raise GpuplanError(f"the quotes were not read: {cause(exc)}", field="--db",
                           hint=f"check the database (--db or {ENV}) and try again.") from None
    return [Quote(r.provider, r.gpu, r.mode, r.term_months, float(r.price), r.per, float(r.price_per_gpu_hour),
                  r.currency, r.quoted_on, r.note or "", int(r.gpus_per_node), int(r.id),
                  r.price_low, r.price_high)
            for r in rows]


def _engine_for(db: str | None) -> tuple[str, Any]:
    """The URL and a fresh engine on it, for schema commands (no migration on open)."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    url = resolve_url(db)
    try:
        return url, create_engine(make_url(url))
    except (NoSuchModuleError, ArgumentError) as exc:
        raise GpuplanError(f"unsupported database URL {url.split('://')[0]!r}: {cause(exc)}", field="--db",
                           hint="use sqlite:///... or postgresql://...") from None


def schema_revision(db: str | None = None) -> str | None:
    """The Alembic revision the store's schema is at (None: no schema yet)."""
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy.exc import SQLAlchemyError

    url, engine = _engine_for(db)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    except SQLAlchemyError as exc:
        raise GpuplanError(f"cannot read the quotes database {_safe(engine.url)}: {cause(exc)}",
                           field="--db", hint=f"check the URL (--db or {ENV}).") from None
    finally:
        engine.dispose()


def move_schema(rev: str, *, up: bool, db: str | None = None) -> str | None:
    """Upgrade (or downgrade) the store's schema to `rev` with Alembic's command API; the new revision."""
    from alembic import command
    from alembic.util import CommandError
    from sqlalchemy.exc import SQLAlchemyError

    url, engine = _engine_for(db)
    engine.dispose()
    _ENGINES.pop(url, None)
    try:
        (command.upgrade if up else command.downgrade)(alembic_config(url), rev)
    except CommandError as exc:
        raise GpuplanError(f"cannot move the schema to {rev!r}: {exc}", field="REV",
                           hint="`gpuplan quotes db history` lists the revisions; `head` and `base` work too.") \
            from None
    except SQLAlchemyError as exc:
        raise GpuplanError(f"cannot migrate the quotes database: {cause(exc)}", field="--db",
                           hint=f"check the URL (--db or {ENV}) and that the server is reachable.") from None
    return schema_revision(db)


def schema_history() -> list[tuple[str, str]]:
    """(revision, first line of its description) for every migration, newest first."""
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory.from_config(alembic_config())
    return [(s.revision, (s.doc or "").strip().splitlines()[0] if s.doc else "") for s in scripts.walk_revisions()]
