"""Line-end hyphens: each rule of glassrag.ingest.hyphens, and the lines it leaves out."""

from glassrag.ingest.hyphens import Vocabulary, join_lines, join_marks, keep_hyphen


def test_rule_1_the_joined_word_elsewhere_joins():
    words = Vocabulary(["results are similar", "a hand-tagged set"])
    assert not keep_hyphen("sim", "ilar", words)
    assert join_marks("sim\x02ilar", words) == "similar"


def test_rule_2_the_hyphenated_form_elsewhere_keeps():
    words = Vocabulary(["a hand-tagged set"])
    assert keep_hyphen("hand", "tagged", words)
    assert join_marks("from hand\x02tagged data", words) == "from hand-tagged data"


def test_rule_1_wins_over_rule_2():
    words = Vocabulary(["an endpoint", "an end-point"])
    assert not keep_hyphen("end", "point", words)


def test_rule_3_a_capital_or_digit_at_the_junction_keeps():
    words = Vocabulary()
    assert keep_hyphen("HMM", "based", words)
    assert keep_hyphen("Lucene", "BM25", words)
    assert keep_hyphen("ISO", "8601", words)


def test_rule_4_two_words_of_the_document_keep_else_join():
    words = Vocabulary(["the dual space", "is encoded", "cosine similarity is based on"])
    assert keep_hyphen("cosine", "based", words)
    assert not keep_hyphen("untrustwor", "thy", words)
    assert not keep_hyphen("dual", "encoder", words)  # "encoder" is not a word of it


def test_the_halves_of_a_break_are_not_evidence():
    words = Vocabulary(["a line that ends in sur-", "face and more", "x\x02y z"])
    assert "sur" not in words.words and "face" not in words.words
    assert "and" in words.words and "z" in words.words and "y" not in words.words


def test_join_lines_at_a_hyphen_and_with_a_space():
    words = Vocabulary(["the information desk"])
    assert join_lines("the infor-", "mation desk", words) == "the information desk"
    assert join_lines("the desk", "is open", words) == "the desk is open"
    assert join_lines("pro\u2011", "cesses run", Vocabulary(["processes"])) == "processes run"
