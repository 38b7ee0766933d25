"""What stands between the network and the app's pages: loopback-only host names (a
DNS-rebinding guard), a bound on query strings, and the security headers on every response,
static files and errors included (a Content-Security-Policy that allows nothing but the app's
own origin and no inline script or style)."""

from __future__ import annotations

import ipaddress
from typing import Iterable

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
MAX_QUERY_BYTES = 16 * 1024  # a 4,000-character question, percent-encoded, fits
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


class Guard:
    """ASGI middleware: refuses foreign Host headers and oversized query strings, and adds
    the security headers to every response."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] | None) -> None:
        self.app = app
        self.allowed = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        problem = self._problem(scope)
        if problem is not None:
            status, text = problem
            response = Response(text + "\n", status_code=status, media_type="text/plain; charset=utf-8")
            await response(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)

    def _problem(self, scope: Scope) -> tuple[int, str] | None:
        if len(scope.get("query_string", b"")) > MAX_QUERY_BYTES:
            return 414, (f"the query string is {len(scope['query_string']):,} bytes; the limit is "
                         f"{MAX_QUERY_BYTES:,}. Ask a shorter question (at most 4,000 characters).")
        if self.allowed is not None:
            host = host_name(dict(scope.get("headers", [])).get(b"host", b"").decode("latin-1"))
            if host not in self.allowed:
                return 421, (f"this glassrag server answers to {', '.join(sorted(self.allowed))} only, "
                             f"not {host or '(no Host header)'!r}; open it as http://127.0.0.1:PORT/")
        return None


def host_name(header: str) -> str:
    """The host of a Host header without its port: `[::1]:8765` → `::1`."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
