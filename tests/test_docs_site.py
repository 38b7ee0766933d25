"""The README is a README, and the documentation site built from docs/ has no broken link (issue 49,
item 11): the README stays under 20 KB with its two commands, every link it makes resolves (anchors
included, as GitHub and the site both make them), every page is in the site's nav and linked from the
README, and `mkdocs build --strict` builds the site offline, loading nothing from another host."""

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"

spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "scripts" / "docs_hooks.py")
hooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hooks)

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def outside_fences(text: str) -> list[str]:
    lines, fence = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence:
            lines.append(line)
    return lines


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, made as GitHub makes them (and the site, by the hook)."""
    found = set()
    for line in outside_fences(page.read_text(encoding="utf-8")):
        m = re.match(r"#{1,6} (.+)", line)
        if m:
            found.add(hooks.github_slug(re.sub(r"[`*]", "", m.group(1))))
    return found


def relative_links(text: str) -> list[str]:
    return [t for line in outside_fences(text) for t in LINK.findall(line)
            if not re.match(r"[a-z]+:", t)]


def nav_pages() -> list[str]:
    return re.findall(r":\s+(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)


def test_github_slug():
    # the heading `### MMR (λ = 0.7) over the top 20 (`mmr`)` as docs/measurements.md links it
    assert hooks.github_slug("MMR (λ = 0.7) over the top 20 (mmr)") == "mmr-λ--07-over-the-top-20-mmr"
    assert hooks.github_slug("What make demo does and shows") == "what-make-demo-does-and-shows"
    assert hooks.readme_as_home("[a](docs/gate.md#x) ![b](docs/screenshots/ask.png)") == \
        "[a](gate.md#x) ![b](screenshots/ask.png)"


def test_the_readme_is_under_20_kb():
    assert len(README.read_bytes()) < 20_000


def test_the_quick_start_is_two_commands_the_makefile_has():
    text = README.read_text(encoding="utf-8")
    block = re.search(r"## Quick start\n.*?```sh\n(.*?)```", text, re.S)
    assert block, "the README has no quick start block"
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("demo", "test", "docs"):
        assert re.search(rf"^{target}:", makefile, re.M), target


def test_every_readme_link_resolves_and_stays_in_docs():
    """A link of the README names a file of docs/ (the site's home page is the README, so a link that
    leaves docs/ would break there), and an anchor names a heading of that page."""
    links = relative_links(README.read_text(encoding="utf-8"))
    assert len(links) >= 20
    broken = []
    for link in links:
        path, _, anchor = link.partition("#")
        target = ROOT / path if path else README
        if not path.startswith("docs/") and path:
            broken.append(f"{link}: not under docs/")
        elif not target.is_file():
            broken.append(f"{link}: no such file")
        elif anchor and anchor not in anchors(target):
            broken.append(f"{link}: no heading makes #{anchor}")
    assert broken == []


def test_every_page_is_in_the_nav_and_linked_from_the_readme():
    nav = nav_pages()
    pages = sorted(p.name for p in DOCS.glob("*.md"))
    assert sorted(set(nav) - {"index.md"}) == pages
    linked = {link.partition("#")[0] for link in relative_links(README.read_text(encoding="utf-8"))}
    assert [p for p in pages if f"docs/{p}" not in linked] == []


def build(root: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=root, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # starts mkdocs in another process
def test_the_site_builds_strictly_and_loads_nothing_from_another_host(tmp_path):
    pytest.importorskip("mkdocs", reason="the site extra is not installed: pip install -e '.[site]'")
    r = build(ROOT, tmp_path / "site")
    assert r.returncode == 0, r.stderr
    site = tmp_path / "site"
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Quick start" in home and 'src="screenshots/ask.png"' in home
    assert (site / "screenshots" / "ask.png").is_file()
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        fetched = re.findall(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=\"(?:https?:)?//[^\"]*\"", html)
        assert fetched == [], (page.name, fetched)
    for css in site.rglob("*.css"):
        assert not re.search(r"(@import|url\()\s*[\"']?(https?:)?//", css.read_text(encoding="utf-8")), css.name


@pytest.mark.slow  # starts mkdocs in another process
def test_a_broken_anchor_fails_the_strict_build(tmp_path):
    """The strict build is what catches broken links: a copy of the site's sources with one bad anchor."""
    pytest.importorskip("mkdocs", reason="the site extra is not installed: pip install -e '.[site]'")
    copy = tmp_path / "repo"
    shutil.copytree(DOCS, copy / "docs")
    (copy / "scripts").mkdir()
    for name in ("mkdocs.yml", "README.md", "scripts/docs_hooks.py"):
        shutil.copy(ROOT / name, copy / name)
    page = copy / "docs" / "install.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nSee [the gate](gate.md#no-such-heading).\n", encoding="utf-8")
    r = build(copy, tmp_path / "site")
    assert r.returncode != 0
    assert "no-such-heading" in r.stderr
