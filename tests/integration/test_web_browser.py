"""A real headless Chromium (Debian's) driving `gpuplan serve` and opening a generated report.

Screenshots go to `$GPUPLAN_ARTIFACTS` when set, else to the test's temporary folder (they are test
artifacts, never committed). Skips when Chromium or Playwright is missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
if CHROMIUM is None:
    pytest.skip("chromium is not installed (Debian package `chromium`; CI installs it)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> str:
    port = _free_port()
    exe = Path(sys.executable).with_name("gpuplan")
    proc = subprocess.Popen([str(exe), "serve", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ})
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            try:
                if httpx.get(base + "/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            pytest.fail("gpuplan serve did not start")
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: `$GPUPLAN_ARTIFACTS` (CI keeps it), else a temporary folder of the test run."""
    env = os.environ.get("GPUPLAN_ARTIFACTS")
    path = Path(env) if env else tmp_path_factory.mktemp("web-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _verdict(page) -> str:  # type: ignore[no-untyped-def]
    return page.locator("#result [data-verdict]").first.get_attribute("data-verdict")


def _now_marker_x(page) -> str:  # type: ignore[no-untyped-def]
    return page.locator("#result .chart-cost-hours line.marker").first.get_attribute("x1")


def test_page_edit_language_download(server: str, browser, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + "/")
    page.wait_for_selector("#result [data-verdict]")
    page.wait_for_selector('#fields input[data-path="workloads[0].hours_per_day"]')
    assert _verdict(page) == "ct-910b"  # the starter: 4 cards, 6 h a day: containers
    x_before = _now_marker_x(page)
    page.screenshot(path=str(artifacts / "web-en-6h.png"), full_page=False)

    hours = page.locator('#fields input[data-path="workloads[0].hours_per_day"]')
    hours.fill("24")
    hours.dispatch_event("change")
    page.wait_for_function("document.querySelector('#result [data-verdict]').dataset.verdict === 'bm-910b'",
                           timeout=15000)
    assert "hours_per_day: 24" in page.input_value("#yaml")
    assert _now_marker_x(page) != x_before  # the chart moved its "now" line
    page.wait_for_selector("#status.ok")
    page.screenshot(path=str(artifacts / "web-en-24h.png"), full_page=False)

    page.select_option("#lang", "zh")
    page.wait_for_url("**/?lang=zh")
    page.wait_for_selector("#result [data-verdict]")
    assert "hours_per_day: 24" in page.input_value("#yaml")  # the edit survives the language switch
    assert _verdict(page) == "bm-910b"
    assert "结论" in page.inner_text("#result") and "下载 HTML 报告" in page.inner_text("header")
    page.screenshot(path=str(artifacts / "web-zh.png"), full_page=True)

    with page.expect_download() as dl:
        page.click("#dl-html")
    report = artifacts / "downloaded-report-zh.html"
    dl.value.save_as(report)
    html = report.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "四个维度" in html and 'data-verdict="bm-910b"' in html

    with page.expect_download() as dl:
        page.click("#dl-json")
    data = Path(dl.value.path()).read_text(encoding="utf-8")
    assert '"schema": "gpuplan.compare/1"' in data

    page.click('.viewbar .view[data-view="plan"]')
    page.wait_for_selector("#result .report-plan", timeout=30000)
    assert "混合资源池规划" in page.inner_text("#result")
    page.screenshot(path=str(artifacts / "web-zh-plan.png"), full_page=False)
    page.click('.viewbar .view[data-view="compare"]')
    page.wait_for_selector("#result .report-compare")

    # a broken scenario: the error, with its line, replaces nothing silently
    page.fill("#yaml", "version: 1\ncurrency: CNY\noffers: [\n")
    page.wait_for_selector("#status.err", timeout=10000)
    assert "scenario.yaml" in page.inner_text("#status")
    assert not errors, errors
    ctx.close()


def test_report_makes_no_network_request(browser, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    from gpuplan import api
    from gpuplan.render.html import write_report

    path = artifacts / "report-seed-910b-en.html"
    write_report("compare", api.compare(ROOT / "examples" / "seed-910b.yaml", hours_curves=True), path, "en")
    ctx = browser.new_context(viewport={"width": 1100, "height": 900})
    routed: list[str] = []
    seen: list[str] = []

    def record(route) -> None:  # type: ignore[no-untyped-def]
        routed.append(route.request.url)
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            route.abort()

    ctx.route("**/*", record)
    page = ctx.new_page()
    page.on("request", lambda r: seen.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("networkidle")
    assert seen == [path.as_uri()], seen
    assert all(u == path.as_uri() for u in routed), routed
    assert page.locator("svg.chart").count() == 6
    assert page.locator("svg.chart polyline.series").count() >= 4
    page.screenshot(path=str(artifacts / "report-seed-910b-en.png"), full_page=True)
    page.emulate_media(media="print")
    page.pdf(path=str(artifacts / "report-seed-910b-en.pdf"))  # print stylesheet applied
    assert (artifacts / "report-seed-910b-en.pdf").stat().st_size > 10_000
    ctx.close()
