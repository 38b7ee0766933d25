"""Markdown: `#` headings open sections located as `§ <heading text>`; front matter is metadata.

The document text is the Markdown without its front matter and without the `#` marks of
headings, so headings stay readable inside the passages that hold them. Inline markup
(links, emphasis, inline code) becomes its own words everywhere outside code fences
(`plain_inline`), so a locator reads `§ Trio`, not `§ [Trio](https://…)`, and a quoted
answer holds no `**`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from glassrag.ingest.base import BEFORE_HEADINGS, Extracted, TextBuilder, decode, heading_locators
from glassrag.ingest.titles import is_junk, readable_stem, tidy

HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
# inline markup, each replaced by the words it marks (CommonMark's shapes, simplified)
INLINE = (
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),                     # ![alt](src)
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),                      # [text](url)
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1"),                     # [text][ref]
    (re.compile(r"<((?:https?|mailto):[^>\s]+)>"), r"\1"),              # <https://…>
    (re.compile(r"`([^`]+)`"), r"\1"),                                # `code`
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),              # **strong**, __strong__
    (re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])"), r"\1"),  # *em*
    (re.compile(r"(?<!\w)_(?=[^\s_])(.+?)(?<=[^\s_])_(?!\w)"), r"\1"),   # _em_ (not snake_case)
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"\1"),                     # ~~struck~~
)


def plain_inline(text: str) -> str:
    """`text` without Markdown's inline markup, its own words kept:
    `[Trio](https://trio.rtfd.io) is **fast**` -> `Trio is fast`."""
    for pattern, words in INLINE:
        text = pattern.sub(words, text)
    return text


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """`---`-fenced `key: value` lines at the top become metadata (flat, strings only)."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end < 0:
        return {}, text
    meta: dict[str, Any] = {}
    for line in text[4:end].splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            meta[key.strip()] = value.strip().strip("'\"")
    rest = text[end + 4 :]
    return meta, rest[1:] if rest.startswith("\n") else rest


def markdown_title(front_matter: str, first_h1: str, body: str, stem: str) -> str:
    """The first good title (`glassrag.ingest.titles`): the front matter's `title`, the first
    `#` heading, a heading of any level on the body's first line (`## HMDA Filing FAQ`, even
    without the space CommonMark wants: `##Institution Identifiers`), the file name made
    readable. A section's name (`Introduction`) or a placeholder is no title."""
    first_line = next((line for line in body.splitlines() if line.strip()), "")
    opening = re.match(r"^\s{0,3}#{1,6}\s*(.+?)\s*#*\s*$", first_line)
    for candidate in (front_matter, first_h1, opening.group(1) if opening else ""):
        candidate = tidy(plain_inline(candidate))
        if candidate and not is_junk(candidate):
            return candidate
    return readable_stem(stem)


def load_markdown(path: Path, data: bytes) -> Extracted:
    meta, body = split_front_matter(decode(path, data))
    builder = TextBuilder()
    builder.open_section(BEFORE_HEADINGS)
    stack: list[tuple[int, str]] = []
    first_h1 = ""
    in_fence = False
    block: list[str] = []

    def flush() -> None:
        if block:
            text = "\n".join(block).strip("\n")
            if text.strip():
                builder.add(text)
            block.clear()

    for line in body.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else HEADING.match(line)
        if match is None:
            block.append(line if in_fence or FENCE.match(line) else plain_inline(line))
            continue
        flush()
        level, heading = len(match.group(1)), plain_inline(match.group(2))
        if not first_h1 and level == 1:
            first_h1 = heading
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        builder.open_section(f"§ {heading}", tuple(h for _, h in stack))
        builder.add(heading)
    flush()
    text, sections = builder.build()
    sections = heading_locators(sections)
    return Extracted(
        title=markdown_title(meta.get("title", ""), first_h1, body, path.stem),
        text=text,
        sections=sections,
        format="markdown",
        metadata=meta,
    )
