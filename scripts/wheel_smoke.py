"""Tests what a pip user installs: builds the wheel, installs it with its [web,docs] extras
into a new venv (no editable install; run from a temporary folder, so the repository is not
on sys.path), then, with that venv's python, runs `glassrag demo`, serves the demo index on
a free 127.0.0.1 port and requests every page (each lab exhibit, each page's JSON twin, the
pages they link to), failing on any answer but 200 and on a development page without its log.

    python3 scripts/wheel_smoke.py            # build, install, check (what .ci/run calls)
    python3 scripts/wheel_smoke.py --keep     # and leave the temporary folder for a look

It exists because the suite runs on the editable install, where every file of the source tree
is there whether or not the wheel carries it (issue 27: the lab's templates were missing)."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# the pages a user opens; the exhibits and document pages are added from the installed app
PAGES = ["/ask", "/ask?q=What+does+error+E-4107+mean%3F", "/analytics", "/documents", "/glossary",
         "/development", "/lab", "/static/glassrag.css", "/static/lab.js", "/static/favicon.svg"]
LINK = re.compile(r'href="(/[^"#]*)"')


def build_and_install(work: Path) -> Path:
    """The wheel built from the repository, installed into work/venv; that venv's python."""
    wheels = work / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(wheels),
                    str(REPO)], check=True, cwd=work)
    (wheel,) = wheels.glob("glassrag-*.whl")
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True, cwd=work)
    python = work / "venv" / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", f"{wheel}[web,docs]"], check=True, cwd=work)
    return python


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=120) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def check(work: Path, repo: Path) -> int:
    """Run inside the installed venv: the CLI on the bundled demo, then every page."""
    import glassrag
    from glassrag.lab import EXHIBITS

    where = Path(glassrag.__file__).resolve()
    if repo in where.parents:
        print(f"glassrag was imported from the repository ({where}), not from the wheel", file=sys.stderr)
        return 1
    cli = Path(sys.executable).parent / "glassrag"
    index = work / "demo-index"
    subprocess.run([str(cli), "demo", "--index", str(index)], check=True, cwd=work)
    paths = dict(line.split("\t") for line in subprocess.run(
        [str(cli), "demo", "--where"], check=True, cwd=work, capture_output=True, text=True).stdout.splitlines())
    for name, path in paths.items():
        if not Path(path).exists():
            print(f"glassrag demo --where names {name} at {path}, which does not exist", file=sys.stderr)
            return 1
    if every_retriever(cli, index, work):
        return 1
    port = free_port()
    server = subprocess.Popen([str(cli), "serve", "--index", str(index), "--port", str(port)], cwd=work)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        return crawl(base, [*PAGES, *(f"/lab/{name}" for name in EXHIBITS)])
    finally:
        server.terminate()
        server.wait(timeout=30)


def every_retriever(cli: Path, index: Path, work: Path) -> int:
    """The stage contract's honesty in this install, whatever its extras (the smoke's venv has
    [web,docs] only: no neural runtime, no llama-cpp-python): every retriever the demo index's
    table holds (glassrag.retrieve `retrievers`), asked through `glassrag ask` alone, either
    answers, twice alike, or refuses with a message and no traceback when its entry says it
    cannot run here (issue 50: availability is honest for every entry)."""
    from glassrag.retrieve import retrievers
    from glassrag.store import open_store

    read = open_store(str(index)).read()
    failures, ran, refused = [], [], []
    for name, entry in retrievers(read).items():
        config = work / f"only-{name}.toml"
        config.write_text(f'[retrieve]\nretrievers = ["{name}"]\nobserve = []\n', encoding="utf-8")
        asked = [subprocess.run([str(cli), "ask", "What does error E-4107 mean?", "--index", str(index),
                                 "--config", str(config), "--json"], cwd=work, capture_output=True, text=True)
                 for _ in range(2)]
        if entry.runs(read):
            tops = [[(h.get("chunk_id"), h.get("score")) for t in json.loads(r.stdout)["trace"] if t["name"] == name
                     for h in t.get("hits", [])[:10]] if r.returncode == 0 else None for r in asked]
            if tops[0] is None or tops[0] != tops[1] or not tops[0]:
                failures.append(f"{name} runs here by its entry, but asked twice: rc {asked[0].returncode}, "
                                f"{asked[0].stderr[-300:]!r}")
            ran.append(name)
        else:
            r = asked[0]
            if r.returncode == 0 or "Traceback" in r.stderr or not r.stderr.strip():
                failures.append(f"{name} cannot run here by its entry, yet ask gave rc {r.returncode}: {r.stderr[-300:]!r}")
            refused.append(name)
    print(f"every retriever of the demo's table in this install: {len(ran)} answered twice alike "
          f"({', '.join(ran)}), {len(refused)} refused with a message ({', '.join(refused)}), "
          f"{len(failures)} wrong")
    for f in failures:
        print("  " + f, file=sys.stderr)
    return 1 if failures else 0


def crawl(base: str, pages: list[str]) -> int:
    """Requests each page, its JSON twin and every page it links to (one level), once each."""
    seen: dict[str, int] = {}
    failures = []
    queue = list(dict.fromkeys(p for page in pages for p in (page, json_twin(page))))
    depth = {p: 0 for p in queue}
    while queue:
        path = queue.pop(0)
        if path in seen:
            continue
        status, body = get(base + path)
        seen[path] = status
        if status != 200:
            failures.append(f"{status} {path}: {body[:300]!r}")
            continue
        if path.startswith("/development.json") and (json.loads(body).get("missing") or
                                                     not json.loads(body)["experiments"]):
            failures.append(f"/development.json shows no experiment log: {body[:300]!r}")
        if depth[path] == 0 and not path.endswith(".json") and not path.startswith("/static/"):
            for link in LINK.findall(body):
                link = link.replace("&amp;", "&")
                if link not in depth:
                    depth[link] = 1
                    queue.append(link)
    print(f"{len(seen)} pages requested, {len(failures)} not 200")
    for f in failures:
        print("  " + f, file=sys.stderr)
    return 1 if failures else 0


def json_twin(path: str) -> str:
    if path.startswith("/static/"):
        return path
    url = urllib.parse.urlsplit(path)
    return urllib.parse.urlunsplit(url._replace(path=url.path + ".json"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--check", type=Path, help=argparse.SUPPRESS)  # the second half, inside the venv
    parser.add_argument("--repo", type=Path, default=REPO, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.check:
        return check(args.check, args.repo)
    work = Path(tempfile.mkdtemp(prefix="glassrag-wheel-"))
    try:
        python = build_and_install(work)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        script = work / "wheel_smoke.py"  # a copy, so that no folder of the repository is on sys.path
        shutil.copy(__file__, script)
        return subprocess.run([str(python), str(script), "--check", str(work), "--repo", str(REPO)], cwd=work, env=env).returncode
    finally:
        if args.keep:
            print(f"left {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
