"""The server's edge: what every request passes before a route sees it (one ASGI middleware).

In order:
1. **Host**: the `Host` header must name this server (loopback names by default, with or without a port;
   `--allowed-host` adds names). Otherwise 400: a DNS-rebinding page reaches the server under its own name.
2. **Login link**: `GET /login?code=C` with the one-time code the server printed at start sets the session
   cookie (HttpOnly, SameSite=Strict, Secure over HTTPS) and sends the browser to the page; a used or wrong
   code is 403.
3. **Token**: with a token (`--token`, `GPUPLAN_TOKEN`), every request carries it: `Authorization: Bearer
   TOKEN`, or the session cookie. Otherwise 401.
4. **Cross-site writes**: a request other than GET/HEAD/OPTIONS whose `Origin` is not this server's own
   (scheme aside: the host and port the request was sent to), or whose `Sec-Fetch-Site` is neither
   `same-origin` nor `none`, is refused with 403. Requests without those headers (curl, scripts, load
   tools) pass; every browser sends them on a cross-site POST.
5. **Body**: over `max_body_bytes` is 413 (by Content-Length, or while it streams); a body that does not
   arrive within `body_timeout_s` is 408 and the connection closes (a client dribbling a byte a second
   holds nothing for long). A client that leaves mid-upload is one log line.
6. **Errors**: an exception no handler mapped (a bug of ours) is a 500 "internal error" and one log line
   (`gpuplan.web.errors`).
7. **Headers** on every answer: `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`,
   `X-Frame-Options: DENY`, and a `Content-Security-Policy` that allows nothing (the page sets its own;
   FastAPI's `/docs` and `/redoc` keep theirs: they load Swagger UI and ReDoc).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.requests import ClientDisconnect

from gpuplan.web.errors import internal

log = logging.getLogger("gpuplan.web")

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
COOKIE = "gpuplan_session"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
NO_CSP = b"default-src 'none'; frame-ancestors 'none'; base-uri 'none'"
OWN_POLICY = frozenset({"/docs", "/redoc", "/docs/oauth2-redirect"})  # FastAPI's API pages load their scripts
_HEADERS = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
            (b"x-frame-options", b"DENY")]


def host_name(value: str) -> str:
    """The name part of a Host header or an Origin's netloc, lower case: `[::1]:8000` -> `::1`,
    `Example.org:80` -> `example.org`."""
    v = value.strip().lower()
    if v.startswith("["):
        return v[1:v.find("]")] if "]" in v else v
    return v.rsplit(":", 1)[0] if v.count(":") == 1 else v


def session_value(token: str) -> str:
    """The cookie's value: derived from the token (HMAC-SHA256), so the cookie is not the token itself."""
    return hmac.new(token.encode(), b"gpuplan-session/1", hashlib.sha256).hexdigest()


@dataclass
class EdgeSettings:
    """What the edge checks. `token` None: no authentication (loopback, or `--insecure-no-auth`)."""

    allowed_hosts: tuple[str, ...] = LOOPBACK_NAMES
    token: str | None = None
    login_code: str | None = None
    login_mark: str | None = None  # a file created when the code is used (one use across --workers processes)
    max_body_bytes: int = 20 * 1024 * 1024
    body_timeout_s: float = 60.0
    _used: bool = field(default=False, repr=False)

    def host_allowed(self, host: str) -> bool:
        return host_name(host) in self.allowed_hosts

    def authorized(self, headers: dict[bytes, bytes]) -> bool:
        if self.token is None:
            return True
        auth = headers.get(b"authorization", b"").decode("latin-1")
        if auth[:7].lower() == "bearer " and hmac.compare_digest(auth[7:].strip().encode(), self.token.encode()):
            return True
        want = session_value(self.token)
        for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
            k, _, v = part.strip().partition("=")
            if k == COOKIE and hmac.compare_digest(v.encode(), want.encode()):
                return True
        return False

    def use_login_code(self, code: str) -> bool:
        """Whether `code` is the login code and not used before (then it is used up)."""
        if self.login_code is None or not hmac.compare_digest(code.encode(), self.login_code.encode()):
            return False
        if self.login_mark is not None:
            try:
                os.close(os.open(self.login_mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except OSError:
                return False
            return True
        if self._used:
            return False
        self._used = True
        return True


def cross_site(method: str, headers: dict[bytes, bytes]) -> str | None:
    """Why a request is a cross-site write (None: it is not): a write whose Origin names another host and
    port than the one it was sent to, or whose Sec-Fetch-Site is not same-origin or none."""
    if method in SAFE_METHODS:
        return None
    site = headers.get(b"sec-fetch-site")
    if site is not None and site not in (b"same-origin", b"none"):
        return f"Sec-Fetch-Site: {site.decode('latin-1')}"
    origin = headers.get(b"origin")
    if origin is not None:
        netloc = urlsplit(origin.decode("latin-1")).netloc.lower()
        host = headers.get(b"host", b"").decode("latin-1").strip().lower()
        if not netloc or netloc != host:
            return f"Origin: {origin.decode('latin-1')[:100]}"
    return None


class BodyTooLarge(Exception):
    pass


class BodyTimeout(Exception):
    pass


def _body(status: int, error: str, message: str, hint: str | None = None) -> bytes:
    return json.dumps({"error": error, "message": message, "file": None, "line": None, "field": None,
                       "hint": hint}).encode()


async def _answer(send: Any, status: int, body: bytes, headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *_HEADERS, (b"content-security-policy", NO_CSP), *headers]})
    await send({"type": "http.response.body", "body": body})


