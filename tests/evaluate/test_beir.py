"""BEIR folders read into questions, and the abstention variant written from one, on small
hand-made folders (the SciFact comparison with pytrec_eval is in test_beir_trec.py)."""

import json
import random
from pathlib import Path

import pytest

from glassrag.errors import GoldenError
from glassrag.evaluate.beir import load_beir_questions, with_abstention
from glassrag.evaluate.golden import Span


def beir(folder: Path, queries: list, qrels: dict[str, str], corpus: list | None = None) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text("".join((q if isinstance(q, str) else json.dumps(q)) + "\n"
                                                  for q in queries), encoding="utf-8")
    for split, text in qrels.items():
        (folder / "qrels" / f"{split}.tsv").write_text(text)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus or []))
    return folder


QUERIES = [{"_id": 1, "text": "tilt sensor"}, {"_id": "2", "text": "battery"}, {"_id": "3", "text": "gym"}]


def test_each_qrels_row_is_an_answer_with_its_grade(tmp_path: Path):
    folder = beir(tmp_path / "b", QUERIES, {
        "test": "query-id\tcorpus-id\tscore\n1\td1\t2\n\n1\td2\t1\n3\td9\t0\n",
        "train": "2 d5 1\n"})
    test = load_beir_questions(folder)
    assert [(q.id, q.question, q.answerable, q.split) for q in test] == [
        ("1", "tilt sensor", True, "test"), ("3", "gym", False, "test")]  # grade 0 only: unanswerable
    assert test[0].answers == (Span("d1", grade=2), Span("d2", grade=1))
    assert test[0].extra == {"exclude_self": True}
    assert [q.id for q in load_beir_questions(folder, "train")] == ["2"]
    assert [(q.id, q.split) for q in load_beir_questions(folder, "all")] == [
        ("2", "train"), ("1", "test"), ("3", "test")]


def test_a_header_is_skipped_only_on_the_first_line(tmp_path: Path):
    folder = beir(tmp_path / "b", QUERIES, {"test": "1\td1\t1\nquery-id\tcorpus-id\tscore\n"})
    with pytest.raises(GoldenError) as info:
        load_beir_questions(folder)
    assert info.value.problems == [(2, "score 'score' is not a whole number")]


def test_a_missing_split_file_is_an_error_unless_all_splits_are_asked(tmp_path: Path):
    folder = beir(tmp_path / "b", QUERIES, {"test": "1\td1\t1\n"})
    assert [q.id for q in load_beir_questions(folder, "all")] == ["1"]
    with pytest.raises(GoldenError) as info:
        load_beir_questions(folder, "train")
    assert info.value.path == str(folder / "qrels" / "train.tsv")
    assert info.value.problems == [(0, "no such qrels file")]
    with pytest.raises(GoldenError) as info:
        load_beir_questions(folder, "dev")
    assert info.value.problems == [(0, "unknown split 'dev'; use train, test or all")]


def test_a_folder_without_queries_is_not_beir(tmp_path: Path):
    with pytest.raises(GoldenError) as info:
        load_beir_questions(tmp_path)
    assert info.value.path == str(tmp_path)
    assert info.value.problems == [(0, "not a BEIR folder (no queries.jsonl) and not a golden JSONL file: "
                                       "give --golden a .jsonl file or a BEIR folder")]


def test_bad_query_lines_are_all_reported_by_line(tmp_path: Path):
    folder = beir(tmp_path / "b", ['{"_id": "1", "text": "ok"}', "", "{broken", '["_id", "text"]',
                                   '{"_id": "5"}', '{"text": "no id"}', '{"_id": "7", "text": 7}',
                                   '{"_id": "8", "text": "a\\ud800"}'], {"test": "1\td1\t1\n"})
    with pytest.raises(GoldenError) as info:
        load_beir_questions(folder)
    assert info.value.path == str(folder / "queries.jsonl")
    shape = "queries.jsonl: not a BEIR query line (an object with _id and text)"
    assert info.value.problems == [
        (3, "queries.jsonl: not valid JSON: Expecting property name enclosed in double quotes at column 2"),
        (4, shape), (5, shape), (6, shape), (7, shape),
        (8, "queries.jsonl: a lone surrogate \\ud800 (not valid Unicode) in 'a\\\\ud800'")]


SOURCE_QRELS = {"train": {"1": ["t1"], "2": ["t2"], "9": ["t9"], "10": ["t10", "shared"]},
                "test": {"3": ["s3"], "4": ["s4", "shared"]}}


def source_folder(folder: Path) -> Path:
    docs = sorted({d for split in SOURCE_QRELS.values() for ds in split.values() for d in ds} | {"other"})
    return beir(folder, [{"_id": q, "text": f"query {q}"} for q in ("1", "2", "3", "4", "9", "10")],
                {split: "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, ds in rows.items()
                                                                for d in ds)
                 for split, rows in SOURCE_QRELS.items()},
                [{"_id": d, "title": d, "text": f"text of {d}"} for d in docs])


