"""The web app: `create_app(indexes)` builds it, `serve(indexes, host, port)` runs it.

Every page is server-rendered HTML with a JSON twin (the same path with `.json`) that
holds exactly the data the page draws. Security: binds 127.0.0.1 unless told otherwise;
answers only to loopback host names then (a DNS-rebinding guard); a Content-Security-Policy
that allows nothing but the app's own origin and no inline script or style; every text
escaped by the templates; files are reached only through names looked up in listings. The
guard against foreign hosts and the security headers are in guard.py.
"""

from __future__ import annotations

import os
import json
import logging
import math
import socket
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable
from urllib.parse import quote, urlencode

import anyio
import anyio.to_thread
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from glassrag import __version__
from glassrag.errors import ConfigError, GenerationError, GlassragError, QueryError, StoreError
from glassrag.lab import EXHIBITS
from glassrag.web.analytics import AnalyticsView
from glassrag.web.ask import AskView
from glassrag.web.catalog import BadRequest, Catalog, NotFound, Source
from glassrag.web.documents import document_view, documents_view
from glassrag.web.forms import Forms, GenerationQueue, form_of
from glassrag.web.glossary import anchor, entries
from glassrag.web.guard import LOOPBACK_NAMES, Guard, is_loopback

HERE = Path(__file__).parent
log = logging.getLogger("glassrag.web")


# rendering -------------------------------------------------------------------------------------

def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become null (they are not JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def json_response(data: Any, status: int = 200) -> Response:
    body = json.dumps(_clean(data), ensure_ascii=False, indent=1, default=str)
    return Response(body, status_code=status, media_type="application/json")


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(["html", "svg"]),
                      trim_blocks=True, lstrip_blocks=True)

    def term(name: str, text: str | None = None) -> Markup:
        return Markup('<a class="term" href="/glossary#{}">{}</a>').format(anchor(name), text or name)

    def num(value: Any, digits: int = 3) -> str:
        if value is None:
            return "—"
        if isinstance(value, float):
            return f"{value:.{digits}f}" if abs(value) < 1e4 else f"{value:.4g}"
        return str(value)

    def sig(value: Any, digits: int = 4) -> str:
        return "—" if value is None else f"{value:.{digits}g}"

    env.globals.update(term=term, num=num, sig=sig, version=__version__, urlencode=urlencode)
    env.filters["basename"] = lambda path: Path(str(path or "")).name
    return env