class Edge:
    """ASGI middleware: the checks of this module's docstring, in that order."""

    def __init__(self, app: Any, settings: EdgeSettings) -> None:
        self.app = app
        self.s = settings

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await _answer(send, *refusal)
            return
        if scope["path"] == "/login" and scope["method"] in ("GET", "HEAD"):
            await self._login(scope, send)
            return
        await self._serve(scope, receive, send, headers)

    def _refusal(self, scope: Any, headers: dict[bytes, bytes]) -> tuple[int, bytes] | None:
        s = self.s
        host = headers.get(b"host", b"").decode("latin-1")
        if not s.host_allowed(host):
            return 400, _body(400, "host", f"this server does not answer to the name {host[:100]!r}",
                              "open it under an allowed name, or start it with --allowed-host NAME.")
        if scope["path"] != "/login" and not s.authorized(headers):
            return 401, _body(401, "auth", "this server needs its token",
                              "send Authorization: Bearer TOKEN, or open the login link the server printed.")
        why = cross_site(scope["method"], headers)
        if why is not None:
            return 403, _body(403, "cross-site", f"a write from another site is refused ({why})",
                              "use the server's own page, or send the request without a browser.")
        return None

    async def _login(self, scope: Any, send: Any) -> None:
        code = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("code", [""])[0]
        if self.s.token is None or not self.s.use_login_code(code):
            await _answer(send, 403, _body(403, "auth", "this login link is not valid (each link works once)",
                                           "restart the server for a new link, or send the token as a header."))
            return
        cookie = f"{COOKIE}={session_value(self.s.token)}; Path=/; HttpOnly; SameSite=Strict"
        if scope.get("scheme") == "https":
            cookie += "; Secure"
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", b"/"), (b"set-cookie", cookie.encode()), (b"content-length", b"0"),
                                (b"cache-control", b"no-store"), *_HEADERS]})
        await send({"type": "http.response.body", "body": b""})

    async def _serve(self, scope: Any, receive: Any, send: Any, headers: dict[bytes, bytes]) -> None:
        limit = self.s.max_body_bytes
        declared = headers.get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await _answer(send, 413, _body(413, "too-large", f"the request body is over {limit / 1e6:g} MB",
                                           "send a smaller file, or start the server with a larger --max-body-mb."))
            return
        seen = 0
        started = False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.s.body_timeout_s

        complete = False

        async def receive_bounded() -> Any:
            nonlocal seen, complete
            if complete:  # the body is in: what follows is the wait for a disconnect, unbounded
                return await receive()
            try:
                async with asyncio.timeout_at(deadline):  # a timer, not a task per receive (as wait_for makes)
                    msg = await receive()
            except TimeoutError:
                raise BodyTimeout() from None
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge()
                complete = not msg.get("more_body", False)
            return msg

        async def send_marked(msg: Any) -> None:
            nonlocal started
            if msg["type"] == "http.response.start":
                started = True
                hs = list(msg.get("headers", []))
                names = {k.lower() for k, _ in hs}
                hs += [h for h in _HEADERS if h[0] not in names]
                if b"content-security-policy" not in names and scope["path"] not in OWN_POLICY:
                    hs.append((b"content-security-policy", NO_CSP))
                msg = {**msg, "headers": hs}
            await send(msg)

        where = f"{scope['method']} {scope['path']}"
        try:
            await self.app(scope, receive_bounded, send_marked)
        except BodyTooLarge:
            if not started:
                await _answer(send, 413, _body(413, "too-large", f"the request body is over {limit / 1e6:g} MB",
                                               "send a smaller file, or start the server with a larger "
                                               "--max-body-mb."), [(b"connection", b"close")])
        except BodyTimeout:
            log.warning("%s: the body did not arrive within %g s; closing", where, self.s.body_timeout_s)
            if not started:
                await _answer(send, 408, _body(408, "timeout", f"the request body did not arrive within "
                                               f"{self.s.body_timeout_s:g} s", "send the body at once."),
                              [(b"connection", b"close")])
        except ClientDisconnect:
            log.warning("%s: the client left before its request was read", where)
        except Exception as exc:
            body = internal(where, exc)
            if not started:
                await _answer(send, 500, body)
