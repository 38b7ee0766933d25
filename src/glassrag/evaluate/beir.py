"""BEIR queries and qrels as golden questions: `queries.jsonl` + `qrels/{split}.tsv`.

Each qrels row `query-id corpus-id score` makes the corpus document an answer with that
grade. Following the published BEIR runs, a hit whose id equals the query id is dropped.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any, Mapping

from glassrag.errors import GoldenError
from glassrag.evaluate.golden import SPLITS, Question, Span, _text_problems, parse_json, read_lines


def load_beir_questions(folder: Path, split: str = "test") -> list[Question]:
    """Questions with qrels in `split` (train, test or all), or GoldenError naming every bad row."""
    splits = SPLITS if split == "all" else (split,)
    if split not in (*SPLITS, "all"):
        raise GoldenError(str(folder), [(0, f"unknown split {split!r}; use train, test or all")])
    queries_path = folder / "queries.jsonl"
    if not queries_path.is_file():
        raise GoldenError(str(folder), [(0, "not a BEIR folder (no queries.jsonl) and not a golden "
                                            "JSONL file: give --golden a .jsonl file or a BEIR folder")])
    texts: dict[str, str] = {}
    problems: list[tuple[int, str]] = []
    for n, line in enumerate(read_lines(queries_path), 1):
        if not line.strip():
            continue
        row, bad_json = parse_json(line)
        if bad_json:
            problems.append((n, f"queries.jsonl: {bad_json}"))
            continue
        if not isinstance(row, dict) or not isinstance(row.get("text"), str) or "_id" not in row:
            problems.append((n, "queries.jsonl: not a BEIR query line (an object with _id and text)"))
            continue
        problems.extend((n, f"queries.jsonl: {p}") for p in _text_problems(row))
        texts[str(row["_id"])] = row["text"]
    if problems:
        raise GoldenError(str(queries_path), problems)

    questions: list[Question] = []
    for sp in splits:
        path = folder / "qrels" / f"{sp}.tsv"
        if not path.is_file():
            if split == "all":
                continue
            raise GoldenError(str(path), [(0, "no such qrels file")])
        answers: dict[str, list[Span]] = {}
        for n, line in enumerate(read_lines(path), 1):
            cells = line.strip().split("\t") if "\t" in line else line.split()
            if not cells or not line.strip():
                continue
            if n == 1 and cells[0] == "query-id":
                continue
            if len(cells) != 3:
                problems.append((n, f"expected 3 columns (query-id, corpus-id, score), got {len(cells)}"))
                continue
            qid, doc, score = cells
            try:
                grade = int(score)
            except ValueError:
                problems.append((n, f"score {score!r} is not a whole number"))
                continue
            if qid not in texts:
                problems.append((n, f"query {qid!r} is not in queries.jsonl"))
                continue
            answers.setdefault(qid, []).append(Span(doc, grade=grade))
        if problems:
            raise GoldenError(str(path), problems)
        for qid, spans in answers.items():
            questions.append(Question(
                id=qid, question=texts[qid], answerable=any(s.grade > 0 for s in spans), split=sp,
                answers=tuple(spans), extra={"exclude_self": True}))
    return questions


def unmeasured(golden: Path, questions: list[Question], documents: Mapping[str, Any]) -> None:
    """GoldenError when a BEIR folder's qrels grade documents the index lacks: their questions
    would count as misses (hit@5 0.000) and the run would measure the index, not the ranking.
    Documents at grade 0 may be absent (the abstention variant removes them on purpose)."""
    missing = {s.doc for q in questions for s in q.answers if s.grade > 0 and documents.get(s.doc) is None}
    if missing:
        hit = sum(1 for q in questions if any(s.doc in missing for s in q.answers))
        shown = ", ".join(repr(d) for d in sorted(missing)[:5]) + (", ..." if len(missing) > 5 else "")
        raise GoldenError(str(golden), [(0, f"the qrels grade {len(missing)} documents the index does not hold "
                                            f"({shown}), relevant to {hit} of {len(questions)} questions: "
                                            "they could never be found, so the evaluation would measure "
                                            "nothing; ingest this BEIR folder's corpus.jsonl into the index "
                                            "(glassrag ingest FOLDER --index DIR) or evaluate the index it "
                                            "belongs to")])


def with_abstention(source: Path, folder: Path, seed: int = 0) -> Path:
    """A BEIR corpus with on-topic unanswerable questions, written to `folder` (kept when it
    is already there): for a seeded random half of the train queries and of the test
    queries, their relevant documents are removed from the corpus, so those queries (and any
    kept query that loses every relevant document with them) have no answer. Removed
    documents' qrels are kept at grade 0. Written beside `folder` and renamed into place."""
    if (folder / "qrels" / "test.tsv").is_file():
        return folder
    qrels: dict[str, dict[str, dict[str, int]]] = {}
    for split in SPLITS:
        for line in (source / "qrels" / f"{split}.tsv").read_text().splitlines()[1:]:
            cells = line.strip().split("\t")
            if len(cells) == 3:
                qrels.setdefault(split, {}).setdefault(cells[0], {})[cells[1]] = int(cells[2])
    rng = random.Random(seed)
    removed: set[str] = set()
    for split in SPLITS:
        qids = sorted(qrels[split], key=lambda q: int(q) if q.isdigit() else q)
        for q in rng.sample(qids, len(qids) // 2):
            removed |= set(qrels[split][q])
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "qrels").mkdir(parents=True)
    with (tmp / "corpus.jsonl").open("w") as out:
        for line in (source / "corpus.jsonl").read_text().splitlines():
            if line.strip() and json.loads(line)["_id"] not in removed:
                out.write(line + "\n")
    shutil.copy(source / "queries.jsonl", tmp / "queries.jsonl")
    for split in SPLITS:
        lines = ["query-id\tcorpus-id\tscore"]
        for q, docs in qrels[split].items():
            lines += [f"{q}\t{d}\t{0 if d in removed else g}" for d, g in docs.items()]
        (tmp / "qrels" / f"{split}.tsv").write_text("\n".join(lines) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder
