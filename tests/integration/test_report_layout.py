"""Phone and desk layouts of the reports (issue 29), in a real headless Chromium (Debian's).

At 390x844 and 1366x900, the decision pack, the compare, plan and commit reports and the web page (its
compare view) never scroll the page
sideways (a wide table scrolls in its own box, its first column pinned), and at 390 px no visible chart
text is under 11 px tall (charts are redrawn for the width, not scaled down), and no two texts of a
chart overlap (also on the portfolio example in Chinese). At 1366 px the compare
table of the seed example shows every column without scrolling. Screenshots go to `$GPUPLAN_ARTIFACTS`
when set. Skips when Chromium or Playwright is missing.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_server import CHROMIUM, CHROMIUM_ARGS, artifacts_dir, gpuplan_serve

from gpuplan.cli import main

if CHROMIUM is None:
    pytest.skip("chromium is not installed (Debian package `chromium`; CI installs it)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "seed-hybrid.yaml")
TELEMETRY = str(ROOT / "tests" / "fixtures" / "telemetry" / "llm-job-monitor.csv")
SIZES = ((390, 844), (1366, 900))

MEASURE = """() => {
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const texts = [...document.querySelectorAll('svg text')].filter(shown);
  const heights = texts.map(e => e.getBoundingClientRect().height);
  const boxes = [...document.querySelectorAll('#compare .table-wrap, .report-compare .table-wrap')]
    .filter(e => e.querySelector('table.options') && e.scrollWidth > e.clientWidth + 1).length;
  const overlaps = [];  // two texts of one chart drawn over each other (more than a pixel across, 3 down)
  for (const svg of document.querySelectorAll('svg')) {
    const ts = [...svg.querySelectorAll('text')].filter(shown).map(e => [e.textContent, e.getBoundingClientRect()]);
    for (let i = 0; i < ts.length; i++) for (let j = i + 1; j < ts.length; j++) {
      const a = ts[i][1], b = ts[j][1];
      const ox = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const oy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (ox > 1 && oy > 3) overlaps.push([svg.getAttribute('aria-label'), ts[i][0], ts[j][0]]);
    }
  }
  return {scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, overlaps,
          texts: texts.length, smallest: Math.min(...heights),
          small: texts.filter(e => e.getBoundingClientRect().height < 11).slice(0, 5).map(e => e.textContent),
          compareScrolls: boxes};
}"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("layout")
    out = {k: d / f"{k}.html" for k in ("pack", "pack-zh", "pack-portfolio", "compare", "plan", "commit")}
    # the reports print the scenario's path: a long one (as a CI checkout's) must not widen a phone's page
    deep = d / "a-checkout-path-as-long-as-continuous-integration-machines-give" / "examples"
    deep.mkdir(parents=True)
    seed = str(shutil.copy(SEED, deep / "seed-hybrid.yaml"))
    assert main(["report", seed, "--paths", "500", "--audit", TELEMETRY, "--html", str(out["pack"])]) == 0
    assert main(["report", seed, "--paths", "500", "--lang", "zh", "--html", str(out["pack-zh"])]) == 0
    assert main(["report", str(ROOT / "examples" / "portfolio.yaml"), "--paths", "300", "--lang", "zh", "--html",
                 str(out["pack-portfolio"])]) == 0
    assert main(["compare", seed, "--html", str(out["compare"])]) == 0
    assert main(["plan", seed, "--html", str(out["plan"])]) == 0
    assert main(["commit", seed, "--paths", "500", "--html", str(out["commit"]), "-o", "json"]) == 0
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.mark.parametrize("kind", ["pack", "pack-zh", "pack-portfolio", "compare", "plan", "commit"])
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_fits_the_screen_and_chart_text_is_readable(reports: dict[str, Path], browser, kind: str,  # type: ignore[no-untyped-def]
                                                    width: int, height: int,
                                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(reports[kind].as_uri())
    m = page.evaluate(MEASURE)
    page.screenshot(path=str(artifacts_dir(tmp_path_factory) / f"{kind}-{width}.png"), full_page=True)
    page.close()
    assert m["scrollWidth"] <= m["innerWidth"], m
    assert m["texts"] > 0
    assert m["overlaps"] == [], m["overlaps"]  # labels never overlap
    if width == 390:
        assert m["smallest"] >= 11, m
    else:
        assert m["compareScrolls"] == 0, m  # every compare column in view at 1366 (issue 29)


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_web_page_fits_too(browser, width: int, height: int,  # type: ignore[no-untyped-def]
                               tmp_path_factory: pytest.TempPathFactory) -> None:
    with gpuplan_serve() as base:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(base + "/")
        page.wait_for_selector("#result [data-verdict]")
        m = page.evaluate(MEASURE)
        page.screenshot(path=str(artifacts_dir(tmp_path_factory) / f"page-{width}.png"))
        page.close()
    assert m["scrollWidth"] <= m["innerWidth"], m
    assert m["texts"] > 0 and (width != 390 or m["smallest"] >= 11), m
