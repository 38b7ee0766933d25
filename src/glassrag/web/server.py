"""The web app: `create_app(indexes)` builds it, `serve(indexes, host, port)` runs it: the routes,
each page's handler (pages.py) wrapped to check its parameters, run in a bounded pool of workers
and turn errors into a 4xx page or JSON.

Every page is server-rendered HTML with a JSON twin (the same path with `.json`) that
holds exactly the data the page draws. Security: binds 127.0.0.1 unless told otherwise;
answers only to loopback host names then (a DNS-rebinding guard); a Content-Security-Policy
that allows nothing but the app's own origin and no inline script or style; every text
escaped by the templates; files are reached only through names looked up in listings. The
guard against foreign hosts and the security headers are in guard.py. `serve(processes=N)`
(`glassrag serve --workers N`) runs the app in N processes (prefork.py).
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Iterable

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from glassrag import threads
from glassrag.errors import ConfigError, GenerationError, GlassragError, QueryError, ShardError, StoreError
from glassrag.lab import EXHIBITS
from glassrag.web import forms as forms_module
from glassrag.web import prefork
from glassrag.web.catalog import BadRequest, Catalog, NotFound
from glassrag.web.forms import Forms, GenerationQueue, form_of
from glassrag.web.guard import LOOPBACK_NAMES, Guard, is_loopback
from glassrag.web.pages import Pages, json_response

HERE = Path(__file__).parent
log = logging.getLogger("glassrag.web")


Handler = Callable[[Request, bool], Response]


class Workers:
    """The bounded pool page work runs in, off the event loop: at most `WORKERS` pages are
    built at once (the pipeline is CPU work under one GIL; more threads only interleave it),
    the others wait their turn in order while the loop keeps accepting requests."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._limiter: anyio.CapacityLimiter | None = None

    async def run(self, handler: Callable[..., Response], *args: Any) -> Response:
        if self._limiter is None:  # made inside the running event loop
            self._limiter = anyio.CapacityLimiter(self.size)
        return await anyio.to_thread.run_sync(handler, *args, limiter=self._limiter)


WORKERS = max(2, min(4, os.cpu_count() or 2))
# processes of `glassrag serve` (--workers): one per core, at most 2, as measured in
# bench/results/load_workers.md (200 concurrent asks on 2 cores: 2 processes finish in 0.5-0.7x
# the time of 1, 3 no sooner than 2, and one socket shared by 2 no sooner than 1 process, so 1
# where workers cannot have a socket each)
PROCESSES = max(1, min(2, os.cpu_count() or 1)) if prefork.SPREAD else 1


def _endpoint(pages: Pages, handler: Handler, allowed: set[str], settings_too: bool = False,
              suffix_from: str | None = None,
              workers: Workers | None = None) -> Callable[[Request], Awaitable[Response]]:
    """Wraps a handler: checks the query parameters, runs it in the bounded worker pool (the
    pipeline is CPU work), and turns errors into a 4xx page or JSON with the problem and the hint."""

    async def endpoint(request: Request) -> Response:
        as_json = request.url.path.endswith(".json")
        if suffix_from and as_json:  # /runs/NAME.json, /documents/ID.json: the name without .json
            request.path_params[suffix_from] = request.path_params[suffix_from][: -len(".json")]
        try:
            _check_params(request, allowed, settings_too)
            if workers is not None:
                return await workers.run(handler, request, as_json)
            return await run_in_threadpool(handler, request, as_json)
        except Exception as e:
            return _failed(pages, request, as_json, e)

    return endpoint


