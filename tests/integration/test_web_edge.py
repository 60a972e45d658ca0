"""The server's edge (issue 27): Host names, the token and the login link, cross-site writes, exact JSON
content types, the page's Content-Security-Policy, safe quote writes, slow and leaving clients, and
`gpuplan serve` refusing to expose itself without a token. FastAPI's TestClient on the real app (and a
real uvicorn server for the connection's own deadlines)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from live_server import free_port

from gpuplan.web import create_app

ROOT = Path(__file__).resolve().parents[2]
SEED_TEXT = (ROOT / "examples" / "seed-910b.yaml").read_text(encoding="utf-8")
QUOTE = {"provider": "idc-test", "gpu": "ascend-910b", "mode": "bare-metal", "term": "6mo", "price": 200,
         "per": "gpu-day", "currency": "CNY", "date": "2026-06-01", "note": "edge test"}
CSV = (b"provider,gpu,mode,term,price,per,currency,date,note\n"
       b"idc-test,ascend-910b,bare-metal,6mo,200,gpu-day,CNY,2026-06-01,csv\n")
LOCAL = "http://127.0.0.1"
TOKEN = "s3cret-token-0123456789"


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'quotes.sqlite'}"


@pytest.fixture
def client(db: str) -> Iterator[TestClient]:
    app = create_app(db=db)
    yield TestClient(base_url=LOCAL, app=app)
    app.state.shutdown()


def _stored(c: TestClient) -> int:
    r = c.get("/api/quotes")
    assert r.status_code == 200, r.text
    return len(r.json())


# --- Host ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:8000", "localhost", "LOCALHOST:9", "[::1]:8000", "::1"])
def test_loopback_names_are_allowed(client: TestClient, host: str) -> None:
    assert client.get("/api/health", headers={"host": host}).status_code == 200


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:8000", "127.0.0.1.attacker.example",
                                  "localhost.attacker.example:80", "", "10.0.0.5"])
def test_other_host_names_are_refused(client: TestClient, host: str) -> None:
    r = client.get("/api/health", headers={"host": host})
    assert r.status_code == 400 and r.json()["error"] == "host" and "--allowed-host" in r.json()["hint"]
    r = client.post("/api/quotes", json=QUOTE, headers={"host": host})
    assert r.status_code == 400
    assert _stored(client) == 0


def test_allowed_host_adds_a_name(db: str) -> None:
    c = TestClient(base_url="http://plan.example.org", app=create_app(db=db, allowed_hosts=["Plan.Example.org"]))
    assert c.get("/api/health").status_code == 200
    assert c.get("/api/health", headers={"host": "plan.example.org:443"}).status_code == 200
    assert c.get("/api/health", headers={"host": "other.example.org"}).status_code == 400


# --- token and login link ----------------------------------------------------------------------------


def test_with_a_token_every_request_carries_it(db: str) -> None:
    c = TestClient(base_url=LOCAL, app=create_app(db=db, token=TOKEN, login_code="code-1"))
    for path in ("/", "/api/health", "/api/quotes", "/openapi.json"):
        r = c.get(path)
        assert r.status_code == 401 and r.json()["error"] == "auth", path
    assert c.get("/api/health", headers={"authorization": "Bearer wrong-token-0123456789"}).status_code == 401
    assert c.get("/api/health", headers={"authorization": f"Basic {TOKEN}"}).status_code == 401
    assert c.post("/api/quotes", json=QUOTE).status_code == 401
    auth = {"authorization": f"Bearer {TOKEN}"}
    assert c.get("/api/health", headers=auth).status_code == 200
    assert c.post("/api/quotes", json=QUOTE, headers=auth).status_code == 201
    assert len(c.get("/api/quotes", headers=auth).json()) == 1


def test_the_login_link_works_once_and_sets_an_httponly_cookie(db: str) -> None:
    c = TestClient(base_url=LOCAL, app=create_app(db=db, token=TOKEN, login_code="one-time-code"))
    assert c.get("/login?code=wrong", follow_redirects=False).status_code == 403
    r = c.get("/login?code=one-time-code", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN not in cookie
    assert c.get("/api/health").status_code == 200  # the client keeps the cookie
    assert c.get("/").status_code == 200
    c2 = TestClient(base_url=LOCAL, app=c.app)
    assert c2.get("/login?code=one-time-code", follow_redirects=False).status_code == 403  # used up
    assert c2.get("/api/health").status_code == 401


def test_without_a_token_there_is_no_login(client: TestClient) -> None:
    assert client.get("/login?code=anything", follow_redirects=False).status_code == 403


# --- cross-site writes -----------------------------------------------------------------------------


@pytest.mark.parametrize("headers", [
    {"origin": "http://attacker.example"},
    {"origin": "http://127.0.0.1:9999"},  # another port is another origin
    {"origin": "null"},
    {"sec-fetch-site": "cross-site"},
    {"sec-fetch-site": "same-site"},
    {"origin": "http://127.0.0.1", "sec-fetch-site": "cross-site"},
])
def test_cross_site_writes_are_refused_and_store_nothing(client: TestClient, headers: dict[str, str]) -> None:
    r = client.post("/api/quotes", json=QUOTE, headers=headers)
    assert r.status_code == 403 and r.json()["error"] == "cross-site", r.text
    r = client.post("/api/quotes/import", files={"file": ("q.csv", CSV)}, headers=headers)
    assert r.status_code == 403
    assert _stored(client) == 0


@pytest.mark.parametrize("headers", [{}, {"origin": LOCAL}, {"sec-fetch-site": "same-origin"},
                                     {"origin": LOCAL, "sec-fetch-site": "same-origin"}, {"sec-fetch-site": "none"}])
def test_same_origin_and_plain_writes_pass(client: TestClient, headers: dict[str, str]) -> None:
    assert client.post("/api/quotes", json=QUOTE, headers=headers).status_code == 201
    assert client.post("/api/quotes/import", files={"file": ("q.csv", CSV)}, headers=headers).status_code == 201
    assert _stored(client) == 2


def test_reads_from_another_site_are_not_writes(client: TestClient) -> None:
    assert client.get("/api/quotes", headers={"origin": "http://attacker.example",
                                               "sec-fetch-site": "cross-site"}).status_code == 200


# --- content types ---------------------------------------------------------------------------------


@pytest.mark.parametrize("ctype", ["text/plain", "text/plain; charset=json", "application/x-www-form-urlencoded",
                                   "application/jsonp", "application/json-patch+json", None])
def test_json_endpoints_need_application_json_exactly(client: TestClient, ctype: str | None) -> None:
    import json

    body = json.dumps(QUOTE).encode()
    headers = {"content-type": ctype} if ctype else {}
    r = client.post("/api/quotes", content=body, headers=headers)
    assert r.status_code == 415 and "application/json" in r.json()["hint"], r.text
    r = client.post("/api/compare", content=json.dumps({"scenario": SEED_TEXT}).encode(), headers=headers)
    assert r.status_code == 415
    assert _stored(client) == 0


def test_json_with_a_charset_is_json(client: TestClient) -> None:
    import json

    r = client.post("/api/compare", content=json.dumps({"scenario": SEED_TEXT}).encode(),
                    headers={"content-type": "Application/JSON; charset=utf-8"})
    assert r.status_code == 200 and r.json()["schema"].startswith("gpuplan.compare")


def test_uploads_need_multipart(client: TestClient) -> None:
    r = client.post("/api/quotes/import", json={"file": CSV.decode()})
    assert r.status_code == 415
    r = client.post("/api/quotes", files={"file": ("q.json", b"{}")})
    assert r.status_code == 415
    assert _stored(client) == 0


# --- headers ---------------------------------------------------------------------------------------


def test_the_page_has_a_csp_that_allows_only_its_own_scripts(client: TestClient) -> None:
    r = client.get("/")
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp and "'unsafe-eval'" not in csp
    assert "connect-src 'self'" in csp and "base-uri 'none'" in csp
    script_src = next(d for d in csp.split(";") if d.strip().startswith("script-src"))
    assert "'unsafe-inline'" not in script_src
    scripts = re.findall(r"<script>(.*?)</script>", r.text, re.S)
    assert scripts
    for s in scripts:
        digest = base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in script_src
    assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-frame-options"] == "DENY"


def test_json_answers_allow_nothing(client: TestClient) -> None:
    r = client.get("/api/health")
    assert r.headers["content-security-policy"].startswith("default-src 'none'")
    assert r.headers["x-content-type-options"] == "nosniff"


# --- safe writes -----------------------------------------------------------------------------------


def test_a_retry_with_the_same_idempotency_key_stores_once(client: TestClient) -> None:
    first = client.post("/api/quotes", json=QUOTE, headers={"idempotency-key": "k-1"})
    again = client.post("/api/quotes", json=QUOTE, headers={"idempotency-key": "k-1"})
    assert first.status_code == again.status_code == 201 and first.json() == again.json()
    assert _stored(client) == 1
    assert client.post("/api/quotes", json=QUOTE, headers={"idempotency-key": "k-2"}).status_code == 201
    assert _stored(client) == 2


def test_a_write_that_times_out_stores_nothing(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The one engine thread is busy past the time limit: the quote add waiting for it answers 503 and is
    dropped, so nothing is stored later (a retrying client would otherwise store it twice)."""
    from gpuplan.web.routers import engines

    def slow(*_a: object) -> dict[str, object]:
        time.sleep(1.5)
        return {}

    monkeypatch.setattr(engines, "compare_json", slow)
    app = create_app(db=db, workers=1, timeout_s=0.5, inline_max_kb=0)

    async def both() -> tuple[httpx.Response, httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as c:
            busy = asyncio.create_task(c.post("/api/compare", json={"scenario": SEED_TEXT}))
            await asyncio.sleep(0.1)
            add = await c.post("/api/quotes", json=QUOTE)
            return await busy, add

    busy, add = asyncio.run(both())
    assert busy.status_code == 503
    assert add.status_code == 503 and "nothing was stored" in add.json()["message"], add.text
    time.sleep(1.5)
    c = TestClient(base_url=LOCAL, app=app)
    assert _stored(c) == 0
    app.state.shutdown()


# --- slow and leaving clients ------------------------------------------------------------------------


def test_a_client_leaving_mid_upload_is_one_log_line(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    app = client.app
    sent: list[dict[str, Any]] = []

    async def scenario() -> None:
        msgs = [{"type": "http.request", "body": b"--b\r\nContent-Disposition: form-data; name=\"file\"; "
                 b"filename=\"q.csv\"\r\n\r\nprovider,gpu", "more_body": True}, {"type": "http.disconnect"}]

        async def receive() -> dict[str, Any]:
            return msgs.pop(0) if msgs else {"type": "http.disconnect"}

        async def send(msg: dict[str, Any]) -> None:
            sent.append(msg)

        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                 "scheme": "http", "path": "/api/quotes/import", "raw_path": b"/api/quotes/import",
                 "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5), "server": ("127.0.0.1", 80),
                 "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"multipart/form-data; boundary=b"),
                             (b"content-length", b"5000")]}
        await app(scope, receive, send)

    with caplog.at_level("INFO"):
        asyncio.run(scenario())
    assert not any(m["type"] == "http.response.start" and m["status"] >= 500 for m in sent)
    mine = [r for r in caplog.records if r.name.startswith(("gpuplan", "uvicorn", "starlette"))]
    assert len(mine) == 1 and "left" in mine[0].getMessage() and mine[0].exc_info is None, mine
    assert not any(r.exc_info for r in caplog.records)