def test_abstention_removes_the_documents_of_a_seeded_half_of_each_split(tmp_path: Path):
    source = source_folder(tmp_path / "source")
    out = with_abstention(source, tmp_path / "abst", seed=3)
    # half of each split, drawn from its ids in numeric order
    rng = random.Random(3)
    chosen = rng.sample(["1", "2", "9", "10"], 2) + rng.sample(["3", "4"], 1)
    removed = {d for split in SOURCE_QRELS.values() for q, ds in split.items() if q in chosen for d in ds}
    kept = [json.loads(line)["_id"] for line in (out / "corpus.jsonl").read_text().splitlines()]
    every = {d for s in SOURCE_QRELS.values() for ds in s.values() for d in ds} | {"other"}
    assert kept == sorted(every - removed) and removed == {"t2", "t9", "s3"}
    assert (out / "queries.jsonl").read_text() == (source / "queries.jsonl").read_text()
    for split, rows in SOURCE_QRELS.items():
        assert (out / "qrels" / f"{split}.tsv").read_text() == "query-id\tcorpus-id\tscore\n" + "".join(
            f"{q}\t{d}\t{0 if d in removed else 1}\n" for q, ds in rows.items() for d in ds)
    questions = load_beir_questions(out, "all")
    assert {q.id for q in questions if not q.answerable} >= set(chosen)
    assert not (tmp_path / "abst.tmp").exists()


def test_abstention_is_seeded_and_an_existing_folder_is_kept(tmp_path: Path):
    source = source_folder(tmp_path / "source")
    a = with_abstention(source, tmp_path / "a")
    b = with_abstention(source, tmp_path / "b", seed=0)
    for name in ("corpus.jsonl", "qrels/train.tsv", "qrels/test.tsv"):
        assert (a / name).read_text() == (b / name).read_text()
    (a / "corpus.jsonl").write_text("kept\n")
    assert with_abstention(source, a, seed=5) == a and (a / "corpus.jsonl").read_text() == "kept\n"


# written from the survivors of `MUTATION_NAME=beir MUTATION_TESTS=tests/evaluate/test_beir.py
# scripts/mutation.sh evaluate beir.py` (docs/testing.md)

def test_qrels_cells_split_at_tabs_else_at_spaces_and_blank_rows_are_skipped(tmp_path: Path):
    folder = beir(tmp_path / "b", QUERIES, {"test": "1\tdoc one\t1\n\t\n   \n2 d5 1\n"})
    got = {q.id: q for q in load_beir_questions(folder)}
    assert got["1"].answers == (Span("doc one", grade=1),)  # a tab-separated id may hold a space
    assert got["2"].answers == (Span("d5", grade=1),) and got["2"].answerable  # grade 1 is relevant


def test_bad_qrels_rows_are_all_reported_by_line_in_the_qrels_file(tmp_path: Path):
    folder = beir(tmp_path / "b", QUERIES, {"test": "1\td1\n1\td1\tx\n99\td1\t1\n1\td2\t1\n7 d\n"})
    with pytest.raises(GoldenError) as info:
        load_beir_questions(folder)
    assert info.value.path == str(folder / "qrels" / "test.tsv")
    columns = "expected 3 columns (query-id, corpus-id, score), got 2"
    assert info.value.problems == [(1, columns), (2, "score 'x' is not a whole number"),
                                   (3, "query '99' is not in queries.jsonl"), (5, columns)]


def test_an_unknown_split_names_the_folder(tmp_path: Path):
    folder = beir(tmp_path / "b", QUERIES, {"test": "1\td1\t1\n"})
    with pytest.raises(GoldenError) as info:
        load_beir_questions(folder, "dev")
    assert info.value.path == str(folder)


def test_abstention_sorts_query_ids_that_are_not_numbers_as_text(tmp_path: Path):
    source = beir(tmp_path / "source", [{"_id": q, "text": q} for q in ("qa", "qb")],
                  {"train": "query-id\tcorpus-id\tscore\nqa\tda\t1\n", "test": "query-id\tcorpus-id\tscore\nqb\tdb\t1\n"},
                  [{"_id": d, "title": d, "text": d} for d in ("da", "db", "dc")])
    out = with_abstention(source, tmp_path / "abst", seed=0)  # half of one query: none removed
    assert [json.loads(line)["_id"] for line in (out / "corpus.jsonl").read_text().splitlines()] == ["da", "db", "dc"]


def test_abstention_replaces_a_crashed_run_and_an_unfinished_folder(tmp_path: Path):
    source = source_folder(tmp_path / "source")
    (tmp_path / "abst.tmp" / "qrels").mkdir(parents=True)  # left by a run that stopped half way
    (tmp_path / "abst").mkdir()
    (tmp_path / "abst" / "stray.txt").write_text("not a finished folder: no qrels/test.tsv")
    out = with_abstention(source, tmp_path / "abst", seed=3)
    assert sorted(p.name for p in out.iterdir()) == ["corpus.jsonl", "qrels", "queries.jsonl"]
    assert not (tmp_path / "abst.tmp").exists()
