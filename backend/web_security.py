"""Browser defences for every response and every state-changing request (a part of the app's one pure-ASGI
middleware, `backend/asgi.py`; no request bodies read).

Headers. Every HTTP response, SPA or API, carries a Content-Security-Policy that lets the page load
scripts, styles, fonts and data only from its own origin (`default-src 'self'`), images from itself or
`data:`, no plugins, no `<base>`, and no framing; plus `X-Content-Type-Options: nosniff` and a
`Referrer-Policy`. The built frontend has no inline `<script>` or `<style>`; React's `style={...}` props
set CSSOM properties, which CSP does not govern. FastAPI's `/docs` and `/redoc` pages need an inline
script and a CDN, so they get only the framing, plugin and `<base>` rules.

Cross-site requests. The session cookie is SameSite=Lax, which still lets another site's page drive a
top-level POST in some browsers and says nothing about sibling sub-domains. So a POST, PUT, PATCH or
DELETE is refused (403, the app's `{error, detail}` body) when its `Origin` names another host than the
one it was sent to, is `null`, or, when a browser sent no `Origin`, its `Sec-Fetch-Site` is `cross-site`.
Requests with neither header (scripts, curl, the test client) are not from a browser page and pass: the
cookie is what a forged request would borrow, and only browsers attach it on another site's behalf.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from starlette.types import Scope, Send

CONTENT_SECURITY_POLICY = ("default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
                           "img-src 'self' data:; form-action 'self'")
DOCS_POLICY = "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
DOCS_PATHS = ("/docs", "/redoc")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


def headers_for(path: str) -> list[tuple[bytes, bytes]]:
    policy = DOCS_POLICY if path.startswith(DOCS_PATHS) else CONTENT_SECURITY_POLICY
    return [(b"content-security-policy", policy.encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"same-origin")]


def _authority(netloc: str) -> str:
    """host[:port], lower-cased, without a default port (a proxy may spell `Host: app.example:443`)."""
    netloc = netloc.strip().lower()
    for default in (":80", ":443"):
        if netloc.endswith(default):
            return netloc[: -len(default)]
    return netloc


def cross_site_reason(method: str, headers: dict[bytes, bytes]) -> str | None:
    """Why a request must be refused as cross-site, or None. `headers` are the raw ASGI ones, lower-cased."""
    if method.upper() in SAFE_METHODS:
        return None
    origin = headers.get(b"origin")
    if origin is not None:
        value = origin.decode("latin-1").strip()
        if value.lower() == "null":
            return "a page with an opaque origin"
        host = _authority(headers.get(b"host", b"").decode("latin-1"))
        try:
            origin_host = _authority(urlsplit(value).netloc)
        except ValueError:
            origin_host = ""
        if not host or origin_host != host:
            return f"the page at {value[:100]}"
        return None
    if headers.get(b"sec-fetch-site", b"").strip().lower() == b"cross-site":
        return "another site"
    return None


def forbidden_body(scope: Scope) -> bytes | None:
    """The 403 body of a request refused as cross-site, or None when it may pass."""
    headers = {name.lower(): value for name, value in scope.get("headers", [])}
    reason = cross_site_reason(scope.get("method", "GET"), headers)
    if reason is None:
        return None
    return json.dumps({"error": "forbidden",
                       "detail": f"Refused a {scope.get('method')} request sent from {reason}."}).encode()


async def refuse(send: Send, body: bytes) -> None:
    await send({"type": "http.response.start", "status": 403,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def with_headers(headers: list[tuple[bytes, bytes]], extra: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """A response's headers and those of `headers_for` it does not set itself."""
    names = {name.lower() for name, _ in headers}
    return [*headers, *((name, value) for name, value in extra if name not in names)]
