"""A hostile page on another origin, in a real Chromium, tries to store quotes in `gpuplan serve` (issue 27):
a JSON POST sent as `text/plain` (no preflight), a multipart import, and a classic text/plain form posted
into a frame. The requests reach the server (the fetches resolve) and nothing is stored; the server's own
page, on its own origin, still stores the same quote."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_server import CHROMIUM, CHROMIUM_ARGS, free_port, gpuplan_serve

if CHROMIUM is None:
    pytest.skip("chromium is not installed (Debian package `chromium`; CI installs it)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")

QUOTE = {"provider": "evil-idc", "gpu": "ascend-910b", "mode": "bare-metal", "term": "6mo", "price": 1,
         "per": "gpu-day", "currency": "CNY", "date": "2026-06-01", "note": "poisoned"}
CSV = ("provider,gpu,mode,term,price,per,currency,date,note\n"
       "evil-idc,ascend-910b,bare-metal,6mo,1,gpu-day,CNY,2026-06-01,poisoned\n")

ATTACK = """<!doctype html><html><body>
<iframe name="sink"></iframe>
<form id="f" method="POST" enctype="text/plain" action="TARGET/api/quotes" target="sink">
  <input name='{"provider":"evil-form","gpu":"ascend-910b","mode":"bare-metal","price":1,"per":"gpu-day",
"currency":"CNY","date":"2026-06-01","note":"' value='"}'>
</form>
<script>
window.attack = (async () => {
  const out = {};
  try {
    await fetch("TARGET/api/quotes", {method: "POST", mode: "no-cors",
      headers: {"Content-Type": "text/plain; charset=json"}, body: JSON.stringify(QUOTE)});
    out.json = "answered";
  } catch (e) { out.json = String(e); }
  const fd = new FormData();
  fd.append("file", new Blob([CSV], {type: "text/csv"}), "quotes.csv");
  try {
    await fetch("TARGET/api/quotes/import", {method: "POST", mode: "no-cors", body: fd});
    out.multipart = "answered";
  } catch (e) { out.multipart = String(e); }
  document.getElementById("f").submit();
  return out;
})();
</script></body></html>"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("cross-site") / "quotes.sqlite"
    with gpuplan_serve(env={"GPUPLAN_DB": f"sqlite:///{db}"}) as base:
        yield base


@pytest.fixture(scope="module")
def attacker(server: str) -> Iterator[str]:
    """The hostile page, served from `localhost` on another port: another site than 127.0.0.1."""
    page = (ATTACK.replace("TARGET", server).replace("QUOTE", json.dumps(QUOTE))
            .replace("CSV", json.dumps(CSV))).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *_a: Any) -> None:
            pass

    port = free_port()
    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://localhost:{port}/"
    httpd.shutdown()


def _stored(server: str) -> list[dict[str, Any]]:
    r = httpx.get(server + "/api/quotes", timeout=10)
    assert r.status_code == 200
    return list(r.json())


def test_a_page_on_another_origin_stores_nothing(server: str, attacker: str, tmp_path: Path) -> None:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = b.new_page()
            refused: list[int] = []
            page.on("response", lambda r: refused.append(r.status) if "/api/quotes" in r.url else None)
            page.goto(attacker)
            out = page.evaluate("() => window.attack")
            # both fetches reached the server and were answered (an opaque answer: the browser hid it)
            assert out == {"json": "answered", "multipart": "answered"}, out
            page.wait_for_timeout(1000)  # the form post into the frame
            assert refused and all(s == 403 for s in refused), refused
            assert _stored(server) == []

            # the server's own page, on its origin, stores the same quote as JSON
            page.goto(server + "/")
            status = page.evaluate("""async (q) => (await fetch("/api/quotes", {method: "POST",
                headers: {"Content-Type": "application/json"}, body: JSON.stringify(q)})).status""", QUOTE)
            assert status == 201
            assert [q["provider"] for q in _stored(server)] == ["evil-idc"]
        finally:
            b.close()
