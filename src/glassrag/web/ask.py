"""The ask page as data: the answer (excerpt with its answer words marked, citation, score
and what the score is), what else was found, the reader's quote, the route drawn from the
trace, BM25's per-term contributions, and, when the question is in the index's golden set,
its labels and where its answer was lost, now and in a saved run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlencode

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.evaluate.diagnose import loss_cause
from glassrag.evaluate.golden import Question, normalize_space
from glassrag.evaluate.relevance import visible
from glassrag.evaluate.records import generation_record
from glassrag.gate.score import score_name
from glassrag.pipeline import Pipeline, auto_reranker, entry_of, retrievers
from glassrag.schema import Answer, Kind, Passage, StageTrace
from glassrag.stage import Entry, own_score
from glassrag.web import settings
from glassrag.web.catalog import Source
from glassrag.web.glossary import CAUSES
from glassrag.web.encode import encode
from glassrag.web.route import add_terms, drawn_in, layout

# terms BM25's per-term explanation lists for a chunk; the rest are summed in one row. A
# 4,000-character question of repeated identifiers made a 1.05 MB answer page (609 KB of
# per-term rows, issue 13.6); a table wider than this is not read anyway
MAX_EXPLAINED_TERMS = 24
TRIES = 6  # questions to try on the page before a question, one of each kind
LEXICAL = ("bm25", "ray-bm25")  # the BM25 retriever's names: in process, on a sharded index's shards
TERM_ROWS = 10  # rows of the BM25 term table: bm25's top chunks
EXPLAINED_RANKS = 30  # a route's bm25 node gets its per-term line down to this rank


def ask_link(index: str, question: str, run: str | None = None,
             chosen: Mapping[str, str] | None = None) -> str:
    params = {"index": index, "q": question, **({"run": run} if run else {}), **(chosen or {})}
    return "/ask?" + urlencode(params)


def segments(text: str, highlights: Any) -> list[dict[str, Any]]:
    """The text cut into plain and marked stretches ([start, end) offsets, merged, clipped)."""
    spans: list[list[int]] = []
    for a, b in sorted((max(0, int(a)), min(len(text), int(b))) for a, b in highlights):
        if a >= b:
            continue
        if spans and a <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], b)
        else:
            spans.append([a, b])
    out, at = [], 0
    for a, b in spans:
        if a > at:
            out.append({"text": text[at:a], "mark": False})
        out.append({"text": text[a:b], "mark": True})
        at = b
    if at < len(text):
        out.append({"text": text[at:], "mark": False})
    return out


def scoring_stage(answer: Answer) -> StageTrace | None:
    """The stage whose scores the shown passages carry (later stages reorder, not rescore)."""
    return next((t for t in reversed(answer.trace) if Kind(t.kind).scores), None)


def explain_score(stage: StageTrace | None, offered: Mapping[str, Entry]) -> dict[str, str]:
    """What a passage's score is and what it is not, in one line, with the glossary term: the
    table entry that made the stage says (glassrag/stage.py `Entry.describe_score`; a
    retriever's among `offered`, the index's: glassrag/retrieve/__init__.py `retrievers`)."""
    if stage is None:
        return {"stage": "", "term": "", "text": "No stage scored these passages."}
    entry = entry_of(stage.name, stage.kind, stage.params, offered)
    term, text = (entry.describe_score if entry else own_score)(stage.name, stage.params)
    return {"stage": stage.name, "term": term, "text": text}


def stage_term(stage: StageTrace, offered: Mapping[str, Entry]) -> str:
    """The glossary term that explains a stage, or '': an observed retriever's role, else what
    the table entry that made it declares (glassrag/stage.py `Entry.glossary`; a retriever's
    among `offered`, the index's), as the front page reads it."""
    if stage.kind == "observe":
        return "observed retriever"
    entry = entry_of(stage.name, stage.kind, stage.params, offered)
    return entry.glossary(stage.name, stage.params) if entry else ""


class AskView:
    """Builds the ask page's data for one index and one request."""

    def __init__(self, source: Source, params: Mapping[str, str], backend: str | None = None) -> None:
        self.source = source
        self.live = source.live()  # CURRENT read once a request; the source's parts asked for this generation
        self.index, self.generation, self._label = self.live.index, self.live.generation, self.live.label
        self.available = settings.retrievers(self.index, backend)
        self.chosen = settings.parse(params, self.available)
        self.base = self.index.config
        # the generator the user started the server with (serve --generator)
        self.config = settings.with_backend(settings.apply(self.base, self.chosen, self.available), backend)
        self.question = (params.get("q") or "").strip()
        self.run_name = (params.get("run") or "").strip() or None

    def body(self) -> bytes:
        """The JSON twin: computed on the first ask of this question with these settings on this
        generation of the index, kept (glassrag/web/cache.py) and served as it is after that; a
        saved run's part (`run=`) is read anew each time, as its file can change."""
        if self.run_name:
            return encode(self.data())
        return self._kept()

    def data(self) -> dict[str, Any]:
        """What the page draws: its JSON twin, parsed (so the page shows exactly what the twin says)."""
        out = json.loads(self._kept())
        if self.run_name:
            out["run"] = self._run()
        return out

    def _kept(self) -> bytes:
        """The twin without a run's part, from the cache, or computed and kept; a generated answer
        (a POST) is never kept: each press of the button asks the model again."""
        key = self.config.key()
        if self.config.generate.enabled:
            return self._twin(key)
        body = self.source.answers.get(self.generation, key, self.question)
        if body is None:
            body = self._twin(key)
            self.source.answers.put(self.generation, key, self.question, body)
        return body

    def _twin(self, key: str) -> bytes:
        """The twin as bytes: the frame (encoded once per generation and settings `key`) and this
        question's part, joined into one JSON object."""
        frame = self.source.answers.frame(self.generation, key)
        if frame is None:
            frame = encode(self._frame())[1:-1]
            self.source.answers.keep_frame(self.generation, key, frame)
        asked = encode(self._asked())[1:-1]
        return b"{" + frame + (b"," if frame and asked else b"") + asked + b"}"

    def compute(self) -> dict[str, Any]:
        """The page's data, computed (without a saved run's part)."""
        return {**self._frame(), **self._asked()}

    def _frame(self) -> dict[str, Any]:
        """What the page shows whatever the question under these settings: the index, the settings
        form and the example questions (a fifth of a demo twin's bytes, issue 30)."""
        golden = self.source.golden(self.live)
        return {"index": self.source.name,
                "settings": {"changed": settings.changed(self.config, self.base, self.available),
                             "form": settings.form(self.config, self.base, self.available),
                             "config": self.config.to_dict()},
                "examples": _examples(golden.questions) if golden else [],
                "golden_file": str(golden.path) if golden else None}

    def _asked(self) -> dict[str, Any]:
        """What the page shows of this question: the answer, its route and explanations."""
        golden = self.source.golden(self.live)
        out: dict[str, Any] = {"question": self.question, "answer": None, "run": None, "golden": None}
        if not self.question:
            out["start"] = self._start(_examples(golden.questions) if golden else [])
            return out
        pipeline = self.source.pipeline(self.config, self.live)
        answer = pipeline.run(self.question)
        labelled = golden.find(self.question) if golden else None
        relevant: set[str] = set()
        if labelled is not None:
            out["golden"], relevant = self._golden(labelled, answer)
        tokens = self.index.analyzer(self.question)
        route = layout(answer, self._label, relevant)
        explain = self._explain(pipeline, tokens, answer, [c for n in LEXICAL for c in drawn_in(route, n)])
        add_terms(route, {cid: _terms_line(rows) for cid, rows in explain.items()})
        out["answer"] = answer.to_dict()
        if answer.generation is not None:  # its scores, as eval --generate counts them
            out["generation_grade"] = generation_record(
                labelled, answer.generation, self.source.titles(self.live), self.index.analyzer)
        out["shown"] = [self._passage(p, explain) for p in
                        ([answer.passage] if answer.passage else []) + list(answer.also_found)]
        offered = retrievers(self.index)  # the index's table: the entries that made its retrievers
        out["score"] = explain_score(scoring_stage(answer), offered)
        out["route"] = route
        out["bm25_terms"] = self._term_table(answer, tokens, explain)
        out["stages"] = [{"name": t.name, "kind": t.kind, "n_in": t.n_in, "n_out": len(t.hits), "ms": t.ms,
                          "notes": list(t.notes), "params": _params(t.params), "term": stage_term(t, offered)}
                         for t in answer.trace]
        if out["bm25_terms"].get("bounded"):  # said where the stage is shown, and in the JSON
            note = (f"explanation bounded: {MAX_EXPLAINED_TERMS} of {out['bm25_terms']['distinct_terms']} "
                    "distinct question terms shown per chunk, the rest summed in one column")
            for stage in out["stages"]:
                if stage["name"] in LEXICAL:
                    stage["notes"].append(note)
        return out

    # parts ---------------------------------------------------------------------------------

    def _start(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        """What the page shows before a question: the index in a line, one question of each kind
        to try, and what the reranker and the gate will do (the settings wait behind a disclosure)."""
        method = self.config.rerank.method
        rerank = (auto_reranker(self.index.extra.get("reranker"))[1] if method == "auto"
                  else f"rerank.method = {method}")
        gate = self.index.extra.get("gate")
        return {"documents": len(self.index.documents), "chunks": len(self.index.chunks),
                "rerank": rerank,
                "gate": (f"calibrated on the {gate.get('split', 'train')} split of "
                         f"{Path(str(gate.get('golden', ''))).name}, on the score {score_name(gate['score'])}"
                         if gate and gate.get("score") else "not calibrated: it declines only questions that "
                                                            "match nothing (glassrag calibrate)"),
                "tries": [{**g["questions"][0], "group": g["group"],
                           "link": ask_link(self.source.name, g["questions"][0]["question"], None,
                                            settings.changed(self.config, self.base, self.available))}
                          for g in tried(examples)],
                "controls": sum(len(g.get("fields", [])) for g in settings.form(self.config, self.base,
                                                                                 self.available))}

    def _passage(self, p: Passage, explain: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        cut_before = bool(p.excerpt) and p.excerpt_start > 0
        cut_after = bool(p.excerpt) and p.excerpt_start + len(p.excerpt) < len(p.text)
        return {"chunk_id": p.chunk_id, "doc_id": p.doc_id, "rank": p.rank, "score": p.score,
                "citation": p.citation, "title": p.title, "locator": p.locator,
                "segments": segments(p.shown, p.highlights if p.excerpt else ()),
                "cut_before": cut_before, "cut_after": cut_after,
                "bm25": explain.get(p.chunk_id, [])}

    def _explain(self, pipeline: Pipeline, tokens: list[str], answer: Answer,
                 drawn: list[str]) -> dict[str, list[dict[str, Any]]]:
        """BM25's per-term contributions for the chunks the page shows them for, in one call: the
        term table's (bm25's top TERM_ROWS), the shown passages', and the route's bm25 nodes among
        bm25's top EXPLAINED_RANKS."""
        bm25 = next((t for t in answer.trace if t.name in LEXICAL), None)
        if bm25 is None:
            return {}
        ranked = {h.chunk_id for h in bm25.hits[:EXPLAINED_RANKS]}
        wanted = [h.chunk_id for h in bm25.hits[:TERM_ROWS]] + [cid for cid in drawn if cid in ranked]
        wanted += [p.chunk_id for p in ([answer.passage] if answer.passage else []) + list(answer.also_found)]
        ids = list(dict.fromkeys(wanted))
        rows = pipeline.bm25.explain_many(tokens, [self.index.position[cid] for cid in ids], MAX_EXPLAINED_TERMS)
        return dict(zip(ids, rows))

    def _term_table(self, answer: Answer, tokens: list[str],
                    explain: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        if not explain:
            return {"terms": [], "rows": []}
        distinct = list(dict.fromkeys(tokens))
        terms = distinct[:MAX_EXPLAINED_TERMS]  # columns: the first distinct terms of the question
        if len(distinct) > len(terms):
            terms.append(f"({len(distinct) - len(terms)} more terms)")
        rows = []
        lexical = next(t for t in answer.trace if t.name in LEXICAL)  # explain is empty without one
        for h in lexical.hits[:TERM_ROWS]:
            by_term: dict[str, dict[str, Any]] = {}
            for r in explain[h.chunk_id]:
                column = r["term"] if r["term"] in terms[:MAX_EXPLAINED_TERMS] else terms[-1]
                cell = by_term.setdefault(column, {"contribution": 0.0, "tf": r["tf"], "idf": r["idf"]})
                cell["contribution"] += r["contribution"]
            rows.append({"chunk_id": h.chunk_id, "rank": h.rank, "score": h.score, "tag": self._label(h.chunk_id).tag,
                         "citation": self._label(h.chunk_id).citation,
                         "cells": [by_term.get(t, {"contribution": 0.0, "tf": 0, "idf": 0.0}) for t in terms],
                         "total": sum(c["contribution"] for c in by_term.values())})
        return {"terms": terms, "rows": rows, "distinct_terms": len(distinct),
                "bounded": len(distinct) > MAX_EXPLAINED_TERMS}

    def _golden(self, q: Question, answer: Answer) -> tuple[dict[str, Any], set[str]]:
        judgement = self.source.judge(self.live).judge(q)
        relevant = judgement.relevant_chunks() - judgement.excluded
        shown = [] if answer.declined else ([answer.passage] if answer.passage else []) + list(answer.also_found)
        seen = visible(judgement, q, [p.shown for p in shown]) if q.answerable and shown else False
        cause = loss_cause(judgement, q.answerable, answer, self.config.answer.k, seen is not False)
        if q.answerable:
            verdict = "answer shown" if cause is None else f"answer lost: {cause}"
        else:
            verdict = "rightly declined" if cause is None else "answered although unanswerable"
        return ({"id": q.id, "kind": q.kind, "split": q.split, "answerable": q.answerable,
                 "answers": [{"doc": a.doc, "locator": a.locator, "text": a.text} for a in q.answers],
                 "relevant_chunks": sorted(relevant), "cause": cause,
                 "cause_text": CAUSES.get(cause or "", ""), "verdict": verdict}, relevant)

    def _run(self) -> dict[str, Any]:
        run = self.source.run(self.run_name or "")
        out: dict[str, Any] = {"name": run.name, "file": f"runs/{run.name}.json", "problem": run.problem,
                               "record": None, "same_settings": None, "link": None}
        if run.run is None:
            return out
        wanted = normalize_space(self.question).casefold()
        record = next((r for r in run.run.questions if normalize_space(r.question).casefold() == wanted), None)
        if record is not None:
            out["record"] = {"id": record.id, "cause": record.cause, "declined": record.declined,
                             "cause_text": CAUSES.get(record.cause or "", ""),
                             "ranks": {s: v.first_relevant_rank for s, v in record.stages.items()}}
        try:
            run_config = Config.from_dict(run.run.config, origin=out["file"])
        except ConfigError:
            return out
        wanted_params = settings.changed(run_config, self.base, self.available)
        out["same_settings"] = settings.flat(run_config, self.available) == settings.flat(self.config, self.available)
        out["link"] = ask_link(self.source.name, self.question, run.name, wanted_params)
        return out


def tried(examples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The groups whose first question the page offers to try: TRIES - 1 kinds of answerable
    question and, when the golden set has them, an unanswerable one (the gate's turn)."""
    answerable = [g for g in examples if g["questions"][0]["answerable"]]
    unanswerable = [g for g in examples if not g["questions"][0]["answerable"]]
    return answerable[: TRIES - len(unanswerable[:1])] + unanswerable[:1]


def _examples(questions: tuple[Question, ...]) -> list[dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for q in sorted(questions, key=lambda q: (not q.answerable, q.kind, q.id)):
        name = "unanswerable: the gate should decline" if not q.answerable else (q.kind or "other")
        groups.setdefault(name, []).append({"id": q.id, "question": q.question, "answerable": q.answerable,
                                            "split": q.split})
    return [{"group": g, "questions": qs} for g, qs in groups.items()]


def _terms_line(rows: list[dict[str, Any]]) -> str:
    parts = [f"{r['term']} {r['contribution']:.3g}" for r in rows if r["contribution"]]
    return " + ".join(parts) + f" = {sum(r['contribution'] for r in rows):.4g}" if parts else "no question word"


def _params(params: Mapping[str, Any]) -> str:
    parts = []
    for key, value in params.items():
        text = f"{value:.4g}" if isinstance(value, float) else str(value)
        parts.append(f"{key}={text if len(text) <= 48 else text[:47] + '…'}")
    return "  ".join(parts)
