"""The web page's commit view and quote history (issue 16): `POST /api/commit`, the commit report, the
quotes endpoints on a real SQLite database, and a real Chromium at phone and desk sizes.

Screenshots go to `$GPUPLAN_ARTIFACTS` when set, else to the test's temporary folder.
"""

from __future__ import annotations

import math
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from live_server import CHROMIUM, CHROMIUM_ARGS, artifacts_dir, gpuplan_serve  # noqa: E402
from web_inputs import SEED, cli_json  # noqa: E402

from gpuplan import api  # noqa: E402

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from gpuplan.web import create_app  # noqa: E402
from gpuplan.web.limits import MAX_COMMIT_PATHS, MAX_QUOTE_ROWS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SEED_TEXT = SEED.read_text(encoding="utf-8")
QUOTES_CSV = ROOT / "examples" / "seed-910b-quotes.csv"
ERROR_KEYS = {"error", "message", "file", "line", "field", "hint"}
GOOD = {"provider": "idc-test", "gpu": "ascend-910b", "mode": "bare-metal", "term": "6mo", "price": 200,
        "per": "gpu-day", "currency": "CNY", "date": "2026-06-01", "note": "web test"}


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'quotes.sqlite'}"


@pytest.fixture
def client(db: str) -> Iterator[TestClient]:
    app = create_app(db=db)
    yield TestClient(base_url="http://127.0.0.1", app=app)
    app.state.shutdown()


def _count(client: TestClient) -> int:
    r = client.get("/api/quotes")
    assert r.status_code == 200
    return len(r.json())


# --- commit --------------------------------------------------------------------------------------


