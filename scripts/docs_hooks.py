"""MkDocs hooks for the documentation site (mkdocs.yml names this file; `make docs` builds it).

Two things the site needs that MkDocs does not do by itself:

- Headings get GitHub's anchors, so a link such as `gate.md#the-answerability-model` works on
  GitHub and in the site alike, and `mkdocs build --strict` checks it: lower case, every
  character that is not a letter, digit, `_`, `-` or space removed, each space a `-`
  (`MMR (λ = 0.7)` gives `mmr-λ--07`; Python-Markdown's own slug would give `mmr-07`).
  docs/measurements.md, which `glassrag experiment report` generates, links its headings this way.
- The site's home page is the README (one text, not two copies): its links into `docs/` are
  rewritten relative to the site (`docs/gate.md` -> `gate.md`), and a link that leaves `docs/`
  fails the strict build like any broken link.
"""

from __future__ import annotations

import re
from pathlib import Path

NOT_IN_SLUG = re.compile(r"[^\w\- ]")


def github_slug(text: str, separator: str = "-") -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, each space `separator`."""
    return NOT_IN_SLUG.sub("", text.strip().lower()).replace(" ", separator)


def readme_as_home(readme: str) -> str:
    """The README with its `docs/` links made relative to the site's root."""
    return re.sub(r"\]\(docs/", "](", readme)


def on_config(config, **kwargs):
    config.mdx_configs.setdefault("toc", {})["slugify"] = github_slug
    return config


def on_files(files, config, **kwargs):
    from mkdocs.structure.files import File

    readme = Path(config.config_file_path).parent / "README.md"
    files.append(File.generated(config, "index.md", content=readme_as_home(readme.read_text(encoding="utf-8"))))
    return files
