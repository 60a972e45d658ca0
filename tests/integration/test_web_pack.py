"""The web offers the decision pack (issue 29): `POST /api/report` with `kind: pack` returns the same
document as `gpuplan report --html` (a page to download, or the `<main>` the page shows)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from web_inputs import SEED

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from gpuplan.cli import main  # noqa: E402
from gpuplan.web import create_app  # noqa: E402

SEED_TEXT = SEED.read_text(encoding="utf-8")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(db=f"sqlite:///{tmp_path / 'quotes.sqlite'}")
    yield TestClient(base_url="http://127.0.0.1", app=app)
    app.state.shutdown()


def _sections(html: str) -> list[str]:
    return re.findall(r'<section[^>]*\bid="([a-z]+)"', html)


def test_the_pack_page_is_the_cli_document(client: TestClient, tmp_path: Path) -> None:
    r = client.post("/api/report", json={"kind": "pack", "scenario": SEED_TEXT, "paths": 500, "lang": "zh"})
    assert r.status_code == 200, r.text
    assert r.text.startswith("<!DOCTYPE html>")
    assert 'filename="gpuplan-pack-zh.html"' in r.headers["content-disposition"]
    assert _sections(r.text) == ["answer", "compare", "plan", "commit", "vendors", "assumptions"]
    out = tmp_path / "pack.html"
    assert main(["report", str(SEED), "--paths", "500", "--lang", "zh", "--html", str(out)]) == 0
    cli = out.read_text(encoding="utf-8")
    answer = lambda h: h[h.index('id="answer"'):h.index('id="compare"')]  # noqa: E731
    assert answer(r.text) == answer(cli).replace(str(SEED), "scenario.yaml")  # the same answer and money
    assert "/tmp" not in r.text  # the server's paths never show


def test_the_pack_fragment_and_bad_requests(client: TestClient) -> None:
    r = client.post("/api/report", json={"kind": "pack", "scenario": SEED_TEXT, "paths": 500, "fragment": True})
    assert r.status_code == 200 and r.text.lstrip().startswith('<main class="report report-pack"')
    assert "<body" not in r.text and "<style" not in r.text
    assert client.post("/api/report", json={"kind": "pack"}).status_code == 400
    bad = client.post("/api/report", json={"kind": "pack", "scenario": SEED_TEXT, "paths": 50_000})
    assert bad.status_code == 422 and bad.json()["field"] == "paths"


def test_the_page_downloads_the_pack(tmp_path: Path) -> None:
    from live_server import CHROMIUM, CHROMIUM_ARGS, gpuplan_serve

    if CHROMIUM is None:
        pytest.skip("chromium is not installed (Debian package `chromium`; CI installs it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
    with gpuplan_serve() as base, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1366, "height": 900}, accept_downloads=True).new_page()
        page.goto(base + "/?lang=zh")
        page.wait_for_selector("#result [data-verdict]")
        page.evaluate("document.querySelector('#commit-paths').value = '500'")  # in the commit view
        with page.expect_download(timeout=60_000) as dl:
            page.click("#dl-pack")
        assert dl.value.suggested_filename == "gpuplan-pack-zh.html"
        html = Path(dl.value.path()).read_text(encoding="utf-8")
        browser.close()
    assert _sections(html)[:5] == ["answer", "compare", "plan", "commit", "vendors"] and "决策报告" in html
