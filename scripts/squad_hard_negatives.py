"""Hard negatives for the next answerability model: on-topic pairs whose passage nearly
answers the question and does not (SQuAD 2.0's kind of unanswerable question), made from
the same SQuAD 1.1 snapshot as scripts/squad_prepare.py (training/squad/PROVENANCE.md).

    python scripts/squad_hard_negatives.py GIT_DIR

GIT_DIR is a git directory holding the SQuAD explorer commit squad_prepare.py reads;
nothing is downloaded. Every page read must have the blob id and SHA-256 that
training/squad/articles.tsv records, so both scripts read the same text. The questions are
those of the committed pairs files (pairs.jsonl.gz: the 6,000 train questions the shipped
model learned from; heldout.jsonl.gz: the 1,709 held-out questions), in their order, so the
first N questions of a hard file are the first N of its pairs file. The snapshot gives what
the committed files leave out: each question's answers and every paragraph of its article.

Each question's rows are written together: its own paragraph (label 1, `own`, as in the
pairs file) and, when it has them (label 0):

- `entity-overlap`: the paragraph of the same article, not its own and not holding its
  answer, that scores highest for the question by BM25 within the article (glassrag's own
  BM25 and analyser, k1 0.9, b 0.4, English stopwords, stemmed; IDF over the article's
  paragraphs, so the article's subject, in every paragraph, weighs little and the
  question's rarer words, its entities, decide). The hardest same-article near miss, where
  squad_prepare.py's `same-article` negatives are drawn at random. A paragraph "holds" the
  answer when it contains an answer's text, case folded, or its SQuAD-normalised text
  (punctuation, articles and thousands separators out), so "1936 Summer Olympics." in the
  answer still matches "1936 Summer Olympics" in a paragraph.
- `edited-question`: the question with one slot swapped, paired with its own paragraph. A
  slot is a year (1000-2099), another number, or a capitalised name (a run of capitalised
  words, leading function words dropped) that occurs in the own paragraph. Its replacement
  comes from the same article and is of the same type: a year for a year, a month for a
  month, a number of as many digits for a number, a decimal for a decimal, a name of as
  many words (hyphenated or not as the original) for a name, the name also seen in the
  article beside the slot's word before or after it (a cheap stand-in for an entity type:
  "in San Diego" takes a name the article has after "in"). It must not occur in the own
  paragraph (no word of a name, no form of a number) nor in the question, and a name shares
  no word with the original. The paragraph is about the original and says nothing of the
  replacement, so it cannot answer the edited question (SQuAD 2.0's entity and number
  swaps, Rajpurkar et al. 2018, "Know What You Don't Know"). A name of the article counts
  only if it occurs somewhere not at a sentence's start ("However" does not). Slot and
  replacement are drawn with a seeded generator from sorted lists.

A `swapped-fact` kind (the own paragraph with its answer replaced by another entity) is not
made: the passage would still answer the question, with a wrong fact, and the answerability
model judges whether a passage answers, not whether it is true.

Writes training/squad/pairs-hard.jsonl.gz (train articles) and heldout-hard.jsonl.gz
(held-out articles). Edited rows carry `original` (the question before the edit) and
`swap` ({type, from, to}); the trainer reads question, passage and label and ignores them.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import random
import re
import string
import sys
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from glassrag.lexical.analyze import Analyzer  # noqa: E402
from glassrag.lexical.bm25 import BM25, TermCounts  # noqa: E402
from glassrag.lexical.stopwords import ENGLISH  # noqa: E402
from squad_prepare import STARTERS, holds, parse, read_pages, write_gz  # noqa: E402

SEED = 20261206
SQUAD = ROOT / "training" / "squad"
FILES = {"train": ("pairs.jsonl.gz", "pairs-hard.jsonl.gz"),
         "heldout": ("heldout.jsonl.gz", "heldout-hard.jsonl.gz")}
FUNCTION_WORDS = STARTERS | ENGLISH
# a number: digits, with inner separators (1,200 · 4.5); not part of a word (12th, 1990s, B-52)
NUMBER = re.compile(r"(?<![\w.,\-+/])\d+(?:[.,]\d+)*(?![\w\-]|[.,]\d)")
YEAR = re.compile(r"^(1\d|20)\d\d$")
WORD = re.compile(r"[^\W\d_][\w\-]*")
ARTICLES = re.compile(r"\b(a|an|the)\b")
JOINS = {"of", "of the", "for the", "de", "von", "van"}
MONTHS = frozenset("January February March April May June July August September October November "
                   "December".split())


# ---- answers -------------------------------------------------------------------------------

def normalised(text: str) -> str:
    """SQuAD's answer normalisation (lower case, no punctuation, no a/an/the, single spaces),
    thousands separators dropped too (1,200 → 1200)."""
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text.lower())
    text = "".join(c if c not in string.punctuation else " " for c in text)
    return " ".join(ARTICLES.sub(" ", text).split())


def holds_answer(passage: str, answers: Sequence[str]) -> bool:
    """Whether the passage contains an answer: its text case folded, or normalised."""
    if holds(passage, list(answers)):
        return True
    padded = f" {normalised(passage)} "
    return any(n and f" {n} " in padded for n in map(normalised, answers))


# ---- entity-overlap ------------------------------------------------------------------------

ANALYZER = Analyzer(stopwords="english", stem=True)


def entity_overlap(question: str, own: Sequence[str], answers: Sequence[str],
                   paragraphs: Sequence[str], bm25: BM25) -> str | None:
    """The article's paragraph with the highest BM25 for the question among those that are
    not its own and do not hold its answer (the first of equals); None when none scores > 0."""
    scores = bm25.score_all(ANALYZER(question)).astype(np.float64)
    for i, text in enumerate(paragraphs):
        if text in own or holds_answer(text, answers):
            scores[i] = 0.0
    best = int(np.argmax(scores)) if len(scores) else 0
    return paragraphs[best] if len(scores) and scores[best] > 0 else None


def article_bm25(paragraphs: Sequence[str]) -> BM25:
    return BM25(TermCounts.build(ANALYZER(p) for p in paragraphs))


# ---- edited-question -----------------------------------------------------------------------

def numbers(text: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each number in `text`."""
    return [(m.start(), m.end(), m.group()) for m in NUMBER.finditer(text)]


