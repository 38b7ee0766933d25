"""`heading-body`: the heading chunker without heading-only chunks (issue 49, item 8)."""

from __future__ import annotations

from pathlib import Path

from glassrag.chunk import make_chunker
from glassrag.ingest.markdown import load_markdown
from glassrag.schema import Document

GUIDE = """# Cluster guide

## Tools

### Install

Run the installer on every node, then reboot.

### Upgrade

Upgrade one node at a time.

## Support

Write to the help desk.
"""


def guide() -> Document:
    ex = load_markdown(Path("guide.md"), GUIDE.encode())
    return Document("guide", ex.title, "guide.md", ex.format, ex.text, ex.sections, ex.metadata)


def test_the_heading_chunker_makes_heading_only_chunks():
    texts = [c.text for c in make_chunker("heading", size=200).chunk(guide())]
    assert texts[:2] == ["Cluster guide", "Tools"]


def test_a_bare_heading_joins_the_chunk_after_it():
    chunks = make_chunker("heading-body", size=200).chunk(guide())
    assert [c.text for c in chunks] == [
        "Cluster guide\nTools\nInstall\nRun the installer on every node, then reboot.",
        "Upgrade\nUpgrade one node at a time.",
        "Support\nWrite to the help desk."]
    assert chunks[0].locator == "§ Install"  # the section holding most of it
    assert chunks[0].heading_path == ("Cluster guide", "Tools", "Install")


def test_a_bare_heading_stays_alone_when_joining_would_pass_size():
    # "Cluster guide Tools Install Run the installer on every node, then reboot." is 12 words
    for size, first in ((12, "Cluster guide\nTools\nInstall\nRun the installer on every node, then reboot."),
                        (11, "Cluster guide\nTools")):
        texts = [c.text for c in make_chunker("heading-body", size=size).chunk(guide())]
        assert texts[0] == first, size
    # in characters, as pack measures: the span's length
    text = guide().text
    joined = len("Cluster guide\nTools")
    chunks = make_chunker("heading-body", size=joined, unit="chars").chunk(guide())
    assert chunks[0].text == "Cluster guide\nTools" and text.startswith(chunks[0].text)