def _post(pages: Pages, allowed: set[str], settings_too: bool,
          run: Callable[[Request, bool, dict[str, str]], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """A POST endpoint (glassrag/web/forms.py): the form's fields checked like a query string,
    the token, origin and per-client bound checked, then `run(request, as_json, fields)`."""

    async def endpoint(request: Request) -> Response:
        as_json = request.url.path.endswith(".json")
        try:
            posted = await form_of(request)
            pages.forms.check(request, posted)
            posted.pop("token", None)
            _check_keys(posted, allowed, settings_too)
            return await run(request, as_json, posted)
        except Exception as e:
            return _failed(pages, request, as_json, e)

    return endpoint


def _failed(pages: Pages, request: Request, as_json: bool, e: Exception) -> Response:
    """An error as a 4xx/5xx page or JSON with the problem and the hint (Retry-After when it says)."""
    if not isinstance(e, GlassragError):  # a bug: logged with its traceback, the page shows no internals
        log.error("error while serving %s", request.url.path, exc_info=e)
        return pages_error(pages, request, as_json, 500, "internal error while building this page",
                           "the server's log has the details")
    response = pages_error(pages, request, as_json, _status(e), e.problem, e.hint)
    if getattr(e, "retry_after", None):
        response.headers["Retry-After"] = str(e.retry_after)  # type: ignore[attr-defined]
    return response


def _status(e: GlassragError) -> int:
    if isinstance(e, (NotFound, BadRequest)):
        return e.status
    if isinstance(e, (ConfigError, QueryError)):
        return 400
    if isinstance(e, (StoreError, GenerationError, ShardError)):  # the index, the generator or a shard is not there
        return 503
    return 400


def _check_params(request: Request, allowed: set[str], settings_too: bool) -> None:
    _check_keys([k for k, _ in request.query_params.multi_items()], allowed, settings_too)


def _check_keys(keys: Iterable[str], allowed: set[str], settings_too: bool) -> None:
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            raise BadRequest(f"parameter {key!r} is given twice", "give each parameter once")
        seen.add(key)
        if key not in allowed and not (settings_too and "." in key):
            raise BadRequest(f"unknown parameter {key[:60]!r}", f"this page takes: {', '.join(sorted(allowed))}"
                             + (" and settings such as bm25.k1" if settings_too else ""))


def pages_error(pages: Pages, request: Request, as_json: bool, status: int, problem: str,
                hint: str = "") -> Response:
    if as_json:
        return json_response({"error": problem, "hint": hint, "status": status}, status)
    data = {"status": status, "problem": problem, "hint": hint, "index": None}
    return pages.html("error.html", data, request, "error", "", status=status)


def create_app(indexes: list[Path], allowed_hosts: Iterable[str] | None = LOOPBACK_NAMES,
               log: Path | None = None, generator: str | None = None, processes: int = 1,
               warm: bool = False, pending: Iterable[Path] = ()) -> Starlette:
    """The app over these index folders (StoreError when one is not an index).

    `allowed_hosts`: the Host names it answers to; None answers to any (for a server bound
    to another address on purpose). `log`: the experiment log folder the development page shows.
    `generator`: the generation backend the user named (serve --generator); an index's is never used.
    `processes`: how many processes will serve this app (forked from it): each takes its share
    of a client's state-changing POSTs a minute, so together they take no more than one.
    `warm`: each process loads every index's default pipeline and the models it reads when it
    starts, before it takes a request (`Catalog.warm`), instead of on the first question.
    `pending`: index folders still being built, each served once built (`Catalog`)."""
    forms = Forms(max(1, forms_module.PER_MINUTE // processes))
    # folders, or postgresql:// URLs (kept as text)
    pages = Pages(Catalog(list(indexes), tuple(pending)), log, forms, generator)
    workers = Workers(WORKERS)
    generation = GenerationQueue()

    async def generate(request: Request, as_json: bool, posted: dict[str, str]) -> Response:
        return await generation.run(lambda: pages.ask(request, as_json, posted))

    async def record(request: Request, as_json: bool, posted: dict[str, str]) -> Response:
        return await workers.run(pages.record_losses, request, as_json, posted)

    def posts(path: str, allowed: set[str], settings_too: bool, run: Any) -> list[Route]:
        endpoint = _post(pages, allowed, settings_too, run)
        return [Route(path, endpoint, methods=["POST"]), Route(path + ".json", endpoint, methods=["POST"])]

    def both(path: str, handler: Handler, allowed: set[str], settings_too: bool = False) -> list[Route]:
        endpoint = _endpoint(pages, handler, allowed, settings_too, workers=workers)
        return [Route(path, endpoint), Route(path + ".json", endpoint)]

    async def not_found(request: Request, exc: Exception) -> Response:
        as_json = request.url.path.endswith(".json")
        status = getattr(exc, "status_code", 404)
        problem = f"no page at {request.url.path}" if status == 404 else f"{request.method} is not allowed here"
        return pages_error(pages, request, as_json, status, problem,
                           "the pages are / (the corpora served), /ask, /analytics, /documents, /lab, "
                           "/glossary and /development (each also as .json; / as /.json)")

    routes = [
        Route("/", _endpoint(pages, pages.home, {"index"}, workers=workers)),
        Route("/.json", _endpoint(pages, pages.home, {"index"}, workers=workers)),
        # token: a GET of the page's own forms may start the expensive work a link may not (forms.py)
        *both("/ask", pages.ask, {"index", "q", "run", "token"}, settings_too=True),
        *posts("/ask", {"index", "q", "run"}, True, generate),
        *posts("/lab/losses", {"index", *EXHIBITS["losses"].params}, False, record),
        *both("/analytics", pages.analytics, {"index", "run"}),
        Route("/runs/{name}", _endpoint(pages, pages.run, {"index"}, suffix_from="name")),
        *both("/documents", pages.documents, {"index"}),
        Route("/documents/{doc_id:path}", _endpoint(pages, pages.document, {"index"}, suffix_from="doc_id")),
        *both("/glossary", pages.glossary, {"index"}),
        *both("/development", pages.development, {"index", "metric"}),
        Route("/development/runs/{name}/{file}", _endpoint(pages, pages.experiment_run, {"index"},
                                                           suffix_from="file")),
        Route("/extra.json", _endpoint(pages, pages.extra, {"index"})),
        *both("/lab", pages.lab, {"index"}),
        *[r for name, e in EXHIBITS.items()
          for r in both(f"/lab/{name}", pages.lab, {"index", "token", *e.params})],
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if warm:  # in each worker, after the fork: an ONNX Runtime session is not shared across one
            await anyio.to_thread.run_sync(pages.catalog.warm)
        yield

    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found}, lifespan=lifespan)
    app.add_middleware(Guard, allowed_hosts=allowed_hosts)  # type: ignore[arg-type]
    app.state.catalog = pages.catalog
    app.state.workers = workers
    return app


def check_port(host: str, port: int) -> None:
    """ConfigError with advice when the address cannot be bound (port in use, no such address)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as e:
            raise ConfigError(f"cannot listen on {host}:{port} ({e.strerror})",
                              "choose another port with --port, or stop what is using it") from None


def serve(indexes: list[Path], host: str = "127.0.0.1", port: int = 8765, log: Path | None = None,
          generator: str | None = None, processes: int = PROCESSES, build: Iterable[str] = ()) -> int:
    """Runs the app until interrupted, in `processes` processes (--workers); prints its URL.
    Another host than loopback is allowed, with a loud warning: the pages show every indexed
    document to anyone who can reach the address. `build`: prepared corpora built meanwhile
    (web/builds.py), each served once built."""
    from glassrag.web import builds

    if processes < 1:
        raise ConfigError(f"--workers {processes} is not a number of processes", "give 1 or more, e.g. --workers 2")
    chosen = builds.corpora(list(build))
    threads.serving()  # before any model loads: the workers inherit it
    local = is_loopback(host)
    app = create_app(indexes, allowed_hosts=(*LOOPBACK_NAMES, host) if local else None, log=log,
                     generator=generator, processes=processes, warm=True,
                     pending=[c.default_index() for c in chosen])
    check_port(host, port)
    builder = None
    if chosen:
        builder = builds.start(chosen)
        print(f"glassrag serve: building {', '.join(c.name for c in chosen)} in the background, one after "
              f"another (glassrag corpus build; its output goes to {builds.LOG}); each corpus is served "
              "once built: reload the front page", flush=True)
    try:
        return _run(app, host, port, processes, local)
    finally:
        builds.stop(builder)


def _run(app: Starlette, host: str, port: int, processes: int, local: bool) -> int:
    if processes > 1:  # each index folder read once, here: a broken one stops the server; the workers share it
        for source in app.state.catalog.sources.values():
            if source.folder is not None:  # not a PostgreSQL connection: a forked worker must open its own
                source.live()
    if not local:
        bar = "!" * 78
        print(f"{bar}\nWARNING: glassrag serve is listening on {host}, not on this machine only.\n"
              f"Anyone who can reach {host}:{port} can read every indexed document and ask questions.\n"
              f"There is no login. Use the default --host 127.0.0.1 unless you mean this.\n{bar}",
              file=sys.stderr, flush=True)
    shown = f"[{host}]" if ":" in host else host
    names = ", ".join(app.state.catalog.names)
    workers = f"{processes} worker processes; " if processes > 1 else ""
    print(f"glassrag serve: http://{shown}:{port}/  (index: {names}; {workers}Ctrl-C stops it)", flush=True)
    if processes > 1:
        return prefork.run(app, host, port, processes)
    prefork.server(app, host=host, port=port).run()
    return 0