def number_type(n: str) -> str:
    """year (1000-2099), decimal, or numberK (an integer of K digits: 3 and 932 are not
    swapped for each other)."""
    if YEAR.match(n):
        return "year"
    return "decimal" if "." in n else f"number{len(n.replace(',', ''))}"


def names(text: str) -> list[tuple[int, int, str, bool, tuple[str, str]]]:
    """(start, end, name, mid_sentence, (word before, word after)) of each run of capitalised
    words separated by one space or joined by "of", "of the", "for the", "de", "von", "van"
    (Church of the Nativity), its leading function words dropped ("The Alps" → "Alps", "In
    Paris" → "Paris"); mid_sentence: something other than a sentence end or an opening quote
    comes before it. The neighbours are lower-cased words ("^" or "$" at the text's ends)."""
    words = list(WORD.finditer(text))
    runs: list[list[re.Match]] = []
    for m in words:
        if not m.group()[0].isupper():
            continue
        if runs and (text[runs[-1][-1].end():m.start()] == " "
                     or text[runs[-1][-1].end():m.start()].strip() in JOINS):
            runs[-1].append(m)
        else:
            runs.append([m])
    out = []
    for run in runs:
        while run and run[0].group().lower() in FUNCTION_WORDS:
            run = run[1:]
        if not run:
            continue
        start, end = run[0].start(), run[-1].end()
        before = text[:start].rstrip()
        mid = bool(before) and before[-1] not in ".!?\"'“‘(:;"
        prev = WORD.findall(text[max(0, start - 40):start])
        nxt = WORD.findall(text[end:end + 40])
        out.append((start, end, text[start:end], mid,
                    (prev[-1].lower() if prev else "^", nxt[0].lower() if nxt else "$")))
    return out


def name_type(name: str) -> str:
    """month, or nameK (K words) with "-" when hyphenated: a compound such as French-Italian
    is an adjective more often than a name, and is swapped only for another compound."""
    if name in MONTHS:
        return "month"
    return f"name{len(name.split())}" + ("-" if "-" in name else "")


