"""A golden set whose answer texts were copied from a Markdown source (issue 49, item 3): the
index holds the Markdown without its inline markup, so matching ignores that markup, and an
answer found under another locator than the one named says where it is."""

from __future__ import annotations

from pathlib import Path

from glassrag.chunk import make_chunker
from glassrag.evaluate.golden import Question, Span, answer_forms, check_against
from glassrag.evaluate.relevance import Judge, quote_correct, visible
from glassrag.ingest import load_document

SOURCE = """# Cluster setup

## Tools

Install `kubectl` and **helm 3.12** first; see [the install guide](https://example.org/install).
The _webhook_ listens on port 8443.

## Upgrades

Run `helm upgrade` during the maintenance window.
"""


def markdown_doc(tmp_path: Path):
    path = tmp_path / "setup.md"
    path.write_text(SOURCE)
    doc, _ = load_document(path, "setup", path.read_bytes())
    return doc


COPIED = "Install `kubectl` and **helm 3.12** first; see [the install guide](https://example.org/install)."
PLAIN = "Install kubectl and helm 3.12 first; see the install guide."


def test_the_index_holds_the_markdown_without_its_markup(tmp_path: Path):
    doc = markdown_doc(tmp_path)
    assert PLAIN in doc.text and COPIED not in doc.text


def test_answer_forms_are_the_text_as_written_then_without_markup():
    assert answer_forms(COPIED) == (COPIED, PLAIN)
    assert answer_forms("## Tools\nThe _webhook_  listens") == ("## Tools The _webhook_ listens",
                                                               "Tools The webhook listens")
    assert answer_forms("snake_case stays") == ("snake_case stays",)


def test_an_answer_copied_from_markdown_passes_the_check(tmp_path: Path):
    doc = markdown_doc(tmp_path)
    q = Question("q1", "?", True, line=3, answers=(
        Span("setup", "§ Tools", COPIED), Span("setup", "", "## Tools\n\nInstall `kubectl`"),
        Span("setup", "§ Tools", "The _webhook_ listens on port 8443.")))
    assert check_against([q], {"setup": doc}) == []


def test_an_answer_under_another_locator_names_where_it_is(tmp_path: Path):
    doc = markdown_doc(tmp_path)
    q = Question("q2", "?", True, line=4, answers=(Span("setup", "§ Tools", "Run `helm upgrade`"),
                                                   Span("setup", "§ Tools", "not there at all")))
    assert check_against([q], {"setup": doc}) == [
        (4, "q2: answer text is not verbatim in setup § Tools (it is in '§ Upgrades'): 'Run `helm upgrade`'"),
        (4, "q2: answer text is not verbatim in setup § Tools: 'not there at all'")]


def test_the_judge_matches_a_copied_answer_and_keeps_the_form_it_found(tmp_path: Path):
    doc = markdown_doc(tmp_path)
    chunks = make_chunker("heading").chunk(doc)
    tools = next(c for c in chunks if c.locator == "§ Tools")
    q = Question("q1", "?", True, answers=(Span("setup", text=COPIED),))
    j = Judge(chunks).judge(q)
    assert j.relevant_chunks() == {tools.id} and j.intact and j.texts == {"a0:setup": PLAIN}
    assert visible(j, q, [tools.text]) and quote_correct(j, q, PLAIN)
    # a text no chunk holds, as written or plain, is judged as written, and not intact
    missing = Judge(chunks).judge(Question("q", "?", True, answers=(Span("setup", text="**gone**"),)))
    assert missing.texts == {"a0:setup": "**gone**"} and not missing.intact
