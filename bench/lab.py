"""The lab's response times on the demo: each exhibit's page opened once (cold: what it
computes the first time for an index generation), then one setting changed at a time,
each change timed as the web app answers it (in process, Starlette's TestClient: the
routing, the exhibit's computation and the template; no network).

    python bench/lab.py             (writes bench/results/lab.json and lab.md)
    python bench/lab.py --scifact   (the lab on the whole SciFact corpus: lab_scifact.json and .md)

The demo index is built, its reranker trained and its gate calibrated in a temporary
folder, as `glassrag demo` does. A change that was seen before is a lookup; every change
timed here is new to the server process.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

from glassrag.config import Config
from glassrag.demo import demo_docs, demo_golden
from glassrag.evaluate.golden import load_golden
from glassrag.evaluate.tune import calibrate_index, train_reranker
from glassrag.indexer import build_index
from glassrag.store import EmbeddedStore

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from common import RESULTS, save  # noqa: E402

# each exhibit's single changes, from its default page
CHANGES: dict[str, list[dict[str, object]]] = {
    "cuts": [{"chunker": "fixed"}, {"size": 120}, {"overlap": 20}, {"unit": "tokens"}, {"chunker": "sentence"},
             {"chunker": "recursive"}, {"size": 60}, {"doc": "faq"}],
    "bm25": [{"k1": 0.9, "b": 0.4}, {"k1": 1.1}, {"b": 0.55}, {"k1": 0.7, "b": 0.3}, {"q": "error E-2210 battery"},
             {"k1": 1.1, "commit": 1}],
    "lsa": [{"word": "battery"}, {"dims": 16}, {"view": "words"}, {"a": "return", "b": "refund"}, {"dims": 4}],
    "fusion": [{"method": "rrf"}, {"method": "rrf", "k": 30}, {"w": 0.5}, {"w": 0.3}, {"depth": 3},
               {"pick": "q002"}],
    "rerank": [{"l2": 10.0}, {"l2": 0.1}, {"mmr": 0.6}, {"l2": 100.0}, {"q": "q073"}],
    "losses": [{"k": 3}, {"budget": 500}, {"gate": "off"}, {"rerank": "none"}, {"k": 8}],
}


def build(folder: Path) -> None:
    config = Config()
    index, report = build_index([demo_docs()], config)
    questions = load_golden(demo_golden())
    index.extra["reranker"] = train_reranker(index, config, questions, str(demo_golden()))
    index.extra["gate"], index.extra["reader"] = calibrate_index(index, config, questions, config.gate.rule,
                                                                 str(demo_golden()))
    EmbeddedStore(folder).write(index)


def timed(client, url: str) -> float:
    t0 = time.perf_counter()
    r = client.get(url)
    seconds = time.perf_counter() - t0
    if r.status_code != 200:
        raise SystemExit(f"{url}: {r.status_code} {r.text[:300]}")
    return seconds


def main() -> None:
    from starlette.testclient import TestClient

    from glassrag.web.server import create_app

    with tempfile.TemporaryDirectory(prefix="glassrag-lab-bench-") as tmp:
        folder = Path(tmp) / "demo"
        build(folder)
        client = TestClient(create_app([folder]), base_url="http://127.0.0.1")
        rows = []
        for name, changes in CHANGES.items():
            cold = timed(client, f"/lab/{name}")
            times = []
            for change in changes:
                url = f"/lab/{name}?" + urlencode(change)
                times.append({"change": urlencode(change), "seconds": timed(client, url)})
            slowest = max(times, key=lambda t: t["seconds"])
            rows.append({"exhibit": name, "cold_seconds": cold, "changes": times,
                         "median_seconds": statistics.median(t["seconds"] for t in times),
                         "slowest": slowest})
            print(f"{name:8s} cold {cold:6.3f} s   change: median {rows[-1]['median_seconds']:.3f} s, "
                  f"slowest {slowest['seconds']:.3f} s ({slowest['change']})", flush=True)
    worst = max(rows, key=lambda r: r["slowest"]["seconds"])
    print(f"slowest single change: {worst['exhibit']} {worst['slowest']['change']} "
          f"{worst['slowest']['seconds']:.3f} s")
    save("lab", {"rows": rows, "slowest": {"exhibit": worst["exhibit"], **worst["slowest"]}})
    lines = ["# The lab's response times on the demo", "",
             "`python bench/lab.py`: each exhibit's page opened once (cold), then each single change below "
             "timed as the app answers it in process (TestClient; routing, computation, template).", "",
             "| exhibit | cold (s) | single change: median (s) | slowest (s) | slowest change |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['exhibit']} | {r['cold_seconds']:.3f} | {r['median_seconds']:.3f} | "
                     f"{r['slowest']['seconds']:.3f} | `{r['slowest']['change']}` |")
    lines += ["", f"Slowest single change: **{worst['exhibit']}** `{worst['slowest']['change']}`, "
                  f"{worst['slowest']['seconds']:.3f} s.", "",
              "Every change timed:", ""]
    for r in rows:
        lines.append(f"- {r['exhibit']}: " + ", ".join(f"`{t['change']}` {t['seconds']:.3f}" for t in r["changes"]))
    (RESULTS / "lab.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "bench" / "scifact"


def scifact() -> None:
    """The lab on the whole SciFact corpus (5,183 abstracts; 809 train and 300 test queries):
    each exhibit cold, then one change, and the numbers exhibits 2 and 4 show."""
    from starlette.testclient import TestClient

    from glassrag.web.server import create_app

    if not SCIFACT.exists():
        raise SystemExit(f"SciFact not found at {SCIFACT}")
    with tempfile.TemporaryDirectory(prefix="glassrag-lab-scifact-") as tmp:
        t0 = time.perf_counter()
        index, _ = build_index([SCIFACT], Config())
        EmbeddedStore(Path(tmp) / "scifact").write(index)
        built = time.perf_counter() - t0
        client = TestClient(create_app([Path(tmp) / "scifact"]), base_url="http://127.0.0.1")
        rows = []
        for name, change in (("cuts", {"chunker": "fixed", "size": 100}), ("bm25", {"k1": 1.2, "commit": 1}),
                             ("lsa", {"word": "protein"}), ("fusion", {"method": "rrf", "k": 30}),
                             ("rerank", {"l2": 10.0}), ("losses", {"k": 3})):
            cold = timed(client, f"/lab/{name}")
            changed = timed(client, f"/lab/{name}?" + urlencode(change))
            rows.append({"exhibit": name, "cold_seconds": cold, "change": urlencode(change), "seconds": changed})
            print(f"{name:8s} cold {cold:7.3f} s   {urlencode(change)}: {changed:.3f} s", flush=True)
        bm25 = client.get("/lab/bm25.json?k1=1.2&commit=1").json()
        fusion = client.get("/lab/fusion.json?method=rrf&k=30").json()
        losses = client.get("/lab/losses.json?k=3").json()
    save("lab_scifact", {"index_seconds": built, "rows": rows, "bm25": {k: bm25[k] for k in ("k1", "b", "train", "test")},
                         "bm25_best": bm25["grid"]["best"], "fusion": fusion["rows"],
                         "losses": {k: losses[k] for k in ("accuracy", "bound", "causes")}})
    lines = ["# The lab on SciFact", "", "`python bench/lab.py --scifact`: the whole BEIR SciFact corpus "
             f"(5,183 abstracts, built in {built:.1f} s), every exhibit opened cold and then changed once.", "",
             "| exhibit | cold (s) | change | seconds |", "|---|---|---|---|"]
    lines += [f"| {r['exhibit']} | {r['cold_seconds']:.3f} | `{r['change']}` | {r['seconds']:.3f} |" for r in rows]
    lines += ["", f"Exhibit 2 at k1 = {bm25['k1']}, b = {bm25['b']}: train recall@5 {bm25['train']:.3f}, "
                  f"test recall@5 {bm25['test']:.3f}; the grid's best train cell k1 = {bm25['grid']['best']['k1']}, "
                  f"b = {bm25['grid']['best']['b']} ({bm25['grid']['best']['value']:.3f}).", "",
              "Exhibit 4, test split, RRF k = 30:", "", "| ranker | R@1 | R@5 | R@10 | MRR | nDCG@10 |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {r['label']} | " + " | ".join(f"{r['metrics'][m]:.3f}" for m in
                                             ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10")) + " |"
              for r in fusion["rows"]]
    (RESULTS / "lab_scifact.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    scifact() if "--scifact" in sys.argv[1:] else main()
