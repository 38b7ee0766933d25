"""Prepare the cross-encoder's training data from SQuAD 1.1's train articles.

Source: the SQuAD explorer repository (rajpurkar/SQuAD-explorer), commit
13f82e35b9a1fb9173f863b35f5675030646571e (2016-08-24), which held the SQuAD 1.1 train set as
one HTML page per article under explore/1.0/train/ (CC BY-SA 4.0, as the repository's
index.html says). Only train articles are read: SQuAD's dev articles are disjoint from them
and nothing here touches a dev or test split.

    python scripts/squad_prepare.py GIT_DIR

GIT_DIR is a git directory holding that commit (a snapshot of the repository); nothing is
downloaded. The script writes, deterministically (every choice from a seeded generator):

- training/squad/articles.tsv: every article page read, its blob id, the SHA-256 of its
  bytes, its number of paragraphs and questions, and its role: `train` (pairs to learn
  from), `heldout` (pairs to measure on, never learned from) or `offtopic` (the source of
  the off-topic questions, never learned from);
- training/squad/pairs.jsonl.gz and heldout.jsonl.gz: (question, passage, label, kind)
  rows, each question's rows together (the trainer batches whole questions): its own
  paragraph (label 1); that paragraph with every sentence that holds the answer taken out
  (label 0, `answer-removed`: the passage is about exactly what the question asks and names
  its subject, but not the answer, like a manual's specification table that names the
  distance meter and not its wavelength), when enough of it is left; HARD paragraphs of the
  same article that do not contain its answer (label 0, `same-article`, the near miss a gate
  must refuse); and EASY paragraphs of another article (label 0, `other-article`, off
  topic). Questions come in a seeded random order; pairs.jsonl.gz holds the first
  TRAIN_QUESTIONS of them;
- src/glassrag/data/offtopic.jsonl: general-knowledge questions of the `offtopic` articles,
  which no corpus of this project is about, in the golden-set format (unanswerable,
  kind "off-topic", split by article: alternate articles train and test), each with its
  article and licence.
"""

from __future__ import annotations

import gzip
import hashlib
import html
import json
import random
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

COMMIT = "13f82e35b9a1fb9173f863b35f5675030646571e"
FOLDER = "explore/1.0/train/"
REPO = "rajpurkar/SQuAD-explorer"
LICENCE = "CC BY-SA 4.0"
SEED = 20261201
HARD, EASY = 2, 1          # negatives per question
# a sentence ends at . ! or ? followed by space and a capital, digit, quote or bracket
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
QUESTIONS_PER_PARAGRAPH = 1
TRAIN_QUESTIONS = 6_000  # `make cross-encoder` trains on all of them, one pass
HELDOUT_ARTICLES = 40
# articles on subjects none of this project's corpora (a surveying-instrument maker's
# handbook, biomedical claims, the real documents, the prepared corpora) is about: the
# off-topic questions come from these, and the cross-encoder never learns from them
OFFTOPIC = ["Beyoncé", "Frédéric_Chopin", "Kanye_West", "Madonna_(entertainer)", "Queen_Victoria",
            "University_of_Notre_Dame", "New_York_City", "Buddhism", "FC_Barcelona",
            "Dwight_D._Eisenhower", "Chicago_Cubs", "Napoleon", "Gothic_architecture",
            "Classical_music", "Athanasius_of_Alexandria", "Mexico_City", "Alexander_Graham_Bell",
            "Hunting", "Queen_(band)", "Arsenal_F.C."]
OFFTOPIC_PER_ARTICLE = 20
# an off-topic article that one corpus is about after all: birds are hunted (corpora/birds),
# so its questions are not off-topic there; drawn as before (the draws stay the same), not kept
ON_A_CORPUS_TOPIC = {"Hunting": "corpora/birds (articles about birds, which are hunted)"}
# words a question may start with that name nothing (a capital there is the sentence's)
STARTERS = frozenset("""what who when where why how which whose whom in on at the a an of for by to after
before during since from about with she he it they its his her their this that these those there is are was
were did do does has have had can could will would along besides as if while although though upon under over
into between among against according one two three some many most much other another each every all both
either neither no not name give""".split())
ROOT = Path(__file__).resolve().parent.parent


