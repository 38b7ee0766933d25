"""Issue 51.5: ingest does not follow a symbolic link out of the folder it was given. A shared
corpus with a link to a system file (or the user's) made that file a served document; now each
such link is a failure of its own, named, and the rest of the folder is ingested."""

from __future__ import annotations

from pathlib import Path

from glassrag.cli import main
from glassrag.cli.ingest import EXIT_SOME_FILES_FAILED
from glassrag.ingest import walk
from glassrag.store import EmbeddedStore

SECRET = "ZQXJ private note of the user"


def test_links_leaving_the_corpus_are_refused_one_by_one(tmp_path: Path, corpus: Path, capsys) -> None:
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET}.\n")
    (outside / "folder" / "more.md").write_text(f"# More\n\n{SECRET} again.\n")
    (corpus / "linked.md").symlink_to(outside / "secret.md")
    (corpus / "linked-folder").symlink_to(outside / "folder")
    (corpus / "up.md").symlink_to(Path("..") / "outside" / "secret.md")  # relative, still outside
    (corpus / "alias.md").symlink_to(corpus / "manual.md")  # inside: read as before
    index = tmp_path / "index"
    assert main(["ingest", str(corpus), "--index", str(index)]) == EXIT_SOME_FILES_FAILED  # the rest was ingested
    said = " ".join(capsys.readouterr().err.split())
    for name in ("linked.md", "linked-folder", "up.md"):
        assert f"{corpus / name}: a symbolic link to outside {corpus}: not read" in said
    documents = EmbeddedStore(index).read().documents
    assert sorted(documents) == ["alias", "manual", "notes", "scanner", "travel"]
    assert not any(SECRET in d.text for d in documents.values())


def test_a_link_to_a_system_file_is_not_read(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "passwd.txt").symlink_to("/etc/passwd")
    found = walk([docs])
    assert found.files == []
    assert [p.reason for p in found.problems] == [f"a symbolic link to outside {docs}: not read"]


def test_a_link_loop_inside_is_still_reported_as_before(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "a").mkdir(parents=True)
    (docs / "a" / "note.txt").write_text("A note.\n")
    (docs / "a" / "back").symlink_to(docs)  # inside, and a loop
    found = walk([docs])
    assert [p.name for p, _ in found.files] == ["note.txt"]
    assert found.problems == [] and any("symlink loop" in reason for _, reason in found.skipped)