def test_a_body_that_does_not_arrive_is_408(db: str) -> None:
    app = create_app(db=db, body_timeout_s=0.3)
    sent: list[dict[str, Any]] = []

    async def scenario() -> None:
        first = [{"type": "http.request", "body": b'{"provider": ', "more_body": True}]

        async def receive() -> dict[str, Any]:
            if first:
                return first.pop(0)
            await asyncio.sleep(30)
            return {"type": "http.disconnect"}

        async def send(msg: dict[str, Any]) -> None:
            sent.append(msg)

        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                 "scheme": "http", "path": "/api/quotes", "raw_path": b"/api/quotes", "query_string": b"",
                 "root_path": "", "client": ("127.0.0.1", 5), "server": ("127.0.0.1", 80),
                 "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")]}
        await asyncio.wait_for(app(scope, receive, send), 5)

    asyncio.run(scenario())
    assert sent[0]["status"] == 408
    assert _stored(TestClient(base_url=LOCAL, app=app)) == 0


def test_slow_headers_and_idle_connections_are_closed(monkeypatch: pytest.MonkeyPatch, db: str) -> None:
    """A real uvicorn server with the serve command's protocol: a connection that sends part of its headers,
    or nothing at all, is closed at the header deadline; a complete request is answered."""
    import uvicorn

    from gpuplan.web import server

    monkeypatch.setattr(server, "HEADER_TIMEOUT_S", 0.5)
    port = free_port()
    cfg = uvicorn.Config(create_app(db=db), host="127.0.0.1", port=port, **server.options(8))
    srv = uvicorn.Server(cfg)
    th = threading.Thread(target=srv.run, daemon=True)
    th.start()
    try:
        for _ in range(100):
            if srv.started:
                break
            time.sleep(0.05)
        assert httpx.get(f"http://127.0.0.1:{port}/api/health").status_code == 200
        dribble, idle = socket.create_connection(("127.0.0.1", port)), socket.create_connection(("127.0.0.1", port))
        dribble.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        t0 = time.monotonic()
        for s in (dribble, idle):
            s.settimeout(5)
            assert s.recv(1024) == b""  # closed by the server
            s.close()
        assert time.monotonic() - t0 < 3
    finally:
        srv.should_exit = True
        th.join(10)