def word_set(text: str) -> set[str]:
    return {w.lower() for w in WORD.findall(text)}


def has_number(text: str, n: str) -> bool:
    """Whether `text` holds the number n in any form (1,200 or 1200)."""
    plain = n.replace(",", "")
    return any(x.replace(",", "") == plain for _, _, x in numbers(text))


def has_name(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def vocabulary(paragraphs: Sequence[str]) -> dict[str, dict[str, set[str]]]:
    """An article's swap candidates by type (number_type, name_type), each with the words
    seen beside it: its numbers, and its names that occur at least once mid-sentence."""
    found: dict[str, dict[str, set[str]]] = {}
    mid_names: set[str] = set()
    for p in paragraphs:
        for _, _, n in numbers(p):
            found.setdefault(number_type(n), {}).setdefault(n, set())
        for _, _, name, mid, around in names(p):
            found.setdefault(name_type(name), {}).setdefault(name, set()).update(around)
            if mid:
                mid_names.add(name)
    return {kind: {n: ctx for n, ctx in sorted(cands.items()) if is_number_kind(kind) or n in mid_names}
            for kind, cands in sorted(found.items(), key=lambda kv: kv[0])}


def is_number_kind(kind: str) -> bool:
    return kind == "year" or kind == "decimal" or kind.startswith("number")


def slots(question: str, paragraph: str, vocab: dict[str, dict[str, set[str]]]
          ) -> list[tuple[int, int, str, str, tuple[str, str]]]:
    """(start, end, text, type, neighbours) of each year, number or name of the question that
    its paragraph holds; a name only when the article's vocabulary has it (a capitalised
    first word such as "Sometimes" is no name)."""
    out = [(s, e, n, number_type(n), ("", "")) for s, e, n in numbers(question) if has_number(paragraph, n)]
    out += [(s, e, name, name_type(name), around) for s, e, name, _, around in names(question)
            if has_name(paragraph, name) and name in vocab.get(name_type(name), {})]
    return sorted(out)


def fits(kind: str, old: str, new: str, question: str, own: Sequence[str]) -> bool:
    """Whether `new` may replace `old`: absent from every own paragraph and from the question,
    and (a name) sharing no word with the original."""
    if not is_number_kind(kind):
        words = word_set(new)
        return (not words & word_set(old) and not words & word_set(question)
                and not any(words & word_set(p) for p in own))
    return (new.replace(",", "") != old.replace(",", "") and not has_number(question, new)
            and not any(has_number(p, new) for p in own))


def candidates(kind: str, old: str, around: tuple[str, str], question: str, own: Sequence[str],
               vocab: dict[str, dict[str, set[str]]]) -> list[str]:
    """The article's replacements for a slot, sorted: of its type, fitting, and (a name) seen
    in the article beside the slot's word before or after it ("in San Diego" → a name the
    article has after "in"), a cheap stand-in for an entity type."""
    return [n for n, ctx in vocab.get(kind, {}).items()
            if fits(kind, old, n, question, own) and (is_number_kind(kind) or kind == "month"
                                                      or ctx & set(around))]


def edited(question: str, own: Sequence[str], vocab: dict[str, dict[str, set[str]]],
           rng: random.Random) -> tuple[str, dict[str, str]] | None:
    """The question with one slot swapped and the swap, or None when no slot has a
    replacement. Draws from `rng` only when there is a question to edit."""
    options = []
    for s, e, old, kind, around in slots(question, own[0], vocab):
        news = candidates(kind, old, around, question, own, vocab)
        if news:
            options.append((s, e, old, kind, news))
    if not options:
        return None
    s, e, old, kind, news = options[rng.randrange(len(options))]
    new = news[rng.randrange(len(news))]
    swap = {"type": "number" if kind.startswith("number") else ("name" if kind.startswith("name") else kind),
            "from": old, "to": new}
    return question[:s] + new + question[e:], swap


# ---- rows ----------------------------------------------------------------------------------

def questions_of(rows: Iterable[dict]) -> list[dict]:
    """Each question of a pairs file, in order of first appearance: its text, article and own
    paragraphs (a few questions' text occurs in two)."""
    out: dict[str, dict] = {}
    for r in rows:
        q = out.setdefault(r["question"], {"question": r["question"], "article": r["article"], "own": []})
        if r["label"] == 1:
            q["own"].append(r["passage"])
    return list(out.values())


def answers_of(articles: dict[str, list[dict]]) -> dict[tuple[str, str, str], list[str]]:
    """(article, paragraph, question) → the question's answers, from the parsed pages."""
    return {(name, p["text"], qa["question"]): qa["answers"]
            for name, paragraphs in articles.items() for p in paragraphs for qa in p["qas"]}


def hard_rows(questions: Sequence[dict], articles: dict[str, list[dict]], seed: int = SEED) -> list[dict]:
    """Each question's own rows, then its entity-overlap and edited-question negatives."""
    rng = random.Random(seed)
    answers = answers_of(articles)
    texts = {name: [p["text"] for p in ps] for name, ps in articles.items()}
    bm25s: dict[str, BM25] = {}
    vocabs: dict[str, dict[str, dict[str, set[str]]]] = {}
    rows = []
    for q in questions:
        name, question, own = q["article"], q["question"], q["own"]
        if not own:
            continue
        try:
            found = sorted({a for p in own for a in answers[(name, p, question)]})
        except KeyError:
            raise SystemExit(f"{name}: {question!r} with its paragraph is not in the snapshot's page; "
                             "is GIT_DIR the commit training/squad/PROVENANCE.md names?") from None
        if name not in bm25s:
            bm25s[name], vocabs[name] = article_bm25(texts[name]), vocabulary(texts[name])
        base = {"question": question, "label": 0, "article": name}
        rows += [{"question": question, "passage": p, "label": 1, "kind": "own", "article": name} for p in own]
        near = entity_overlap(question, own, found, texts[name], bm25s[name])
        if near is not None:
            rows.append({**base, "passage": near, "kind": "entity-overlap"})
        edit = edited(question, own, vocabs[name], rng)
        if edit is not None:
            rows.append({**base, "question": edit[0], "passage": own[0], "kind": "edited-question",
                         "original": question, "swap": edit[1]})
    return rows


# ---- files ---------------------------------------------------------------------------------

def read_gz(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def recorded_pages(tsv: Path) -> dict[str, dict[str, str]]:
    with open(tsv, encoding="utf-8", newline="") as f:
        return {r["article"]: r for r in csv.DictReader(f, delimiter="\t")}


def load_articles(git_dir: str, recorded: dict[str, dict[str, str]]) -> dict[str, list[dict]]:
    """The parsed pages of the train and held-out articles, each checked against articles.tsv."""
    articles = {}
    for path, blob, data in read_pages(git_dir):
        name = Path(path).stem
        want = recorded.get(name)
        if want is None or want["role"] not in FILES:
            continue
        if want["blob"] != blob or want["sha256"] != hashlib.sha256(data).hexdigest():
            raise SystemExit(f"{path}: blob {blob} is not the page articles.tsv records ({want['blob']})")
        articles[name] = parse(data)
    missing = sorted(n for n, r in recorded.items() if r["role"] in FILES and n not in articles)
    if missing:
        raise SystemExit(f"{len(missing)} train or held-out pages missing from the snapshot: {missing[:5]}")
    return articles


def main(git_dir: str, folder: Path = SQUAD) -> dict[str, Counter]:
    recorded = recorded_pages(folder / "articles.tsv")
    articles = load_articles(git_dir, recorded)
    counts = {}
    for role, (source, target) in FILES.items():
        questions = questions_of(read_gz(folder / source))
        wrong = {q["article"] for q in questions if recorded[q["article"]]["role"] != role}
        if wrong:
            raise SystemExit(f"{source} holds questions of articles that are not {role}: {sorted(wrong)[:5]}")
        rows = hard_rows(questions, articles)
        write_gz(folder / target, rows)
        counts[target] = Counter(r["kind"] for r in rows)
        print(f"{target}: {len(questions)} questions, " + ", ".join(f"{k} {v}" for k, v in
                                                                   sorted(counts[target].items())))
    return counts


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python scripts/squad_hard_negatives.py GIT_DIR (a snapshot of "
                         "rajpurkar/SQuAD-explorer holding the commit training/squad/PROVENANCE.md names)")
    main(sys.argv[1])
