"""A real headless Chromium (Debian's) driving `gpuplan serve` and opening a generated report.

Screenshots go to `$GPUPLAN_ARTIFACTS` when set, else to the test's temporary folder (they are test
artifacts, never committed). Skips when Chromium or Playwright is missing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_server import CHROMIUM, CHROMIUM_ARGS, artifacts_dir, gpuplan_serve

if CHROMIUM is None:
    pytest.skip("chromium is not installed (Debian package `chromium`; CI installs it)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with gpuplan_serve() as base:
        yield base


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return artifacts_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
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
    page.wait_for_function("() => document.querySelector('#result [data-verdict]').dataset.verdict === 'bm-910b'",
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
    # no form field for it: the message (with its line) sits under the YAML editor, which is marked
    assert page.is_visible("#yaml-error") and "scenario.yaml:" in page.inner_text("#yaml-error")
    assert page.get_attribute("#yaml", "aria-invalid") == "true"
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
    assert page.locator(".r-wide svg.chart").count() == 6  # (and each again for a phone, in .r-narrow)
    assert page.locator("svg.chart polyline.series").count() >= 4
    page.screenshot(path=str(artifacts / "report-seed-910b-en.png"), full_page=True)
    page.emulate_media(media="print")
    page.pdf(path=str(artifacts / "report-seed-910b-en.pdf"))  # print stylesheet applied
    assert (artifacts / "report-seed-910b-en.pdf").stat().st_size > 10_000
    ctx.close()


# --- the page at a phone's size and a desk's ---------------------------------------------------------

SIZES = {"phone": (390, 844), "desk": (1280, 800)}
BAD_RED = "rgb(179, 38, 30)"


def _open(browser, server: str, size: str):  # type: ignore[no-untyped-def]
    w, h = SIZES[size]
    ctx = browser.new_context(viewport={"width": w, "height": h}, accept_downloads=True)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + "/")
    page.wait_for_selector("#result [data-verdict]")
    page.wait_for_selector("#status.ok")
    return ctx, page, errors


def _inside(page, selector: str) -> bool:  # type: ignore[no-untyped-def]
    """The element is wholly inside the viewport (not covered by scrolling away, nor cut at an edge)."""
    box = page.locator(selector).first.bounding_box()
    vp = page.viewport_size
    return (box is not None and box["width"] > 0 and box["x"] >= 0 and box["y"] >= 0
            and box["x"] + box["width"] <= vp["width"] and box["y"] + box["height"] <= vp["height"])


def _to_editor(page, size: str) -> None:  # type: ignore[no-untyped-def]
    if size == "phone":
        page.click("#pane-edit")
    page.wait_for_selector("#editor", state="visible")


def _to_result(page, size: str) -> None:  # type: ignore[no-untyped-def]
    if size == "phone":
        page.click("#pane-result")
    page.wait_for_selector("#result", state="visible")


@pytest.mark.parametrize("size", list(SIZES))
def test_the_verdict_is_in_view_and_the_editor_a_tap_away(server: str, browser, artifacts: Path,  # type: ignore[no-untyped-def]
                                                           size: str) -> None:
    ctx, page, errors = _open(browser, server, size)
    assert _inside(page, "#result .verdict .choice") and _inside(page, "#result .verdict .label")
    assert _inside(page, "#status")
    page.screenshot(path=str(artifacts / f"web-{size}-verdict.png"))
    if size == "phone":
        # one pane at a time: the editor does not cover the result; it is one tap away
        assert not page.is_visible("#editor") and _inside(page, "#pane-edit")
        page.click("#pane-edit")
        assert page.is_visible('#fields input[data-path="workloads[0].hours_per_day"]')
        assert not page.is_visible("#result")
        page.screenshot(path=str(artifacts / f"web-{size}-editor.png"))
        page.click("#pane-result")
    else:
        assert _inside(page, '#fields input[data-path="workloads[0].hours_per_day"]')  # side by side
    assert _inside(page, "#result .verdict .choice")
    for y in (400, 2000, 100_000):  # at every scroll position nothing covers the result
        page.evaluate(f"window.scrollTo(0, {y})")
        top = page.evaluate("(() => { const r = document.querySelector('#result').getBoundingClientRect();"
                            " const x = r.left + r.width / 2, y = Math.min(Math.max(r.top, 0) + 200, innerHeight - 5);"
                            " const el = document.elementFromPoint(x, y); return !!el && !!el.closest('#result'); })()")
        assert top, f"something covers the result at scroll {y}"
    assert not errors, errors
    ctx.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_a_bad_value_shows_its_message_beside_the_field(server: str, browser, artifacts: Path,  # type: ignore[no-untyped-def]
                                                        size: str) -> None:
    ctx, page, errors = _open(browser, server, size)
    _to_editor(page, size)
    page.evaluate("window.__states = []; new MutationObserver(() => __states.push(document.querySelector('#status')"
                  ".className)).observe(document.querySelector('#status'), {attributes: true, childList: true})")
    hours = page.locator('#fields input[data-path="workloads[0].hours_per_day"]')
    hours.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("30")  # typing only: no change event, no blur
    # stale at once, before the debounce has sent anything
    assert "stale" in page.get_attribute("#status", "class") and "stale" in page.get_attribute("#result", "class")
    page.wait_for_selector('#fields input[data-path="workloads[0].hours_per_day"][aria-invalid="true"]',
                           timeout=15000)
    msg = page.locator("#fields .field-msg").first
    assert "24" in msg.inner_text() and page.get_attribute(
        "#fields .field-msg", "id") == hours.get_attribute("aria-describedby")
    ib, mb = hours.bounding_box(), msg.bounding_box()
    assert ib is not None and mb is not None
    assert 0 <= mb["y"] - (ib["y"] + ib["height"]) < 30  # right under the field's row
    assert _inside(page, '#fields input[data-path="workloads[0].hours_per_day"]')
    assert _inside(page, "#fields .field-msg")
    assert hours.evaluate("el => getComputedStyle(el).borderTopColor") == BAD_RED
    assert "err" in page.get_attribute("#status", "class") and "stale" in page.get_attribute("#result", "class")
    page.screenshot(path=str(artifacts / f"web-{size}-bad-value.png"))
    states = page.evaluate("window.__states")
    assert not any(s.split()[-1] == "ok" for s in states), states  # never "Up to date" over the stale verdict

    hours.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("24")
    page.wait_for_selector("#status.ok", timeout=15000)
    assert hours.get_attribute("aria-invalid") is None and page.locator("#fields .field-msg").count() == 0
    assert "24" in page.input_value("#yaml")
    after = page.evaluate("window.__states")[len(states):]
    assert [s.split()[-1] for s in after][-1] == "ok" and "busy" in " ".join(after)
    _to_result(page, size)
    assert _verdict(page) == "bm-910b" and "stale" not in (page.get_attribute("#result", "class") or "")
    assert _inside(page, "#result .verdict .choice")
    assert not errors, errors
    ctx.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_audit_then_plan_with_its_demand_then_every_export(server: str, browser, artifacts: Path,  # type: ignore[no-untyped-def]
                                                          tmp_path: Path, size: str) -> None:
    import json

    import yaml

    from gpuplan import api

    sys.path.insert(0, str(ROOT / "tests" / "unit"))
    from web_inputs import write_nvsmi

    log = write_nvsmi(tmp_path / "node1.csv")
    ctx, page, errors = _open(browser, server, size)
    _to_editor(page, size)
    page.wait_for_selector('#audit-form select[name="gpu_type"] option[value="ascend-910b"]', state="attached")
    page.set_input_files('#audit-form input[name="files"]', str(log))
    page.fill('#audit-form input[name="price"]', "8/gpu-hour")
    page.click("#run-audit")
    page.wait_for_selector("#result .report-audit", timeout=30000)
    assert page.is_visible("#demand-bar") and _inside(page, "#use-demand")
    page.screenshot(path=str(artifacts / f"web-{size}-audit.png"))

    page.click("#use-demand")
    page.wait_for_selector("#result .report-plan", timeout=30000)
    page.wait_for_selector("#status.ok")
    assert "audit" in page.inner_text("#plan-bar .text")
    page.screenshot(path=str(artifacts / f"web-{size}-plan-from-audit.png"))

    # the plan on screen is `plan --demand` of the audit's curve
    report = api.audit([log], price="8/gpu-hour", demand_mode="util", gpu_type="ascend-910b")
    assert report.demand is not None
    (tmp_path / "demand.csv").write_text(report.demand.csv, encoding="utf-8")
    (tmp_path / "scenario.yaml").write_text(api.STARTER, encoding="utf-8")
    want = api.plan_scenario(tmp_path / "scenario.yaml", demand=tmp_path / "demand.csv")
    with page.expect_download() as dl:
        page.click("#dl-json")
    got = json.loads(Path(dl.value.path()).read_text(encoding="utf-8"))
    for d in (got, want):
        d.pop("generated_at", None)
        d.pop("scenario", None)
    assert got["schema"] == "gpuplan.plan/1"
    assert got["pools"] == json.loads(json.dumps(want["pools"]).replace(str(tmp_path / "demand.csv"), "demand.csv"))
    assert got["pools"] != api.plan_scenario(tmp_path / "scenario.yaml")["pools"]  # the demand made a difference

    kinds = {"kueue": "ClusterQueue", "volcano": "Queue"}
    for target, name in (("kueue", "gpuplan-kueue.yaml"), ("slurm", "gpuplan-slurm.conf"),
                         ("volcano", "gpuplan-volcano.yaml"), ("skypilot", "gpuplan-skypilot.yaml")):
        with page.expect_download() as dl:
            page.click(f'#plan-bar button.export[data-target="{target}"]')
        assert dl.value.suggested_filename == name
        text = Path(dl.value.path()).read_text(encoding="utf-8")
        (artifacts / f"{size}-{name}").write_text(text, encoding="utf-8")
        assert "gpuplan-web-" not in text and "Plan: plan.json" in text
        if target == "slurm":
            assert "PartitionName=gpuplan" in text and "NodeName=" in text
            continue
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
        assert docs and all(isinstance(d, dict) for d in docs)
        if target in kinds:
            assert kinds[target] in {d.get("kind") for d in docs}
        else:
            assert all("resources" in d for d in docs)

    # an edit makes the plan stale: no export of it until the new plan (still on the audit's demand) is in
    _to_editor(page, size)
    page.locator('#fields input[data-path="workloads[0].gpus"]').fill("8")
    assert page.is_disabled('#plan-bar button.export[data-target="kueue"]')
    page.wait_for_selector("#status.ok", timeout=30000)
    _to_result(page, size)
    assert page.is_enabled('#plan-bar button.export[data-target="kueue"]') and "audit" in page.inner_text("#plan-bar")
    assert not errors, errors
    ctx.close()


def test_a_priced_replay_of_a_two_gpu_scenario_asks_for_the_gpu(server: str, browser, artifacts: Path,  # type: ignore[no-untyped-def]
                                                                tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "integration"))
    sys.path.insert(0, str(ROOT / "tests" / "unit"))
    from test_web_flow import TWO_GPUS
    from web_inputs import write_trace

    trace = write_trace(tmp_path / "t.csv")
    ctx, page, errors = _open(browser, server, "desk")
    page.fill("#yaml", TWO_GPUS)
    page.wait_for_selector('#sim-form select[name="gpu"] option[value="a100-80g"]', state="attached",
                           timeout=15000)
    page.wait_for_selector("#status.ok", timeout=15000)
    options = page.eval_on_selector_all('#sim-form select[name="gpu"] option', "os => os.map(o => o.value)")
    assert options == ["a100-80g", "ascend-910b"]
    page.select_option('#sim-form select[name="gpu"]', "a100-80g")
    page.set_input_files('#sim-form input[name="trace"]', str(trace))
    page.fill('#sim-form input[name="reserved"]', "0:8:4")
    page.click("#run-sim")
    page.wait_for_selector("#result .report-simulate", timeout=30000)
    page.wait_for_selector("#status.ok")
    page.screenshot(path=str(artifacts / "web-desk-replay-a100.png"))
    # a sweep past the server's limit: the message is beside the field, at once
    page.fill('#sim-form input[name="reserved"]', "0:100000000:1")
    page.click("#run-sim")
    page.wait_for_selector('#sim-form input[name="reserved"][aria-invalid="true"]', timeout=5000)
    assert "1,000" in page.inner_text("#sim-form .field-msg")
    assert not errors, errors
    ctx.close()


def test_plan_with_an_uploaded_demand_csv(server: str, browser, artifacts: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import json

    from gpuplan import api

    demand = tmp_path / "site-demand.csv"
    demand.write_text("time,gpu,gpus\n" + "".join(f"2024-03-04T{h:02d}:00:00Z,ascend-910b,{(h * 5) % 13}\n"
                                                  for h in range(24)), encoding="utf-8")
    ctx, page, errors = _open(browser, server, "desk")
    page.click('.viewbar .view[data-view="plan"]')
    page.wait_for_selector("#result .report-plan", timeout=30000)
    page.set_input_files("#demand-file", str(demand))
    page.wait_for_function("() => document.querySelector('#plan-bar .text').textContent.includes('site-demand.csv')")
    page.wait_for_selector("#status.ok", timeout=30000)
    assert page.is_enabled('#plan-bar button.export[data-target="volcano"]')
    with page.expect_download() as dl:
        page.click("#dl-json")
    got = json.loads(Path(dl.value.path()).read_text(encoding="utf-8"))
    (tmp_path / "scenario.yaml").write_text(api.STARTER, encoding="utf-8")
    want = api.plan_scenario(tmp_path / "scenario.yaml", demand=demand)
    assert got["pools"] == json.loads(json.dumps(want["pools"]).replace(str(demand), "demand.csv"))
    page.screenshot(path=str(artifacts / "web-desk-plan-demand-file.png"))
    assert not errors, errors
    ctx.close()


def test_an_emptied_field_is_marked_until_a_value_is_back(server: str, browser) -> None:  # type: ignore[no-untyped-def]
    ctx, page, errors = _open(browser, server, "desk")
    gpus = page.locator('#fields input[data-path="workloads[0].gpus"]')
    gpus.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.wait_for_selector('#fields input[data-path="workloads[0].gpus"][aria-invalid="true"]', timeout=5000)
    assert "YAML" in page.inner_text("#fields .field-msg") and "err" in page.get_attribute("#status", "class")
    page.keyboard.type("4")  # the value it had: the mark goes, the result is the current one again
    page.wait_for_selector("#status.ok", timeout=15000)
    assert gpus.get_attribute("aria-invalid") is None and page.locator("#fields .field-msg").count() == 0
    assert not errors, errors
    ctx.close()
