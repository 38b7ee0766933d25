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
