"""Extraction-quality checks: does a Document's text look like what its file says?

Three symptoms of a bad extraction, each measured on the extracted text alone:

- glued words: the share of words (runs of letters) longer than LONG_WORD letters.
  A PDF extractor that loses the spaces of a text layer turns whole lines into single
  "words"; in prose almost no word is that long (see docs/formats.md for the measurement
  behind the thresholds).
- pages without text: a page of a PDF whose text layer is empty is, in practice, a scanned
  image; its content needs OCR before it can be searched.
- replacement characters (U+FFFD): bytes or glyphs that could not be mapped to characters,
  typically a font without a Unicode map or a text file read in the wrong encoding.
- misread words: the share of lower-case words (3+ letters) that are not English words
  (`known`: in the bundled cross-encoder's WordPiece vocabulary, 22,501 whole words of
  bert-base-uncased, or one of them with an English ending) but become one when one of
  OCR's letter confusions is undone (`misread`: "tlie" -> "the", "rnodel" -> "model",
  "calibratiou" -> "calibration"). A word merely missing from the vocabulary is no sign of
  OCR: technical prose is full of them ('webhook', 'kubectl', 'fuzzing', 'sternum' made 17
  of 40 clean Wikipedia articles warn, issue 49); a misreading is a near miss of a word
  the vocabulary has. Names and identifiers start in upper case or hold digits and are not
  counted. Thresholds measured on the repository's real documents, the demo and the
  prepared corpora, clean and with simulated OCR errors (bench/ocr_words.py; the figures
  are in docs/formats.md).

`check` gives a verdict, `ok`, `warn` or `bad`, with the reason for each finding.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Iterator

from glassrag.models import bundled_cross_encoder
from glassrag.schema import Document

LONG_WORD = 25               # letters; "words" longer than this are counted as glued
LONG_WORD_MIN = 3            # distinct long words needed: a chemical name repeats, glue does not
LONG_WORD_WARN = 0.01        # share of words; measured on SciFact in docs/formats.md
LONG_WORD_BAD = 0.05
EMPTY_PAGES_BAD = 0.5        # share of pages without text
REPLACEMENT_BAD = 0.001      # share of characters that are U+FFFD; any at all warns
EXAMPLES = 3                 # long words quoted in the reasons
UNKNOWN_MIN_WORDS = 200      # lower-case words needed before their share means anything
# share of misread words (bench/ocr_words.py, docs/formats.md; 122 documents with 200+ words):
# clean 0.0-1.4 %, 1 % of letters misread 1.9-6.1 %, 2 % 4.6-8.3 %, 5 % 7.8-18.7 %
MISREAD_MIN_LETTERS = 4      # a 3-letter name ("sbi", "cbo") is a word after one confusion too often
MISREAD_WARN = 0.03
MISREAD_BAD = 0.085

WORD = re.compile(r"[^\W\d_]+")
LONG = re.compile(r"[^\W\d_]{%d,}" % (LONG_WORD + 1))  # the WORD runs longer than LONG_WORD
REPLACEMENT = "\ufffd"
LOWER_WORD = re.compile(r"(?<![\w\-./])[a-z]{3,}(?![\w\-])")  # not part of an identifier or a path
ENDINGS = (("ies", "y"), ("ied", "y"), ("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("es", ""),
           ("s", ""), ("ly", ""), ("er", ""), ("er", "e"), ("est", ""), ("ness", ""), ("ment", ""))


@functools.lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """The whole words of the bundled cross-encoder's WordPiece vocabulary (no `##` pieces)."""
    path = bundled_cross_encoder() / "tokenizer.json"
    vocab = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(w for w in vocab if w.isalpha() and w.islower())


def known(word: str, words: frozenset[str]) -> bool:
    """In the vocabulary, or one of its words with an English ending."""
    if word in words:
        return True
    return any(word.endswith(end) and len(word) - len(end) >= 3 and word[: len(word) - len(end)] + add in words
               for end, add in ENDINGS)


def unknown_words(text: str) -> tuple[int, list[str]]:
    """(lower-case words counted, those not `known`)."""
    words = vocabulary()
    counted = LOWER_WORD.findall(text)
    return len(counted), [w for w in counted if not known(w, words)]


# what OCR reads for a letter (Rice, Jenkins & Nartker 1996; the confusions bench/ocr_words.py
# simulates), written as (read, meant): undoing one of them turns a misreading back into a word
CONFUSIONS = (("rn", "m"), ("li", "h"), ("in", "m"), ("ri", "n"), ("ii", "u"), ("cl", "d"), ("vv", "w"),
              ("c", "e"), ("e", "c"), ("u", "n"), ("n", "u"), ("n", "r"), ("l", "i"), ("i", "l"),
              ("l", "t"), ("o", "a"), ("a", "o"), ("f", "t"), ("t", "f"), ("h", "b"), ("b", "h"), ("q", "g"))


