"""Properties of the analyzer over generated text (issue 13.9's property tests)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from glassrag.lexical.analyze import Analyzer

SETTINGS = st.builds(Analyzer, st.sampled_from(["none", "lucene", "english"]), st.booleans(),
                     st.booleans())
# letters of several scripts, digits, the identifier joiners, white space and punctuation
TEXT = st.lists(st.sampled_from(list("aZéß İΣσ0479-./_ \n\t,;!?'\"()") + ["E-4107", "TX-2000"]),
                max_size=40).map("".join)


@given(SETTINGS, TEXT)
def test_tokens_are_non_empty_lowercase_and_have_no_white_space(analyzer: Analyzer, text: str):
    for token in analyzer(text):
        assert token and not any(ch.isspace() for ch in token)
        assert token == token.lower()


@given(SETTINGS, TEXT, TEXT)
def test_analysis_does_not_depend_on_what_was_analysed_before(analyzer: Analyzer, a: str, b: str):
    """The stem cache is an optimisation: a fresh analyzer gives the same tokens."""
    analyzer(a)
    fresh = Analyzer(**analyzer.params())
    assert analyzer(b) == fresh(b)


@given(SETTINGS, TEXT, TEXT)
def test_texts_joined_by_a_line_break_give_the_tokens_of_each(analyzer: Analyzer, a: str, b: str):
    assert analyzer(a + "\n" + b) == analyzer(a) + analyzer(b)


@given(SETTINGS, st.text(max_size=40))
def test_any_text_is_analysed_without_error(analyzer: Analyzer, text: str):
    """Any Unicode, lone surrogates included (a question can hold one)."""
    assert isinstance(analyzer(text), list)


WORDS = st.lists(st.sampled_from(["the", "of", "sensor", "tilt", "what", "is", "E-4107", "4.2", "TX-2000",
                                  "a/b", "x-y", "Calibration", "running"]), max_size=12).map(" ".join)


@given(st.sampled_from(["none", "lucene", "english"]), WORDS)
def test_no_stopword_survives_and_nothing_else_is_lost(stopwords: str, text: str):
    from glassrag.lexical.stopwords import STOPWORDS

    plain = Analyzer(stopwords, stem=False, identifiers=False)
    everything = Analyzer("none", stem=False, identifiers=False)
    kept = plain(text)
    assert not set(kept) & STOPWORDS[stopwords]
    assert kept == [w for w in everything(text) if w not in STOPWORDS[stopwords]]


@given(WORDS)
def test_an_identifier_is_kept_whole_before_its_parts_only_with_identifiers(text: str):
    whole = Analyzer("none", stem=False, identifiers=True)(text)
    parts = Analyzer("none", stem=False, identifiers=False)(text)
    # the identifiers are exactly the runs joined by - . / that hold a digit; removing them
    # leaves the tokens without identifiers
    ids = [w for w in whole if any(c in "-./" for c in w)]
    assert all(any(c.isdigit() for c in w) for w in ids)
    assert [w for w in whole if w not in ids] == parts
    assert len(ids) == sum(1 for w in text.split() if any(c.isdigit() for c in w) and any(c in "-./" for c in w))


@given(WORDS)
def test_case_and_dash_look_alikes_do_not_matter(text: str):
    analyzer = Analyzer("english", stem=True, identifiers=True)
    assert analyzer(text.upper()) == analyzer(text)
    assert analyzer(text.replace("-", "\u2013")) == analyzer(text)
    assert analyzer(text.replace(" ", "\u00a0")) == analyzer(text)


@given(WORDS)
def test_stemming_leaves_tokens_with_digits_alone(text: str):
    stemmed = Analyzer("none", stem=True, identifiers=True)(text)
    plain = Analyzer("none", stem=False, identifiers=True)(text)
    assert len(stemmed) == len(plain)
    for s, p in zip(stemmed, plain):
        assert s == p if any(c.isdigit() for c in p) else s.startswith(p[:3])
