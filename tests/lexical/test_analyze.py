from glassrag.lexical.analyze import Analyzer


def test_identifiers_kept_whole_and_split():
    plain = Analyzer(stopwords="none", stem=False)
    assert plain("Error E-4107 on the TX-2000") == [
        "error", "e-4107", "e", "4107", "on", "the", "tx-2000", "tx", "2000"]


def test_hyphenated_words_without_digits_are_only_split():
    assert Analyzer(stopwords="none", stem=False)("two-face check") == ["two", "face", "check"]


def test_stopwords_and_stemming():
    a = Analyzer(stopwords="lucene", stem=True)
    assert a("The batteries are charging in the chargers") == ["batteri", "charg", "charger"]
    assert Analyzer(stopwords="english")("What is it called?") == ["call"]


def test_identifiers_are_not_stemmed_and_unicode_words_survive():
    a = Analyzer()
    assert a("BP-400s") == ["bp-400s", "bp", "400s"]
    assert a("Grüße São Paulo") == ["grüße", "são", "paulo"]


def test_params_are_json_safe():
    assert Analyzer().params() == {"stopwords": "lucene", "stem": True, "identifiers": True,
                                   "min_length": 1}


def test_dash_look_alikes_match_a_plain_hyphen_on_both_sides():
    a = Analyzer(stopwords="none", stem=False)
    typed = a("FAA-2020-0686")
    assert typed == ["faa-2020-0686", "faa", "2020", "0686"]
    for printed in ("FAA\u20132020\u20130686", "FAA\u20112020\u20110686", "FAA\u22122020\u22120686",
                    "FAA\u20142020\u20140686", "FAA\uff0d2020\uff0d0686"):
        assert a(printed) == typed, printed
    # an en dash in the query finds the plain hyphen of the document too
    assert a("FAA\u20132020\u20130686") == a("FAA-2020-0686")


def test_fixed_width_spaces_split_and_soft_hyphens_vanish():
    a = Analyzer(stopwords="none", stem=False)
    assert a("12\u00a0mm") == a("12 mm") == ["12", "mm"]
    assert a("5\u202fkg") == ["5", "kg"]
    assert a("hyphen\u00adation") == ["hyphenation"]


def test_an_unknown_stopword_list_is_named_with_the_valid_ones():
    import pytest

    from glassrag.errors import UnknownNameError

    with pytest.raises(UnknownNameError) as info:
        Analyzer("french")
    assert info.value.problem == "unknown stopword list 'french'"
    assert info.value.hint == "choose one of: english, lucene, none"


def test_a_token_with_a_digit_is_not_stemmed():
    """Snowball would cut '2running' to '2run': an identifier-like token is kept as written."""
    assert Analyzer("none", stem=True, identifiers=False)("2running e4107running running") == [
        "2running", "e4107running", "run"]
