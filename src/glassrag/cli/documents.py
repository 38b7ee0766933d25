"""`glassrag documents`: what a golden set's labels may name. Every document of an index with
its id, title, format and extraction quality, and with `--sections` (or given ids) each
section's locator, as `answers[].doc` and `answers[].locator` must spell them."""

from __future__ import annotations

import argparse
import json
from typing import Any

from glassrag.cli.common import INDEX_HELP, Table, Text, out
from glassrag.errors import visible


def add_parser(sub: Any) -> None:
    p = sub.add_parser("documents", help="list an index's document ids, titles, locators and extraction quality")
    p.add_argument("ids", nargs="*", metavar="ID", help="only these documents, with their sections")
    p.add_argument("--index", "--store", dest="index", required=True, help=INDEX_HELP)
    p.add_argument("--sections", action="store_true", help="list every document's section locators too")
    p.add_argument("--json", action="store_true", help="print the listing as JSON")
    p.set_defaults(run=cmd_documents)


def document_listing(documents: dict[str, Any], quality: dict[str, Any], ids: list[str],
                     sections: bool) -> list[dict[str, Any]]:
    """One row a document (all, or `ids` in their order): id, title, format, quality verdict
    and reasons, and with `sections` (always for given ids) the locators in document order,
    each once (a locator several sections share is one label). ConfigError, with the
    closest ids, for an unknown id."""
    from glassrag.errors import ConfigError
    from glassrag.evaluate.golden import did_you_mean

    for i in ids:
        if i not in documents:
            raise ConfigError(f"the index has no document {i!r}{did_you_mean(i, documents)}",
                                "glassrag documents --index DIR lists the ids")
    rows = []
    for doc_id in ids or sorted(documents):
        doc, q = documents[doc_id], quality.get(doc_id) or {}
        row = {"id": doc_id, "title": doc.title, "format": doc.format, "quality": q.get("verdict", ""),
               "reasons": list(q.get("reasons", ())), "sections": len(doc.sections)}
        if sections or ids:
            row["locators"] = list(dict.fromkeys(s.locator for s in doc.sections))
        rows.append(row)
    return rows


def cmd_documents(args: argparse.Namespace) -> int:
    from glassrag.store import open_store

    index = open_store(args.index).read()
    rows = document_listing(index.documents, index.extra.get("quality", {}), list(args.ids), args.sections)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    # ids, titles and locators come from the documents: an escape sequence in them is shown as
    # text (\x1b), never sent to the terminal (issue 51.13)
    table = Table(title=visible(f"{args.index}: {len(index.documents)} documents"), box=None)
    for column in ("id", "title", "format", "sections", "quality"):
        table.add_column(column, justify="right" if column == "sections" else "left")
    for r in rows:
        verdict = r["quality"] + (f": {'; '.join(r['reasons'])}" if r["reasons"] else "")
        table.add_row(*(Text(visible(str(r[c]))) for c in ("id", "title", "format", "sections")),
                      Text(visible(verdict)))
    out.print(table)
    for r in rows:
        if "locators" in r:
            out.print(Text("\n" + visible(r["id"]), style="bold"))
            for locator in r["locators"]:
                out.print(f"  {visible(locator)}", markup=False)
    return 0
