"""What a page must show before the server changes state or starts expensive work (issue 28.3).

A GET never changes state: any page the user visits elsewhere can make the browser send one
(an `<img src=…>`), so recording a lab run and switching generation on are POSTs, accepted only

- with this server's token (a random value made at start, written into its own forms: another
  origin cannot read the page, so it cannot know it), and
- when the browser says where the request came from, only from this server's own origin
  (`Origin` equal to `http://HOST`, or `null`, as the app's no-referrer policy makes a browser
  send it, with `Sec-Fetch-Site: same-origin`; `Sec-Fetch-Site` same-origin or none);

A GET that would start expensive work (generated-words retrievers switched on by a link's
settings, a lab evaluation of settings other than the index's own) needs the same token in its
query (`Forms.needs_token`): the page's own GET forms carry it, a cross-site link cannot
(issue 51.3). A GET with the index's own settings starts that work at most once per generation
and process (it is kept).

At most `PER_MINUTE` such POSTs are taken from one client address in any 60 s (429 with
Retry-After beyond). Generation runs in its own queue (`GenerationQueue`): one answer written at
a time and `WAITING` more queued; beyond that 503 with Retry-After, so the page workers stay free
and the other pages fast.
"""

from __future__ import annotations

import hmac
import multiprocessing
import secrets
import threading
import time
from collections import deque
from urllib.parse import parse_qsl
from typing import Any, Callable

import anyio
import anyio.to_thread
from starlette.requests import Request

from glassrag.web.catalog import BadRequest

PER_MINUTE = 30  # state-changing POSTs per client address per 60 s: a person clicks far fewer
WAITING = 2  # generation requests queued behind the one running


class Refused(BadRequest):
    """A POST without this server's token or from another origin."""

    status = 403


class TooMany(BadRequest):
    """More requests than the bound; `retry_after` seconds until one is taken again."""

    status = 429

    def __init__(self, problem: str, hint: str, retry_after: int) -> None:
        super().__init__(problem, hint)
        self.retry_after = retry_after


class Busy(TooMany):
    status = 503


class Forms:
    """The server's token and the per-client bound on state-changing POSTs."""

    def __init__(self, per_minute: int | None = None) -> None:
        self.token = secrets.token_urlsafe(32)
        self.per_minute = per_minute or PER_MINUTE
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def check(self, request: Request, form: dict[str, str]) -> None:
        """Refused unless the POST carries the token and comes from this origin; TooMany when the
        client has sent `per_minute` of them in the last 60 s."""
        origin = request.headers.get("origin")
        own = f"{request.url.scheme}://{request.headers.get('host', '')}"
        if origin == "null":  # what a browser sends under this app's Referrer-Policy: no-referrer
            if request.headers.get("sec-fetch-site") != "same-origin":
                raise Refused("a POST of unknown origin is refused", "use the form on this server's own page")
        elif origin is not None and origin != own:
            raise Refused(f"a POST from {origin[:80]!r} is refused: this server takes them from {own} only",
                          "use the form on this server's own page")
        if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            raise Refused("a POST from another site is refused", "use the form on this server's own page")
        if not hmac.compare_digest(form.get("token", ""), self.token):
            raise Refused("this form has no valid token of this server (it was made by another page, "
                          "or by this server before it restarted)", "reload the page and submit its form again")
        client = request.client.host if request.client else ""
        now = time.monotonic()
        with self._lock:
            times = self._seen.setdefault(client, deque())
            while times and now - times[0] >= 60:
                times.popleft()
            if len(times) >= self.per_minute:
                raise TooMany(f"{self.per_minute} runs in the last minute from {client or 'this client'}",
                              "wait a little and submit again", int(60 - (now - times[0])) + 1)
            times.append(now)


    def needs_token(self, params: dict[str, str], what: str, hint: str) -> None:
        """Refused unless the GET's query carries this server's token (`what` would start)."""
        if not hmac.compare_digest(params.get("token", ""), self.token):
            raise Refused(f"a link (GET) does not start {what}", hint)


class GenerationQueue:
    """One generation at a time in its own thread, `waiting` more in line, the rest Busy. The
    count and the turn are shared with the processes forked from this one (serve --workers),
    so the bound holds for the server as a whole, not per process."""

    def __init__(self, waiting: int = WAITING, retry_after: int = 10) -> None:
        self.waiting, self.retry_after = waiting, retry_after
        self._in = multiprocessing.Value("i", 0)  # requests running or waiting, in every process
        self._turn = multiprocessing.Lock()  # held while an answer is written, in any process
        self._limiter: anyio.CapacityLimiter | None = None  # one thread of this process waits for the turn

    async def run(self, work: Callable[[], Any]) -> Any:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(1)
        with self._in.get_lock():
            if self._in.value > self.waiting:
                raise Busy(f"the generator is busy ({self._in.value} answers running or waiting)",
                           f"try again in {self.retry_after} s; the other pages answer meanwhile",
                           self.retry_after)
            self._in.value += 1
        try:
            return await anyio.to_thread.run_sync(self._in_turn, work, limiter=self._limiter)
        finally:
            with self._in.get_lock():
                self._in.value -= 1

    def _in_turn(self, work: Callable[[], Any]) -> Any:
        with self._turn:
            return work()


MAX_FORM_BYTES = 64 * 1024  # a 4,000-character question and its settings, percent-encoded, fit


async def form_of(request: Request) -> dict[str, str]:
    """The POSTed form's fields (application/x-www-form-urlencoded, the last value of each; no
    multipart parser is needed for the app's own forms), at most MAX_FORM_BYTES."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise BadRequest(f"a form POST must be application/x-www-form-urlencoded, not {kind[:60] or 'nothing'}",
                         "submit the page's own form")
    body = b""
    async for part in request.stream():
        body += part
        if len(body) > MAX_FORM_BYTES:
            raise BadRequest(f"the form is more than {MAX_FORM_BYTES:,} bytes", "ask a shorter question")
    return dict(parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True))