class Pages:
    """The route handlers; each builds a view's data and renders it as HTML or JSON."""

    def __init__(self, catalog: Catalog, log: Path | None = None, forms: Forms | None = None,
                 generator: str | None = None) -> None:
        self.catalog = catalog
        self.log = log  # the experiment log the development page shows
        self.env = _environment()
        self.forms = forms or Forms()  # its token goes into the forms that POST
        self.generator = generator  # serve --generator: the only backend URL the server calls

    def html(self, template: str, data: dict[str, Any], request: Request, page: str, twin: str,
             status: int = 200) -> HTMLResponse:
        names = self.catalog.names
        current = data.get("index") or names[0]
        context = {**data, "data": data, "page": page, "twin": twin, "indexes": names, "current": current,
                   "here": str(request.url.path), "picker": picker_path(page, str(request.url.path)),
                   "query": dict(request.query_params), "token": self.forms.token}
        return HTMLResponse(self.env.get_template(template).render(context), status_code=status)

    def source(self, request: Request) -> Source:
        return self.catalog.get(request.query_params.get("index"))

    # pages ---------------------------------------------------------------------------------

    def home(self, request: Request, as_json: bool) -> Response:
        """/ and /.json: every index served, its headline run's figures read now, its stages."""
        from glassrag.web.home import home_view

        data = home_view(self.catalog, self.source(request).name)
        if as_json:
            return json_response(data)
        return self.html("home.html", data, request, "home", "/.json?" + urlencode(dict(request.query_params)))

    def ask(self, request: Request, as_json: bool, posted: dict[str, str] | None = None) -> Response:
        """GET: the answer without generation (a link cannot switch it on); `posted`: the fields of
        the page's Generate form (a POST with the server's token), run in the generation queue."""
        params = dict(request.query_params) if posted is None else posted
        if posted is None and params.get("generate.enabled", "").strip().lower() in ("true", "on", "yes", "1"):
            raise BadRequest("generation is not switched on by a link (GET)",
                             "use the page's 'Write an answer with the model' button (a POST)")
        params = {**params, "generate.enabled": "true" if posted is not None else "false"}
        data = AskView(self.catalog.get(params.get("index")), params, self.generator).data()
        if as_json:
            return json_response(data)
        shown = {k: v for k, v in params.items() if k != "generate.enabled"}
        return self.html("ask.html", data, request, "ask", "/ask.json?" + urlencode(shown))

    def analytics(self, request: Request, as_json: bool) -> Response:
        source = self.source(request)
        data = AnalyticsView(source, request.query_params.get("run")).data()
        if as_json:
            return json_response(data)
        return self.html("analytics.html", data, request, "analytics",
                         "/analytics.json?" + urlencode(dict(request.query_params)))

    def run(self, request: Request, as_json: bool) -> Response:
        source = self.source(request)
        name = request.path_params["name"]
        if as_json:
            run = source.run(name)  # the file itself, byte for byte: what every number came from
            return Response(run.path.read_bytes(), media_type="application/json")
        data = {**AnalyticsView(source, name, only=name).data(), "single": True, "run_name": name}
        return self.html("analytics.html", data, request, "analytics", f"/runs/{name}.json?index={source.name}")

    def documents(self, request: Request, as_json: bool) -> Response:
        source = self.source(request)
        data = documents_view(source.index(), source.name)
        if as_json:
            return json_response(data)
        return self.html("documents.html", data, request, "documents", f"/documents.json?index={source.name}")

    def document(self, request: Request, as_json: bool) -> Response:
        source = self.source(request)
        doc_id = request.path_params["doc_id"]
        data = document_view(source.index(), source.name, doc_id)
        if as_json:
            return json_response(data)
        twin = f"/documents/{quote(doc_id)}.json?" + urlencode({"index": source.name})
        return self.html("document.html", data, request, "documents", twin)

    def glossary(self, request: Request, as_json: bool) -> Response:
        data = {"index": self.source(request).name, "terms": entries()}
        if as_json:
            return json_response(data)
        return self.html("glossary.html", data, request, "glossary", "/glossary.json")

    def development(self, request: Request, as_json: bool) -> Response:
        from glassrag.web.development import development_view

        data = {"index": self.source(request).name,
                **development_view(self.log, request.query_params.get("metric"))}
        if as_json:
            return json_response(data)
        return self.html("development.html", data, request, "development",
                         "/development.json?" + urlencode(dict(request.query_params)))

    def experiment_run(self, request: Request, as_json: bool) -> Response:
        """A run file behind an experiment's evidence, byte for byte."""
        from glassrag.experiment import work_folder

        name, file = request.path_params["name"], request.path_params["file"] + ".json"
        if self.log is None or "/" in name or "/" in file or name.startswith(".") or file.startswith("."):
            raise NotFound(f"no experiment run {name}/{file}", "the development page links the runs there are")
        path = work_folder(self.log) / "runs" / name / file
        if not path.is_file():
            raise NotFound(f"no experiment run {name}/{file} on this machine",
                             f"glassrag experiment run {name} writes it")
        return Response(path.read_bytes(), media_type="application/json")

    def lab(self, request: Request, as_json: bool) -> Response:
        """/lab (the exhibits) and /lab/NAME (one exhibit), each with its .json twin."""
        from glassrag.web.lab import exhibit_data, overview

        source = self.source(request)
        params = dict(request.query_params)
        name = request.url.path.removesuffix(".json").rsplit("/", 1)[-1]
        if name == "losses" and any(k in params for k in ("token", "record")):
            raise BadRequest("a lab run is recorded only by the page's form (a POST), not by a link",
                             "use the 'Run the test split' button")
        data = overview(source) if name == "lab" else exhibit_data(source, name, params)
        if as_json:
            return json_response(data)
        path = "/lab" if name == "lab" else f"/lab/{name}"
        return self.html(f"lab/{'index' if name == 'lab' else name}.html", data, request, "lab",
                         f"{path}.json?" + urlencode(params))

    def record_losses(self, request: Request, as_json: bool, posted: dict[str, str]) -> Response:
        """POST /lab/losses: the run of the form's settings, kept among the user's runs, then the
        page of those settings (303: reloading it does not record again)."""
        from glassrag.web.lab import exhibit_data

        data = exhibit_data(self.catalog.get(posted.get("index")), "losses", posted, record=True)
        if as_json:
            return json_response(data)
        return RedirectResponse("/lab/losses?" + urlencode(posted), status_code=303)

    def extra(self, request: Request, as_json: bool) -> Response:
        source = self.source(request)
        return json_response({"index": source.name, "generation": source.generation,
                              "extra": source.index().extra})


def picker_path(page: str, path: str) -> str:
    """Where the header's index picker leads from this page: the same page for another index,
    or, where the page names something of one index (a document, a run) or is an error, the
    page that lists them, so the picker never leads to a 404."""
    if page == "error":
        return "/"
    if path.startswith("/documents/"):
        return "/documents"
    if path.startswith("/runs/"):
        return "/analytics"
    return path


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
    if isinstance(e, (StoreError, GenerationError)):  # the index or the generator is not there
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
               log: Path | None = None, generator: str | None = None) -> Starlette:
    """The app over these index folders (StoreError when one is not an index).

    `allowed_hosts`: the Host names it answers to; None answers to any (for a server bound
    to another address on purpose). `log`: the experiment log folder the development page shows.
    `generator`: the generation backend the user named (serve --generator); an index's is never used."""
    pages = Pages(Catalog(list(indexes)), log, Forms(), generator)  # folders, or postgresql:// URLs (kept as text)
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
        *both("/ask", pages.ask, {"index", "q", "run"}, settings_too=True),
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
        *[r for name, e in EXHIBITS.items() for r in both(f"/lab/{name}", pages.lab, {"index", *e.params})],
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found})
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
          generator: str | None = None) -> int:
    """Runs the app until interrupted; prints its URL. Another host than loopback is
    allowed, with a loud warning: the pages show every indexed document to anyone who
    can reach the address."""
    import uvicorn

    local = is_loopback(host)
    app = create_app(indexes, allowed_hosts=(*LOOPBACK_NAMES, host) if local else None, log=log,
                     generator=generator)
    check_port(host, port)
    if not local:
        bar = "!" * 78
        print(f"{bar}\nWARNING: glassrag serve is listening on {host}, not on this machine only.\n"
              f"Anyone who can reach {host}:{port} can read every indexed document and ask questions.\n"
              f"There is no login. Use the default --host 127.0.0.1 unless you mean this.\n{bar}",
              file=sys.stderr, flush=True)
    shown = f"[{host}]" if ":" in host else host
    names = ", ".join(app.state.catalog.names)
    print(f"glassrag serve: http://{shown}:{port}/  (index: {names}; Ctrl-C stops it)", flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False)
    return 0
