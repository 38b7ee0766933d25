"""Extraction-quality checks: glued words, pages without text, replacement characters."""

import json

import pytest

from glassrag.ingest import quality
from glassrag.ingest.quality import check
from glassrag.schema import Document, Section

GLUED = ["Conductingastudywithaninadequatesamplesize", "orleadtosubstantialscientificprogress",
         "sporttypesandmalesshowedthelargesteffects"]


def doc(text: str, **metadata) -> Document:
    return Document("d", "D", "d.pdf", "pdf", text, (Section("page 1", 0, len(text)),), metadata)


def test_clean_text_is_ok_and_the_result_is_json_safe():
    found = check(doc("The duty coordinator answers within ten minutes. " * 20, pages=2,
                      empty_pages=[]))
    assert found == {"verdict": "ok", "reasons": [], "words": 140, "long_word_share": 0.0,
                     "long_words": [], "pages": 2, "empty_pages": [], "replacement_chars": 0,
                     "misread_word_share": 0.0, "misread_words": []}
    assert json.loads(json.dumps(found)) == found


def test_a_few_glued_words_warn_and_many_are_bad():
    words = ["word"] * 197 + GLUED  # 3 of 200 words: 1.5 %
    found = check(doc(" ".join(words)))
    assert found["verdict"] == "warn"
    assert found["long_word_share"] == 3 / 200
    assert found["reasons"][0].startswith("3 of 200 words (1.5%) are longer than 25 letters")
    glued = check(doc(" ".join(["word"] * 47 + GLUED)))  # 3 of 50: 6 %
    assert glued["verdict"] == "bad" and glued["long_word_share"] == 3 / 50


def test_one_long_chemical_name_repeated_is_not_glue():
    text = " ".join(["glycosylphosphatidylinositol anchors the protein"] * 3)
    found = check(doc(text))
    assert found["verdict"] == "ok"
    assert found["long_word_share"] == pytest.approx(3 / 12, abs=1e-4)


@pytest.mark.parametrize("empty, verdict", [([], "ok"), ([2], "warn"), ([1, 2], "bad")])
def test_pages_without_text(empty, verdict):
    found = check(doc("Some text on the other pages.", pages=4, empty_pages=empty))
    assert found["verdict"] == verdict
    assert found["empty_pages"] == empty
    if empty:
        assert "need OCR" in found["reasons"][0]


def test_replacement_characters():
    one = check(doc("caf\ufffd au lait " + "plain words " * 200))
    assert one["verdict"] == "warn" and one["replacement_chars"] == 1
    many = check(doc("\ufffd\ufffd\ufffd broken text"))
    assert many["verdict"] == "bad" and many["replacement_chars"] == 3


def test_the_worst_finding_decides_and_every_reason_is_listed():
    found = check(doc(" ".join(["word"] * 47 + GLUED) + " \ufffd", pages=3, empty_pages=[3]))
    assert found["verdict"] == "bad"
    assert len(found["reasons"]) == 3


def test_word_counts_without_a_list_of_words_match_the_list():
    """check() counts words with subn and finds long words with their own pattern (issue
    13.2: a list of every word of a 200 MB file cost gigabytes); the figures are the same."""
    from glassrag.ingest import quality

    text = ("plain words 42 and " * 50 + "a" * 26 + " " + "b" * 25 + " x_" + "c" * 30 + "9"
            + " Überlange" + "ü" * 20)
    doc = Document("d", "d", "d.txt", "text", text, (Section("lines", 0, len(text)),))
    words = quality.WORD.findall(text)
    found = quality.check(doc)
    assert found["words"] == len(words)
    assert found["long_words"] == [w for w in words if len(w) > quality.LONG_WORD][:quality.EXAMPLES]
    assert found["long_words"] == ["a" * 26, "c" * 30, "Überlange" + "ü" * 20]


# ------------------------------------------------- misread letters (issue 27, item 9)

CLEAN = ("the support engineer checks the battery and the charger before the instrument is sent "
         "for repair, and the customer receives a report of every test that was made ")
OCR = ("tlie supp0rt eugineer checks tlie hattery aud the cliarger hefore the iustrument is seut "
       "for repair, aud tlie custorner receives a rep0rt of every fest tliat was rnade ")


def test_ocr_text_full_of_misread_letters_is_not_ok():
    clean = check(doc(CLEAN * 10))
    assert clean["verdict"] == "ok" and clean["misread_word_share"] == 0.0
    found = check(doc(OCR * 10))
    counted, wrong = quality.misread_words(OCR * 10)
    # 23 lower-case words a line ("supp0rt" and "rep0rt" hold a digit: not counted)
    assert counted == 23 * 10 and found["misread_word_share"] == round(len(wrong) / counted, 4)
    assert found["misread_word_share"] >= quality.MISREAD_BAD and found["verdict"] == "bad"
    assert "look like misread English words, e.g. 'tlie', 'eugineer', 'hattery'" in found["reasons"][0]
    assert "OCR" in found["reasons"][0]


def _mixed(misread: int, total: int = 200) -> str:
    return " ".join(["battery"] * (total - misread) + ["hattery"] * misread)


@pytest.mark.parametrize("misread, verdict", [(5, "ok"), (6, "warn"), (16, "warn"), (17, "bad")])
def test_the_misread_word_thresholds_are_inclusive(misread, verdict):
    # 6 / 200 = 3 % = MISREAD_WARN; 17 / 200 = 8.5 % = MISREAD_BAD
    assert check(doc(_mixed(misread)))["verdict"] == verdict


def test_a_short_text_is_not_judged_and_names_codes_and_endings_do_not_count():
    assert check(doc(_mixed(30, total=199)))["verdict"] == "ok"  # under 200 lower-case words
    counted, unknown = quality.unknown_words("Fennick TX-200 e-4107 qzxv-rq checked batteries charging "
                                             "quickly ellipsoidal /usr/share")
    # checked, batteries, charging, quickly: known with their endings; the path is not counted
    assert counted == 5 and unknown == ["ellipsoidal"]


def test_a_word_is_misread_when_undoing_one_confusion_makes_it_a_word():
    """Issue 49: words missing from the vocabulary ('webhook', 'kubectl', 'fuzzing', 'sternum',
    'scalability') made clean documents warn; only near misses of known words count."""
    for word in ("tlie", "rnodel", "hattery", "custorner", "cliarger", "iustrument"):
        assert not quality.known(word, quality.vocabulary()) and quality.misread(word), word
    for word in ("webhook", "kubectl", "fuzzing", "sternum", "scalability", "buzzard", "kiwi", "mathbf"):
        assert not quality.misread(word), word
    # a 3-letter word is not judged: "sbi" (a package) becomes a word with one confusion undone
    assert not quality.misread("sbi") and quality.misread("tlie")
    # one of its words with an English ending is no misreading either
    assert not quality.misread("batteries") and not quality.misread("battery")
    # rn -> m, n -> u, n -> r, l -> i, l -> t
    assert sorted(set(quality.undone("rnl"))) == ["ml", "rni", "rnt", "rrl", "rul"]


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_every_real_document_of_the_repository_is_ok_as_extracted():
    """The thresholds were measured on these (bench/ocr_words.py): no clean document warns."""
    from pathlib import Path

    from glassrag.demo import demo_docs
    from glassrag.ingest import load_document

    real = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "docs"
    for path in sorted([*real.iterdir(), *demo_docs().iterdir()]):
        document, _ = load_document(path, path.stem, path.read_bytes())
        counted, wrong = quality.misread_words(document.text)
        assert len(wrong) < quality.MISREAD_WARN * max(counted, 1), path.name