# --- gpuplan serve ---------------------------------------------------------------------------------


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("gpuplan")
    return subprocess.run([str(exe), "serve", "--port", str(free_port()), *args], capture_output=True, text=True,
                          timeout=60, check=False, env={"PATH": "/usr/bin:/bin", "HOME": str(ROOT)})


@pytest.mark.parametrize("args", [("--host", "0.0.0.0"), ("--host", "192.0.2.1"), ("--host", "::"),
                                  ("--host", "0.0.0.0", "--token", "short")])
def test_serve_refuses_to_expose_itself_without_a_token(args: tuple[str, ...]) -> None:
    p = _serve(*args)
    assert p.returncode == 2, p.stderr
    assert "token" in p.stderr.lower() and "Traceback" not in p.stderr


def test_the_api_docs_pages_keep_their_scripts(client: TestClient) -> None:
    for path in ("/docs", "/redoc"):
        r = client.get(path)
        assert r.status_code == 200 and "content-security-policy" not in r.headers, path
        assert r.headers["x-frame-options"] == "DENY"


def test_a_retry_waiting_on_a_write_that_fails_gets_an_answer(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails with a bug: the request is a 500, and a retry with the same key that was waiting
    on it is answered 500 too (not left waiting)."""
    import gpuplan.api as api_mod

    def broken(*_a: object, **_k: object) -> int:
        time.sleep(0.3)
        raise RuntimeError("the store broke")

    monkeypatch.setattr(api_mod, "quotes_add", broken)
    app = create_app(db=db)

    async def both() -> tuple[httpx.Response, httpx.Response]:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as c:
            first = asyncio.create_task(c.post("/api/quotes", json=QUOTE, headers={"idempotency-key": "k"}))
            await asyncio.sleep(0.1)
            retry = await asyncio.wait_for(c.post("/api/quotes", json=QUOTE, headers={"idempotency-key": "k"}), 10)
            return await first, retry

    first, retry = asyncio.run(both())
    assert first.status_code == retry.status_code == 500
    assert retry.json()["error"] == "internal" and "broke" not in retry.text
    app.state.shutdown()