class Page(HTMLParser):
    """Paragraphs (`<pre>` in `para-wrap`) with their questions (`strong.question`) and
    answers (`span.answer`)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[dict] = []
        self.field: str | None = None
        self.buffer: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        cls = dict(attrs).get("class") or ""
        if tag == "div" and "para-wrap" in cls.split():
            self.paragraphs.append({"text": "", "qas": []})
        elif tag == "pre" and self.paragraphs:
            self.field, self.buffer = "text", []
        elif tag == "strong" and "question" in cls.split():
            self.field, self.buffer = "question", []
        elif tag == "span" and "answer" in cls.split():
            self.field, self.buffer = "answer", []

    def handle_endtag(self, tag: str) -> None:
        if self.field is None or tag not in ("pre", "strong", "span"):
            return
        text = " ".join("".join(self.buffer).split())
        para = self.paragraphs[-1]
        if self.field == "text":
            para["text"] = text
        elif self.field == "question":
            para["qas"].append({"question": text, "answers": []})
        elif para["qas"]:
            para["qas"][-1]["answers"].append(text)
        self.field = None

    def handle_data(self, data: str) -> None:
        if self.field is not None:
            self.buffer.append(data)


def read_pages(git_dir: str) -> list[tuple[str, str, bytes]]:
    listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-z", COMMIT, FOLDER],
                             check=True, capture_output=True, text=True).stdout.split("\0")
    out = []
    for line in filter(None, listing):
        meta, path = line.split("\t", 1)
        blob = meta.split()[2]
        got = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "blob", blob],
                             capture_output=True)
        if got.returncode != 0:  # absent from the snapshot
            print(f"skipped {path}: blob {blob} is not in the snapshot", file=sys.stderr)
            continue
        out.append((path, blob, got.stdout))
    return out


def parse(data: bytes) -> list[dict]:
    page = Page()
    page.feed(data.decode("utf-8"))
    return [p for p in page.paragraphs if p["text"] and p["qas"]]


def holds(passage: str, answers: list[str]) -> bool:
    low = passage.lower()
    return any(a and a.lower() in low for a in answers)


def pairs_of(articles: dict[str, list[dict]], names: list[str], rng: random.Random) -> list[dict]:
    rows = []
    everything = [(n, p) for n in names for p in articles[n]]
    for name in names:
        paragraphs = articles[name]
        for i, para in enumerate(paragraphs):
            for qa in rng.sample(para["qas"], min(QUESTIONS_PER_PARAGRAPH, len(para["qas"]))):
                q, answers = qa["question"], qa["answers"]
                rows.append({"question": q, "passage": para["text"], "label": 1, "kind": "own",
                             "article": name, "answers": answers})
                others = [p["text"] for j, p in enumerate(paragraphs)
                          if j != i and not holds(p["text"], answers)]
                for text in rng.sample(others, min(HARD, len(others))):
                    rows.append({"question": q, "passage": text, "label": 0, "kind": "same-article",
                                 "article": name})
                for _ in range(EASY):
                    other, p = rng.choice(everything)
                    while other == name:
                        other, p = rng.choice(everything)
                    rows.append({"question": q, "passage": p["text"], "label": 0,
                                 "kind": "other-article", "article": name})
    return rows


def without_answer(passage: str, answers: list[str]) -> str | None:
    """The passage with every sentence that holds an answer taken out, or None when that
    leaves fewer than two sentences, takes nothing out, or the answer is still there (it
    spans a sentence end)."""
    sentences = SENTENCE_END.split(passage)
    kept = [s for s in sentences if not holds(s, answers)]
    if len(kept) < 2 or len(kept) == len(sentences):
        return None
    text = " ".join(kept)
    return None if holds(text, answers) else text


def answer_removed(row: dict) -> dict | None:
    """The answer-removed negative of an `own` row, when it has one."""
    text = without_answer(row["passage"], row["answers"]) if row["kind"] == "own" else None
    if text is None:
        return None
    return {"question": row["question"], "passage": text, "label": 0, "kind": "answer-removed",
            "article": row["article"]}


def grouped(rows: list[dict]) -> list[list[dict]]:
    """Each question's rows, in order of the question's first row in `rows`, its
    answer-removed negative placed after its own paragraph."""
    out: dict[str, list[dict]] = {}
    for r in rows:
        group = out.setdefault(r["question"], [])
        group.append(r)
        if r["kind"] == "own" and (removed := answer_removed(r)) is not None:
            group.append(removed)
    return list(out.values())


def names_its_subject(question: str) -> bool:
    """Whether a question names what it is about: a capitalised word (Chopin, FC Barcelona,
    Mexico City, Grammys) after the first, or a first word that is not one a question starts
    with. SQuAD's questions were written beside their paragraph, and many lean on it ("How is
    this type of hunting done?", "Who operates the parking meters?", "When was the modern
    era?"): such a question is not about a subject no corpus covers (school funding or a
    city's budget may be the economics corpus's), so it cannot stand as off-topic."""
    words = re.findall(r"[\w'’.-]+", question)
    if not words:
        return False
    later = any(w[:1].isupper() and w != "I" for w in words[1:])
    return later or (words[0][:1].isupper() and words[0].lower() not in STARTERS)


def write_gz(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        for r in rows:
            r = {k: v for k, v in r.items() if k != "answers"}
            f.write((json.dumps(r, ensure_ascii=False) + "\n").encode())


def main(git_dir: str) -> None:
    pages = read_pages(git_dir)
    articles: dict[str, list[dict]] = {}
    table = []
    for path, blob, data in pages:
        name = Path(path).stem
        articles[name] = parse(data)
        table.append((name, path, blob, hashlib.sha256(data).hexdigest(), len(articles[name]),
                      sum(len(p["qas"]) for p in articles[name])))
    missing = [n for n in OFFTOPIC if n not in articles]
    if missing:
        raise SystemExit(f"off-topic articles missing from the snapshot: {missing}")
    rng = random.Random(SEED)
    rest = sorted(n for n in articles if n not in OFFTOPIC)
    heldout = sorted(rng.sample(rest, HELDOUT_ARTICLES))
    train = [n for n in rest if n not in heldout]
    role = {**{n: "train" for n in train}, **{n: "heldout" for n in heldout},
            **{n: "offtopic" for n in OFFTOPIC}}
    out = ROOT / "training" / "squad"
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "articles.tsv", "w", encoding="utf-8") as f:
        f.write("article\tpath\tblob\tsha256\tparagraphs\tquestions\trole\n")
        for row in sorted(table):
            f.write("\t".join(map(str, row)) + f"\t{role[row[0]]}\n")
    # the draws of the generator are those that made the first pairs files (rows shuffled,
    # then the held-out pairs), so the off-topic questions drawn after them stay the same
    train_rows = pairs_of(articles, train, rng)
    rng.shuffle(train_rows)
    train_groups = grouped(train_rows)[:TRAIN_QUESTIONS]
    write_gz(out / "pairs.jsonl.gz", [r for g in train_groups for r in g])
    held_groups = grouped(pairs_of(articles, heldout, rng))
    write_gz(out / "heldout.jsonl.gz", [r for g in held_groups for r in g])
    offtopic, drawn = [], 0
    for number, name in enumerate(OFFTOPIC):
        qas = [qa for p in articles[name] for qa in p["qas"] if qa["question"].endswith("?")]
        for qa in rng.sample(qas, min(OFFTOPIC_PER_ARTICLE, len(qas))):
            drawn += 1  # ids count every draw, so a question keeps its id whatever is left out
            if name in ON_A_CORPUS_TOPIC or not names_its_subject(qa["question"]):
                continue
            offtopic.append({"id": f"offtopic-{drawn:03d}", "question": qa["question"],
                             "answerable": False, "kind": "off-topic",
                             # whole articles alternate: calibration reads the train half, every
                             # evaluation reports the test half, whose topics it never saw
                             "split": "train" if number % 2 == 0 else "test",
                             "source": f"{REPO}@{COMMIT}:{FOLDER}{name}.html", "licence": LICENCE})
    data = ROOT / "src" / "glassrag" / "data" / "offtopic.jsonl"
    with open(data, "w", encoding="utf-8") as f:
        for r in offtopic:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(pages)} pages, {len(train)} train / {len(heldout)} heldout / {len(OFFTOPIC)} off-topic "
          f"articles; {sum(map(len, train_groups))} train pairs of {len(train_groups)} questions, "
          f"{sum(map(len, held_groups))} heldout pairs of {len(held_groups)} questions, "
          f"{len(offtopic)} off-topic questions")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python scripts/squad_prepare.py GIT_DIR (GIT_DIR: a snapshot of "
                         f"{REPO} holding commit {COMMIT})")
    main(sys.argv[1])
