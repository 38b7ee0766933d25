"""Query-string settings: `?bm25.k1=1.2&role.lsa=fused&gate.enabled=false` to a Config.

Every query-time setting of `Config` can be given as `section.name`; a retriever's role
(fused, observed, off) as `role.NAME`, which sets `retrieve.retrievers` and
`retrieve.observe`. Values are parsed and checked by the setting's one definition in
`glassrag.config` (type, range, choices), as TOML files and command-line flags are, so a
malformed value gets a 400 that names the setting and what it takes. Settings whose
definition says they need a re-ingest (chunking, analysis, the LSA model, which embedders
exist) are refused. The retrievers an index offers are those of its table that say they can
run on it (glassrag/retrieve/__init__.py `offered`: LSA when it has an LSA model, pg-* only in
PostgreSQL, a neural one per embedder whose vectors it holds and this install can run), each
labelled as its entry says (`Entry.title`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection, Mapping

from glassrag.config import SETTINGS as DEFINITIONS
from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.retrieve import offered
from glassrag.retrieve import retrievers as table_of
from glassrag.stage import Entry
from glassrag.store import Index
from glassrag.web.catalog import BadRequest

ROLES = ("fused", "observed", "off")
INDEX_TIME = tuple(name for name, s in DEFINITIONS.items() if s.reingest)
NOT_FROM_WEB = {"rerank.model": "a model path is read from disk: set it in the index's configuration "
                                "(glassrag ingest --config FILE)",
                "retrieve.retrievers": "use role.NAME=fused|observed|off",
                "retrieve.observe": "use role.NAME=fused|observed|off",
                "generate.backend": "the server does not call a URL a page (or an index folder) names: "
                                    "start it with glassrag serve --generator URL"}


@dataclass(frozen=True)
class Field:
    """One control of the settings form."""

    name: str
    label: str
    group: str


FORM = (
    Field("bm25.k1", "k1", "BM25"), Field("bm25.b", "b", "BM25"),
    Field("fuse.method", "method", "fusion"), Field("fuse.weight", "weight", "fusion"),
    Field("rerank.method", "method", "rerank"), Field("rerank.pool", "pool", "rerank"),
    Field("mmr.relevance", "MMR λ", "diversity"), Field("cap.per_document", "cap per doc", "diversity"),
    Field("gate.enabled", "gate", "answer"), Field("answer.k", "k", "answer"),
)
# switched on only by the ask page's Generate button (a POST, glassrag/web/forms.py): never part
# of a link, a GET form or a run's reproducing parameters
POST_ONLY = ("generate.enabled",)


SETTINGS = {name: (s.default, s.doc) for name, s in DEFINITIONS.items() if not s.reingest}
ROLE_DOC = ("fused: its list feeds the answer; observed: run, drawn and measured beside the "
            "others without changing the answer; off: not run")


def retrievers(index: Index, backend: str | None = None) -> dict[str, Entry]:
    """The retrievers this index can run, by name in the pipeline's order, with their entries
    (each asked), with the generator the server was started with (`backend`, serve --generator:
    an endpoint makes the generated-words retrievers available where the bundled model is not
    installed)."""
    entries = table_of(index)
    return {name: entries[name] for name in offered(index, with_backend(index.config, backend))}


def with_backend(config: Config, backend: str | None) -> Config:
    """`config` with the generator the user started the server with, when one was named."""
    return config.updated({"generate": {"backend": backend}}, "--generator", "flag") if backend else config


def names(available: Collection[str]) -> list[str]:
    return [f"role.{r}" for r in available] + [n for n in SETTINGS if n not in NOT_FROM_WEB]


def doc(name: str) -> str:
    return ROLE_DOC if name.startswith("role.") else SETTINGS[name][1]


def parse(params: Mapping[str, str], available: Collection[str]) -> dict[str, Any]:
    """The settings named in `params` (other keys are the caller's), typed and checked."""
    out: dict[str, Any] = {}
    for key, raw in params.items():
        if "." not in key:
            continue
        if key in INDEX_TIME:
            raise BadRequest(f"{key} is fixed when the index is built",
                             "re-ingest with the setting changed (glassrag ingest --config FILE)")
        if key in NOT_FROM_WEB:
            raise BadRequest(f"{key} cannot be set from the web page", NOT_FROM_WEB[key])
        if key.startswith("role."):
            if key[5:] not in available:
                raise BadRequest(f"this index has no retriever {key[5:]!r}",
                                 f"its retrievers: {', '.join(available)}")
            if raw.strip() not in ROLES:
                raise BadRequest(f"{key} = {raw[:40]!r} is not a role", f"choose one of: {', '.join(ROLES)}")
            out[key] = raw.strip()
            continue
        if key not in SETTINGS:
            raise BadRequest(f"unknown setting {key!r}", f"settings: {', '.join(names(available))}")
        out[key] = _value(key, raw.strip())
    return out


def _value(key: str, raw: str) -> Any:
    try:
        return DEFINITIONS[key].parse(raw, "the page's settings")
    except ConfigError as e:
        raise BadRequest(e.problem, e.hint) from None


def apply(base: Config, chosen: Mapping[str, Any], available: Collection[str]) -> Config:
    """`base` with the chosen settings; roles become retrieve.retrievers/observe."""
    merged: dict[str, dict[str, Any]] = {"retrieve": {}}  # only what the page changes: the other
    roles = roles_of(base, available)                      # settings keep their origin (index, file)
    for key, value in chosen.items():
        if key.startswith("role."):
            roles[key[5:]] = value
        else:
            section, name = key.split(".", 1)
            merged.setdefault(section, {})[name] = value
    order = list(dict.fromkeys([*base.retrieve.retrievers, *base.retrieve.observe, *available]))
    fused = [r for r in order if roles.get(r) == "fused"]
    if not fused:
        raise BadRequest("no retriever is fused: nothing would feed the answer",
                         "set at least one of " + ", ".join(f"role.{r}" for r in available) + " to fused")
    merged["retrieve"]["retrievers"] = fused
    merged["retrieve"]["observe"] = [r for r in order if roles.get(r) == "observed"]
    try:
        return base.updated(merged, "the page's settings", "flag")
    except ConfigError as e:
        raise BadRequest(e.problem, e.hint) from None


def roles_of(config: Config, available: Collection[str]) -> dict[str, str]:
    r = config.retrieve
    return {n: "fused" if n in r.retrievers else "observed" if n in r.observe else "off" for n in available}


def flat(config: Config, available: Collection[str]) -> dict[str, Any]:
    """Every web-settable setting of `config`, by its query-string name."""
    out: dict[str, Any] = {f"role.{n}": v for n, v in roles_of(config, available).items()}
    for name in SETTINGS:
        if name not in NOT_FROM_WEB and name not in POST_ONLY:
            out[name] = config.value(name)
    return out


def text(value: Any) -> str:
    """A setting's value as a query string or form field writes it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def changed(config: Config, base: Config, available: Collection[str]) -> dict[str, str]:
    """The settings of `config` that differ from `base`, as query-string parameters: what
    a link needs to reproduce `config` on an index whose own configuration is `base`."""
    now, was = flat(config, available), flat(base, available)
    return {k: text(v) for k, v in now.items() if v != was.get(k)}


def form(config: Config, base: Config, available: Mapping[str, Entry]) -> list[dict[str, Any]]:
    """The settings form: groups of fields with their value, the index's value and the doc."""
    now, was = flat(config, available), flat(base, available)
    groups: dict[str, list[dict[str, Any]]] = {}
    roles = [Field(f"role.{r}", entry.title(r), "retrievers") for r, entry in available.items()]
    for f in (*roles, *FORM):
        groups.setdefault(f.group, []).append({
            "name": f.name, "label": f.label, "value": text(now[f.name]),
            "index_value": text(was[f.name]), "changed": now[f.name] != was[f.name],
            "choices": list(ROLES if f.name.startswith("role.") else DEFINITIONS[f.name].choices() or (
                ("true", "false") if isinstance(now[f.name], bool) else ())),
            "doc": doc(f.name)})
    shown = {f.name for f in (*roles, *FORM)}
    hidden = [{"name": k, "value": v} for k, v in changed(config, base, available).items() if k not in shown]
    return [{"group": g, "fields": fs} for g, fs in groups.items()] + ([{"group": "", "hidden": hidden}]
                                                                       if hidden else [])
