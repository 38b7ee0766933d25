"""The stopword lists are data, which a mutation tester does not change (mutmut 3 mutates
code inside functions only): they are pinned here instead."""

from glassrag.lexical.stopwords import ENGLISH, LUCENE, STOPWORDS

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (EnglishAnalyzer.java), the list Pyserini
# and bm25s use for their BM25 baselines
LUCENE_ENGLISH_STOP_WORDS = {
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they",
    "this", "to", "was", "will", "with"}


def test_lucene_is_lucenes_33_words():
    assert LUCENE == LUCENE_ENGLISH_STOP_WORDS and len(LUCENE) == 33


def test_english_adds_question_and_function_words_to_lucene():
    assert LUCENE < ENGLISH and len(ENGLISH) == 152
    assert {"what", "how", "which", "does", "who", "why", "when", "where", "can't", "i'm"} <= ENGLISH
    assert not {"sensor", "error", "battery", "reset", "calibration"} & ENGLISH


def test_the_lists_by_name():
    assert STOPWORDS == {"none": frozenset(), "lucene": LUCENE, "english": ENGLISH}
