"""TREC run and qrels files, so glassrag's numbers can be checked with trec_eval,
pytrec_eval or ranx, and runs from other systems evaluated with glassrag's metrics.

    run:   query-id Q0 doc-id rank score tag      (one line per retrieved item)
    qrels: query-id 0 doc-id grade

`level="doc"` names documents (the best chunk of each document stands for it: the
BEIR convention when a document is one chunk); `level="chunk"` names chunks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

from glassrag.errors import GoldenError
from glassrag.evaluate.golden import Question
from glassrag.evaluate.relevance import Judge
from glassrag.schema import QuestionRecord


def write_run(records: Iterable[QuestionRecord], path: Path, level: str = "doc", tag: str = "glassrag") -> int:
    """Write the final ranking of every question of a run (`Run.questions`); returns the
    number of lines."""
    lines = []
    for record in records:
        seen: set[str] = set()
        rank = 0
        for chunk_id, doc_id, score in record.ranking:
            name = doc_id if level == "doc" else chunk_id
            if name in seen:
                continue
            seen.add(name)
            rank += 1
            lines.append(f"{record.id} Q0 {name} {rank} {score:.6f} {tag}")
    _write(path, lines)
    return len(lines)


def write_qrels(questions: Sequence[Question], path: Path, level: str = "doc",
                judge: Judge | None = None) -> int:
    """Qrels of the answerable questions: at doc level from the answers' documents and
    grades; at chunk level, every chunk that satisfies an answer (needs a Judge)."""
    lines = []
    for q in questions:
        if not q.answerable:
            continue
        grades: dict[str, int] = {}
        if level == "doc":
            for a in q.answers:
                grades[a.doc] = max(grades.get(a.doc, a.grade), a.grade)
        else:
            assert judge is not None, "chunk-level qrels need the index's chunks"
            j = judge.judge(q)
            for cid, units in j.satisfies.items():
                grades[cid] = max(j.units[u] for u in units)
        lines.extend(f"{q.id} 0 {name} {grade}" for name, grade in grades.items())
    _write(path, lines)
    return len(lines)


def read_run(path: Path) -> dict[str, list[str]]:
    """query id -> ids best first (by score, then rank), from a TREC run file."""
    rows: dict[str, list[tuple[float, int, str]]] = {}
    problems = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        cells = line.split()
        if not cells:
            continue
        if len(cells) < 5:
            problems.append((n, "a run line is: query-id Q0 doc-id rank score [tag]"))
            continue
        try:
            rows.setdefault(cells[0], []).append((-float(cells[4]), int(cells[3]), cells[2]))
        except ValueError:
            problems.append((n, f"rank {cells[3]!r} or score {cells[4]!r} is not a number"))
    if problems:
        raise GoldenError(str(path), problems)
    return {q: [d for _, _, d in sorted(r)] for q, r in rows.items()}


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """query id -> {doc id: grade}, from a TREC qrels file."""
    qrels: dict[str, dict[str, int]] = {}
    problems = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        cells = line.split()
        if not cells:
            continue
        if len(cells) != 4:
            problems.append((n, "a qrels line is: query-id 0 doc-id grade"))
            continue
        try:
            qrels.setdefault(cells[0], {})[cells[2]] = int(cells[3])
        except ValueError:
            problems.append((n, f"grade {cells[3]!r} is not a whole number"))
    if problems:
        raise GoldenError(str(path), problems)
    return qrels


def _write(path: Path, lines: list[str]) -> None:
    """The file, whole or not at all: a new temporary file renamed over `path`, so a full disk
    leaves no partial file and an earlier file as it was (DiskError says so)."""
    from glassrag.errors import DiskError
    from glassrag.store.safefile import replace_file

    try:
        replace_file(path, ("\n".join(lines) + ("\n" if lines else "")).encode("utf-8"))
    except OSError as err:
        raise DiskError.of(str(path), err, f"{path.name} was not written") or err
