"""Stopword lists, by name.

- `lucene`: the 33 words of Lucene's EnglishAnalyzer (the list BM25 baselines such as
  Pyserini and bm25s use), so benchmark numbers are comparable.
- `english`: a longer list of English function words, question words included
  (what, how, which, does, ...), which matter when the queries are natural questions.
"""

from __future__ import annotations

LUCENE = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the "
    "their then there these they this to was will with".split()
)

ENGLISH = LUCENE | frozenset(
    """
    about above after again against all also am any because been before being below
    between both can could did do does doing down during each few from further had has
    have having he her here hers herself him himself his how i i'm its itself just me
    more most my myself nor now off once only other our ours ourselves out over own same
    she should so some than that's them themselves those through too under until up very
    we were what when where which while who whom why would you your yours yourself
    yourselves s t d ll m re ve y can't don't doesn't isn't aren't wasn't weren't
    won't shouldn't couldn't wouldn't let's there's here's what's who's
    """.split()
)

STOPWORDS: dict[str, frozenset[str]] = {"none": frozenset(), "lucene": LUCENE, "english": ENGLISH}
