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
