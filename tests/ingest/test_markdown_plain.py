"""Markdown's inline markup is removed from locators, titles and text, its words kept
(issue 27: `§ [Trio](https://…)` as a locator, `**` inside quoted answers); code fences keep it."""

from pathlib import Path

from glassrag.ingest.markdown import load_markdown, plain_inline


def test_links_emphasis_and_code_become_their_words():
    assert plain_inline("[Trio](https://trio.readthedocs.io) is **fast**") == "Trio is fast"
    assert plain_inline("see ![the logo](logo.png) and [the guide][guide]") == "see the logo and the guide"
    assert plain_inline("run `pip install x`, *then* _restart_ ~~twice~~") == "run pip install x, then restart twice"
    assert plain_inline("<https://example.org> __bold__") == "https://example.org bold"


def test_what_only_looks_like_markup_is_kept():
    assert plain_inline("snake_case_name and 2 * 3 * 4") == "snake_case_name and 2 * 3 * 4"
    assert plain_inline("* a bullet") == "* a bullet"


def test_locators_titles_and_text_are_plain_but_code_fences_are_not():
    md = load_markdown(Path("n.md"), b"# The **Trio** guide\n\n## [Trio](https://trio.rtfd.io)\n\n"
                                     b"Trio is **not** enabled by default.\n\n```\nx = **y**\n```\n")
    assert md.title == "The Trio guide"
    assert [s.locator for s in md.sections] == ["§ The Trio guide", "§ Trio"]
    assert "Trio is not enabled by default." in md.text
    assert "x = **y**" in md.text
    assert "](" not in md.text