def test_commit_is_the_cli_json_with_the_servers_quotes(client: TestClient, db: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    flat = client.post("/api/commit", json={"scenario": SEED_TEXT, "paths": 2000, "seed": 7})
    assert flat.status_code == 200, flat.text
    assert flat.json() == cli_json(capsys, "commit", str(SEED), "--paths", "2000", "--seed", "7", "--db", db)
    assert flat.json()["schema"] == "gpuplan.commit/1" and flat.json()["paths"] == 2000
    assert "flat" in " ".join(flat.json()["reasons"])  # an empty history: a flat market
    # the quotes imported through the web fill the drifts the scenario leaves out, as `commit --db` does
    r = client.post("/api/quotes/import", files={"file": ("history.csv", QUOTES_CSV.read_bytes())})
    assert r.status_code == 201
    drifted = client.post("/api/commit", json={"scenario": SEED_TEXT, "paths": 2000, "seed": 7, "lang": "zh"})
    assert drifted.status_code == 200
    assert drifted.json() == cli_json(capsys, "commit", str(SEED), "--paths", "2000", "--seed", "7", "--db", db,
                                      "--lang", "zh")
    assert drifted.json()["against"] != flat.json()["against"]
    # the same seed, the same answer; another seed, other paths
    again = client.post("/api/commit", json={"scenario": SEED_TEXT, "paths": 2000, "seed": 7, "lang": "zh"})
    assert again.json() == drifted.json()
    other = client.post("/api/commit", json={"scenario": SEED_TEXT, "paths": 2000, "seed": 8, "lang": "zh"})
    assert other.json()["cost"] != drifted.json()["cost"]


def test_commit_limits_and_bad_input(client: TestClient) -> None:
    for body, field in (({"paths": MAX_COMMIT_PATHS + 1}, "paths"), ({"paths": 0}, "paths"),
                        ({"paths": 10**30}, "paths"), ({"seed": -1}, "seed"), ({"seed": 2**32}, "seed")):
        t0 = time.perf_counter()
        r = client.post("/api/commit", json={"scenario": SEED_TEXT, **body})
        assert r.status_code == 422 and r.json()["error"] == "limit" and r.json()["field"] == field, r.text
        assert set(r.json()) == ERROR_KEYS
        assert time.perf_counter() - t0 < 1.0  # refused before any engine runs
    assert client.post("/api/commit", json={"scenario": SEED_TEXT, "paths": "many"}).status_code == 400
    assert client.post("/api/commit", json={"scenario": SEED_TEXT, "extra": 1}).status_code == 400
    # the scenario's errors are the CLI's
    bad = SEED_TEXT.replace("hours_per_day: 6", "hours_per_day: 30")
    r = client.post("/api/commit", json={"scenario": bad, "paths": 100})
    assert r.status_code == 422
    assert r.json()["field"] == "workloads[0].hours_per_day" and r.json()["file"] == "scenario.yaml"
    terms = SEED_TEXT.replace("    min_term: 30d\n", "    terms:\n      - {length: 24mo, price: {amount: 150, per: "
                              "gpu-day}}\n")
    r = client.post("/api/commit", json={"scenario": terms + "market:\n  horizon: 12mo\n", "paths": 100})
    assert r.status_code == 422 and "terms" in (r.json()["field"] or ""), r.text


def test_commit_at_the_limit_answers(client: TestClient) -> None:
    t0 = time.perf_counter()
    r = client.post("/api/commit", json={"scenario": SEED_TEXT, "paths": MAX_COMMIT_PATHS})
    assert r.status_code == 200 and r.json()["paths"] == MAX_COMMIT_PATHS
    print(f"commit at {MAX_COMMIT_PATHS:,} paths through the worker pool: {time.perf_counter() - t0:.2f} s")


def test_commit_report(client: TestClient) -> None:
    r = client.post("/api/report", json={"kind": "commit", "scenario": SEED_TEXT, "paths": 500, "lang": "zh",
                                         "fragment": True})
    assert r.status_code == 200 and r.text.startswith('<main class="report commit-report"')
    assert "<body" not in r.text and "租期阶梯" in r.text and "scenario.yaml" in r.text
    # each drawn for desk and phone:
    assert r.text.count('class="r-wide"') == 4  # the ladder timeline, the cost fan chart, a price band per tier
    assert "bm-910b" in r.text
    page = client.post("/api/report", json={"kind": "commit", "scenario": SEED_TEXT, "paths": 500})
    assert page.status_code == 200 and page.text.startswith("<!DOCTYPE html>")
    assert "gpuplan-commit-en.html" in page.headers["content-disposition"]
    r = client.post("/api/report", json={"kind": "commit", "scenario": SEED_TEXT, "paths": 50_000})
    assert r.status_code == 422 and r.json()["field"] == "paths"
    assert client.post("/api/report", json={"kind": "commit"}).status_code == 400


# --- quotes --------------------------------------------------------------------------------------


def test_quotes_add_and_list(client: TestClient, db: str) -> None:
    assert client.get("/api/quotes").json() == []
    r = client.post("/api/quotes", json=GOOD)
    assert r.status_code == 201 and r.json()["added"] == 1
    assert r.json()["quote"]["price_per_gpu_hour"] == pytest.approx(200 / 24)
    client.post("/api/quotes", json={**GOOD, "mode": "container", "price": 9.5, "per": "gpu-hour", "term": None})
    listed = client.get("/api/quotes").json()
    assert [q["mode"] for q in listed] == ["bare-metal", "container"]
    assert listed == [q.to_json() for q in api.quotes_list(db=db)]  # what `quotes list -o json` prints
    assert [q["mode"] for q in client.get("/api/quotes?mode=container").json()] == ["container"]
    assert client.get("/api/quotes?gpu=h100").json() == []
    r = client.get("/api/quotes?mode=spot")
    assert r.status_code == 422 and r.json()["field"] == "mode"


@pytest.mark.parametrize(("change", "field"), [
    ({"price": -1}, "price"), ({"price": "cheap"}, "price"), ({"mode": "spot"}, "mode"),
    ({"date": "2026-13-01"}, "date"), ({"currency": "cny"}, "currency"), ({"term": "a year"}, "term"),
    ({"per": "gpu-week"}, "per"), ({"provider": ""}, "provider"), ({"gpu": " "}, "gpu"),
])
def test_a_bad_quote_is_422_naming_its_field_and_stores_nothing(client: TestClient, change: dict[str, object],
                                                                field: str) -> None:
    r = client.post("/api/quotes", json={**GOOD, **change})
    assert r.status_code == 422, r.text
    assert set(r.json()) == ERROR_KEYS and r.json()["field"] == field and r.json()["message"]
    assert _count(client) == 0


def test_a_malformed_quote_request_is_400(client: TestClient) -> None:
    assert client.post("/api/quotes", json={**GOOD, "colour": "red"}).status_code == 400
    assert client.post("/api/quotes", content=b"not json", headers={"content-type": "application/json"}
                       ).status_code == 400
    r = client.post("/api/quotes", json={k: v for k, v in GOOD.items() if k != "price"})
    assert r.status_code == 422 and r.json()["field"] == "price"  # missing is a bad value, like the CLI's
    assert _count(client) == 0


def test_import_the_seed_history(client: TestClient, db: str) -> None:
    r = client.post("/api/quotes/import", files={"file": ("seed-910b-quotes.csv", QUOTES_CSV.read_bytes())})
    assert r.status_code == 201, r.text
    want = len(api.quotes_read_csv(QUOTES_CSV))
    assert r.json() == {"imported": want, "file": "seed-910b-quotes.csv"}
    assert _count(client) == want
    trend = client.get("/api/quotes/trend").json()
    assert trend == api.quotes_trend(db=db) and {t["mode"] for t in trend} == {"bare-metal", "container"}
    only = client.get("/api/quotes/trend?gpu=ascend-910b&mode=container").json()
    assert [t["mode"] for t in only] == ["container"] and only[0]["drift_per_year"] < 0
    assert client.get("/api/quotes/trend?mode=spot").status_code == 422


def test_a_bad_row_imports_nothing_and_names_file_line_and_column(client: TestClient, tmp_path: Path) -> None:
    client.post("/api/quotes", json=GOOD)
    lines = QUOTES_CSV.read_text(encoding="utf-8").splitlines()
    lines[10] = lines[10].replace(",CNY,", ",yuan,")
    r = client.post("/api/quotes/import", files={"file": ("../../etc/bad.csv", "\n".join(lines).encode())})
    assert r.status_code == 422, r.text
    e = r.json()
    assert e["file"] == "bad.csv" and e["line"] == 11 and e["field"] == "currency"
    assert "/tmp" not in r.text and "gpuplan-web-" not in r.text
    assert _count(client) == 1  # the quote added before, and none of the file's
    r = client.post("/api/quotes/import", files={"file": ("q.csv", b"provider,gpu\nx,y\n")})
    assert r.status_code == 422 and r.json()["line"] == 1 and "missing column" in r.json()["message"]
    assert client.post("/api/quotes/import", data={"x": "1"}).status_code in (400, 415)
    huge = b"provider,gpu,mode,term,price,per,currency,date,note\n" + b"a\n" * (MAX_QUOTE_ROWS + 1)
    t0 = time.perf_counter()
    r = client.post("/api/quotes/import", files={"file": ("big.csv", huge)})
    assert r.status_code == 422 and r.json()["error"] == "limit" and r.json()["field"] == "file"
    assert time.perf_counter() - t0 < 2.0
    assert _count(client) == 1


def test_import_a_catalog_file(client: TestClient, tmp_path: Path) -> None:
    cat = ("offers:\n  - id: bm-x\n    provider: idc\n    gpu: ascend-910b\n    mode: bare-metal\n"
           "    price: {amount: 190, per: gpu-day}\n    currency: CNY\n    as_of: 2026-07\n")
    r = client.post("/api/quotes/import", files={"file": ("pulled.yaml", cat.encode())})
    assert r.status_code == 201 and r.json()["imported"] == 1
    assert client.get("/api/quotes").json()[0]["date"] == "2026-07-01"


def test_the_price_history_chart_draws_the_fitted_trend(client: TestClient) -> None:
    empty = client.get("/api/quotes/chart").json()
    assert empty["series"] == [] and empty["svg"] == "" and empty["groups"] == []
    client.post("/api/quotes/import", files={"file": ("q.csv", QUOTES_CSV.read_bytes())})
    data = client.get("/api/quotes/chart?gpu=ascend-910b&mode=bare-metal&lang=zh").json()
    assert data["gpu"] == "ascend-910b" and data["mode"] == "bare-metal" and data["currency"] == "CNY"
    assert {(g["gpu"], g["mode"]) for g in data["groups"]} == {("ascend-910b", "bare-metal"),
                                                               ("ascend-910b", "container")}
    tr = data["trend"]
    assert tr is not None and tr["mode"] == "bare-metal"
    quotes = [q for q in api.quotes_read_csv(QUOTES_CSV) if q.mode == "bare-metal"]
    assert sum(len(s["points"]) for s in data["series"]) == len(quotes) == data["quotes"]
    for s in data["series"]:
        mine = [q for q in quotes if q.term_months == s["term_months"]]
        (d0, p0), (d1, p1) = s["fit"]
        years = (date.fromisoformat(d1) - date.fromisoformat(d0)).days / 365.25
        assert math.exp(math.log(p1 / p0) / years) - 1 == pytest.approx(tr["drift_per_year"], abs=1e-5)
        # the least-squares line of the fit passes through the term's mean day and mean log price
        d_mean = sum(q.quoted_on.toordinal() for q in mine) / len(mine)
        y_mean = sum(math.log(q.price_per_gpu_hour) for q in mine) / len(mine)
        at_mean = math.log(p0) + math.log1p(tr["drift_per_year"]) * (d_mean - date.fromisoformat(d0).toordinal()) \
            / 365.25
        assert at_mean == pytest.approx(y_mean, abs=1e-6)
    assert data["svg"].startswith("<svg") and "polyline" in data["svg"] and "卡时" in data["svg"]
    assert data["svg"].count("<circle") >= len(quotes)
    # a group without enough quotes for a trend: points, no line
    client.post("/api/quotes", json={**GOOD, "gpu": "h100-sxm"})
    one = client.get("/api/quotes/chart?gpu=h100-sxm&mode=bare-metal").json()
    assert one["trend"] is None and one["series"][0]["fit"] == [] and one["quotes"] == 1


def test_an_unusable_database_is_503(tmp_path: Path) -> None:
    app = create_app(db="postgresql://nobody@127.0.0.1:1/quotes")
    c = TestClient(base_url="http://127.0.0.1", app=app)
    for r in (c.get("/api/quotes"), c.post("/api/quotes", json=GOOD)):
        assert r.status_code == 503 and r.json()["error"] == "database", r.text
        assert "127.0.0.1" in r.json()["message"]
    assert c.post("/api/quotes", json={**GOOD, "price": -1}).status_code == 422  # input is checked first
    app.state.shutdown()


def test_concurrent_adds_lose_no_quote(db: str) -> None:
    app = create_app(db=db, workers=4)
    c = TestClient(base_url="http://127.0.0.1", app=app)
    errors: list[str] = []

    def add(i: int) -> None:
        r = c.post("/api/quotes", json={**GOOD, "note": f"n{i}"})
        if r.status_code != 201:
            errors.append(r.text)

    threads = [threading.Thread(target=add, args=(i,)) for i in range(24)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert sorted(q["note"] for q in c.get("/api/quotes").json()) == sorted(f"n{i}" for i in range(24))
    app.state.shutdown()


def test_the_page_has_the_commit_view_and_the_quotes(client: TestClient) -> None:
    for lang, words in (("en", ("Commit: lease terms", "Quote history", "Import quotes")),
                        ("zh", ("签约：租期组合", "报价历史", "导入报价"))):
        html = client.get(f"/?lang={lang}").text
        for w in words:
            assert w in html
    assert client.get("/api/health").json()["engines"]["commit"] is True
    paths = client.get("/openapi.json").json()["paths"]
    for p in ("/api/commit", "/api/quotes", "/api/quotes/import", "/api/quotes/trend", "/api/quotes/chart"):
        assert p in paths


def test_the_limits_are_documented() -> None:
    doc = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    for n in (MAX_COMMIT_PATHS, MAX_QUOTE_ROWS):
        assert f"| {n:,}" in doc or f"| {n:,} " in doc


def test_the_commit_worker_never_imports_the_cli(db: str) -> None:
    """The commit call runs the api in the worker, as the worker does (a fresh interpreter), with no CLI."""
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from gpuplan.web.worker import CommitCall, handle\n"
        f"seed = Path({str(SEED)!r}).read_text(encoding='utf-8')\n"
        f"s, body = handle(CommitCall(scenario=seed, paths=200, db={db!r}), 0)\n"
        "assert s == 200 and json.loads(body)['schema'] == 'gpuplan.commit/1', body\n"
        "s, html = handle(CommitCall(scenario=seed, paths=200, db=None, report='fragment', lang='zh'), 0)\n"
        "assert s == 200 and html.startswith(b'<main'), html[:200]\n"
        "bad = sorted(m for m in sys.modules if m.startswith('gpuplan.cli'))\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]


# --- the page in a real browser ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    dbfile = tmp_path_factory.mktemp("web-quotes") / "quotes.sqlite"
    with gpuplan_serve(env={"GPUPLAN_DB": f"sqlite:///{dbfile}"}) as base:
        yield base


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return artifacts_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (Debian package `chromium`; CI installs it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _in_viewport(page, selector: str) -> bool:  # type: ignore[no-untyped-def]
    box = page.locator(selector).first.bounding_box()
    vp = page.viewport_size
    return box is not None and box["y"] >= 0 and box["y"] + min(box["height"], 120) <= vp["height"] \
        and box["x"] >= 0 and box["x"] < vp["width"]


def _rows(page) -> int:  # type: ignore[no-untyped-def]
    return int(page.locator("#quote-table tbody tr").count())


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1280, 800)])
def test_quotes_and_commit_in_the_browser(server: str, browser, artifacts: Path,  # type: ignore[no-untyped-def]
                                          width: int, height: int) -> None:
    phone = width < 900
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + "/")
    page.wait_for_selector("#result [data-verdict]")
    tag = f"{width}x{height}"

    # the quote history: a bad price is refused beside its field, then the quote is added
    page.click('.viewbar .view[data-view="quotes"]')
    page.wait_for_selector("#quotes:not([hidden])")
    page.wait_for_selector("#status.ok")
    before = _rows(page)
    form = "#quote-form"
    page.fill(f"{form} [name=date]", "2026-06-01")
    page.fill(f"{form} [name=provider]", f"idc-{tag}")
    page.fill(f"{form} [name=gpu]", "ascend-910b")
    page.select_option(f"{form} [name=mode]", "bare-metal")
    page.fill(f"{form} [name=term]", "6mo")
    page.fill(f"{form} [name=price]", "0")
    page.select_option(f"{form} [name=per]", "gpu-day")
    page.fill(f"{form} [name=currency]", "CNY")
    page.click("#add-quote")
    page.wait_for_selector(f'{form} [name=price][aria-invalid="true"]')
    msg = page.locator(f"{form} label:has([name=price]) + .field-msg")
    assert "price above 0" in msg.inner_text()
    assert _rows(page) == before  # nothing stored
    page.fill(f"{form} [name=price]", "200")
    page.click("#add-quote")
    page.wait_for_function(f"() => document.querySelectorAll('#quote-table tbody tr').length === {before + 1}")
    assert f"idc-{tag}" in page.inner_text("#quote-table")
    assert page.get_attribute(f"{form} [name=price]", "aria-invalid") is None

    # import the bundled history: every row lands, the chart draws the trend
    page.set_input_files("#import-form [name=file]", str(QUOTES_CSV))
    page.click("#import-quotes")
    n = len(api.quotes_read_csv(QUOTES_CSV))
    page.wait_for_function(f"() => document.querySelectorAll('#quote-table tbody tr').length === {before + 1 + n}")
    page.wait_for_selector("#quote-chart svg polyline.series")
    assert page.locator("#quote-chart svg circle").count() >= 6
    assert "a year (90%" in page.inner_text("#quote-trend")  # the fitted drift above the chart
    page.select_option("#quote-group", "ascend-910b|container")
    page.wait_for_function("() => document.querySelector('#quote-chart svg') && "
                           "document.querySelector('#quote-trend').textContent.includes('container')")
    page.locator("#quote-chart").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / f"web-quotes-{tag}.png"), full_page=False)

    # the commit view of the seed example
    seed = SEED_TEXT
    if phone:
        page.click("#pane-edit")
    page.fill("#yaml", seed)
    if phone:
        page.click("#pane-result")
    page.click('.viewbar .view[data-view="commit"]')
    page.wait_for_selector("#result .commit-report table", timeout=30000)
    page.wait_for_selector("#status.ok", timeout=30000)
    page.evaluate("window.scrollTo(0, 0)")
    assert "bm-910b" in page.inner_text("#result .commit-report table")
    assert _in_viewport(page, "#result .commit-report table"), "the ladder is not on the first screen"
    assert page.locator("#result .commit-report .r-wide svg").count() == 4  # timeline, fan, two price bands
    page.screenshot(path=str(artifacts / f"web-commit-{tag}.png"), full_page=False)
    page.screenshot(path=str(artifacts / f"web-commit-{tag}-full.png"), full_page=True)

    # a paths value past the server's limit: refused beside the field
    page.fill("#commit-paths", str(MAX_COMMIT_PATHS + 1))
    page.wait_for_selector('#commit-paths[aria-invalid="true"]', timeout=15000)
    assert "20,000" in page.inner_text("#commit-bar")
    assert "ok" not in (page.get_attribute("#status", "class") or "").split()
    page.fill("#commit-paths", "2000")
    page.wait_for_selector("#status.ok", timeout=30000)

    if not phone:  # in Chinese: the ladder's headings and reasons
        page.select_option("#lang", "zh")
        page.wait_for_url("**/?lang=zh")
        page.wait_for_selector("#result [data-verdict]")
        page.click('.viewbar .view[data-view="commit"]')
        page.wait_for_selector("#result .commit-report table", timeout=30000)
        page.wait_for_selector("#status.ok", timeout=30000)
        assert "租期阶梯" in page.inner_text("#result")
        page.screenshot(path=str(artifacts / f"web-commit-zh-{tag}.png"), full_page=False)
    assert not errors
    ctx.close()
