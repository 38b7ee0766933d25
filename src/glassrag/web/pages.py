"""The pages: each handler builds its view's data and renders it as HTML or as its JSON twin
(the same data); the Jinja2 environment and its helpers, and where the index picker leads.
server.py routes requests to them."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from glassrag import __version__
from glassrag.retrieve.generated import generates
from glassrag.web.analytics import AnalyticsView
from glassrag.web.ask import AskView
from glassrag.web.catalog import BadRequest, Catalog, NotFound, Source
from glassrag.web.documents import document_view, documents_view
from glassrag.web.encode import encode
from glassrag.web.forms import Forms
from glassrag.web.glossary import anchor, entries

HERE = Path(__file__).parent


# rendering -------------------------------------------------------------------------------------

def json_response(data: Any, status: int = 200) -> Response:
    return Response(encode(data), status_code=status, media_type="application/json")


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
        view = AskView(self.catalog.get(params.get("index")), params, self.generator)
        if posted is None and view.chosen and generates(view.config):
            self.forms.needs_token(params, "the generated-words retrievers with settings of its own",
                                   "change the settings with the page's own settings form")
        if as_json:  # the twin as it was kept: no parse, no second encoding
            return Response(view.body(), media_type="application/json")
        data = view.data()
        shown = {k: v for k, v in params.items() if k != "generate.enabled"}
        return self.html("ask.html", data, request, "ask", "/ask.json?" + urlencode(shown))

    def analytics(self, request: Request, as_json: bool) -> Response:
        source = self.source(request)
        data = AnalyticsView(source, request.query_params.get("run"), backend=self.generator).data()
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
        data = {**AnalyticsView(source, name, only=name, backend=self.generator).data(), "single": True,
                "run_name": name}
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
        from glassrag.lab import EXHIBITS
        from glassrag.web.lab import changes_costly, exhibit_data, overview

        source = self.source(request)
        params = dict(request.query_params)
        name = request.url.path.removesuffix(".json").rsplit("/", 1)[-1]
        if name == "losses" and "record" in params:
            raise BadRequest("a lab run is recorded only by the page's form (a POST), not by a link",
                             "use the 'Run the test split' button")
        if name != "lab" and changes_costly(source, name, params):  # one rule for every exhibit
            self.forms.needs_token(params, f"an evaluation of {EXHIBITS[name].evaluates} with settings of its own",
                                   "change the settings with the exhibit's own form" if name != "losses"
                                   else "use the page's 'Run the test split' button")
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
        # the page of these settings, with the token a GET of other settings than the index's needs
        return RedirectResponse("/lab/losses?" + urlencode({**posted, "token": self.forms.token}), status_code=303)

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