def undone(word: str) -> Iterator[str]:
    """`word` with one confusion (`CONFUSIONS`) undone at one place, every way there is."""
    for read, meant in CONFUSIONS:
        at = word.find(read)
        while at >= 0:
            yield word[:at] + meant + word[at + len(read):]
            at = word.find(read, at + 1)


@functools.lru_cache(maxsize=65536)
def misread(word: str) -> bool:
    """Whether a lower-case word of MISREAD_MIN_LETTERS or more looks misread: not `known`,
    and `known` once one OCR confusion is undone ("tlie" -> "the", "hattery" -> "battery"). "webhook", "sternum" and
    "kubectl" are not known either, but no single confusion makes them a word."""
    words = vocabulary()
    return (len(word) >= MISREAD_MIN_LETTERS and not known(word, words)
            and any(known(w, words) for w in undone(word)))


def misread_words(text: str) -> tuple[int, list[str]]:
    """(lower-case words counted, those that look `misread`)."""
    counted = LOWER_WORD.findall(text)
    return len(counted), [w for w in counted if misread(w)]


def check(document: Document) -> dict[str, Any]:
    """The extraction-quality findings of one document, JSON-safe:

    {"verdict": "ok" | "warn" | "bad", "reasons": [...], "words": int,
     "long_word_share": float, "long_words": [...], "pages": int | None,
     "empty_pages": [page numbers], "replacement_chars": int,
     "misread_word_share": float, "misread_words": [...]}

    Long words count when there are at least LONG_WORD_MIN different ones: then `warn`
    from LONG_WORD_WARN of all words, `bad` from LONG_WORD_BAD. Empty pages: `warn` for
    any, `bad` from EMPTY_PAGES_BAD of the pages. U+FFFD: `warn` for any, `bad` from
    REPLACEMENT_BAD of the characters. Misread words, from UNKNOWN_MIN_WORDS lower-case
    words: `warn` from MISREAD_WARN of them, `bad` from MISREAD_BAD. The verdict is the
    worst finding, `ok` if none."""
    text = document.text
    n_words = WORD.subn("", text)[1]  # counted in C, without a list of every word
    long_words = LONG.findall(text)
    distinct = len(set(w.lower() for w in long_words))
    share = len(long_words) / n_words if n_words else 0.0
    pages = document.metadata.get("pages")
    empty = [int(p) for p in document.metadata.get("empty_pages", ())]
    replaced = text.count(REPLACEMENT)

    bad: list[str] = []
    warn: list[str] = []
    if distinct >= LONG_WORD_MIN and share >= LONG_WORD_WARN:
        examples = ", ".join(repr(w[:40] + ("…" if len(w) > 40 else ""))
                             for w in long_words[:EXAMPLES])
        reason = (f"{len(long_words)} of {n_words} words ({share:.1%}) are longer than "
                  f"{LONG_WORD} letters, e.g. {examples}: spaces were probably lost in "
                  "extraction (glued words)")
        (bad if share >= LONG_WORD_BAD else warn).append(reason)
    if empty:
        listed = ", ".join(str(p) for p in empty[:10]) + (" …" if len(empty) > 10 else "")
        of = f" of {pages}" if pages else ""
        reason = (f"{len(empty)}{of} page(s) have no text (page {listed}): if they are "
                  "scanned images, they need OCR before their content can be searched")
        (bad if pages and len(empty) >= EMPTY_PAGES_BAD * pages else warn).append(reason)
    if replaced:
        reason = (f"{replaced} replacement character(s) (U+FFFD): some characters could not "
                  "be decoded (a font without a Unicode map, or the wrong text encoding)")
        (bad if replaced >= REPLACEMENT_BAD * max(len(text), 1) else warn).append(reason)

    counted, wrong = misread_words(text)
    wrong_share = len(wrong) / counted if counted else 0.0
    if counted >= UNKNOWN_MIN_WORDS and wrong_share >= MISREAD_WARN:
        examples = ", ".join(repr(w) for w in list(dict.fromkeys(wrong))[:EXAMPLES])
        reason = (f"{len(wrong)} of {counted} lower-case words ({wrong_share:.1%}) look like misread English "
                  f"words, e.g. {examples}: the text may come from OCR with misread letters, or from a font "
                  "whose letters were mapped wrongly")
        (bad if wrong_share >= MISREAD_BAD else warn).append(reason)

    verdict = "bad" if bad else "warn" if warn else "ok"
    return {
        "verdict": verdict,
        "reasons": bad + warn,
        "words": n_words,
        "long_word_share": round(share, 4),
        "long_words": long_words[:EXAMPLES],
        "pages": pages,
        "empty_pages": empty,
        "replacement_chars": replaced,
        "misread_word_share": round(wrong_share, 4),
        "misread_words": list(dict.fromkeys(wrong))[:EXAMPLES],
    }
