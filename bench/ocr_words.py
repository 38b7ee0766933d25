"""The share of lower-case words that look misread (ingest/quality.py: not English words, but
one once an OCR confusion is undone), and of those merely not in the vocabulary (the measure
before issue 49), on clean text and on the same text with simulated OCR errors (issue 27,
item 9; issue 49, item 2).

    python bench/ocr_words.py              (writes bench/results/ocr_words.json)

Reads the ten public documents of tests/fixtures/real/docs/, the demo's 18 and those of
every prepared corpus (corpora/*/docs) with glassrag's own loaders, and measures each document's unknown-word share as extracted, then
with OCR-like errors at a character error rate of 1 %, 2 % and 5 %: each letter, with that
probability, is replaced by a letter OCR confuses it with (m -> rn, h -> li, e -> c, l -> 1,
o -> 0, ...), or dropped, with a fixed seed. Published OCR of clean printed text has
character error rates of about 1-2 %, of poor scans 5-10 % and more (Rice, Jenkins &
Nartker 1996, The Fifth Annual Test of OCR Accuracy); the thresholds of quality.py must
leave every clean document `ok` and catch the 2 % rate. The confusions simulated here are
those quality.py undoes (CONFUSIONS), plus letters dropped.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from glassrag.demo import demo_docs
from glassrag.ingest import load_document
from glassrag.ingest.quality import UNKNOWN_MIN_WORDS, misread_words, unknown_words

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "fixtures" / "real" / "docs"
CORPORA = sorted(p / "docs" for p in (ROOT / "corpora").iterdir() if (p / "docs").is_dir())
CONFUSIONS = {"m": "rn", "h": "li", "e": "c", "l": "1", "o": "0", "c": "e", "n": "u", "u": "n", "i": "l",
              "a": "o", "r": "n", "t": "f", "s": "5", "d": "cl", "w": "vv", "b": "h", "f": "t", "g": "q"}
RATES = (0.0, 0.01, 0.02, 0.05)


def noisy(text: str, rate: float, seed: int = 0) -> str:
    """`text` with each lower-case letter misread with probability `rate`: confused (90 %) or lost."""
    rng = random.Random(seed)
    out = []
    for ch in text:
        if ch.islower() and rng.random() < rate:
            out.append(CONFUSIONS.get(ch, "") if rng.random() < 0.9 else "")
        else:
            out.append(ch)
    return "".join(out)


def share(text: str, words=misread_words) -> tuple[float, int]:
    counted, found = words(text)
    return (len(found) / counted if counted else 0.0), counted


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "ocr_words.json")
    args = ap.parse_args()
    rows = []
    paths = [*REAL.iterdir(), *demo_docs().iterdir(), *(p for folder in CORPORA for p in folder.iterdir())]
    for path in sorted(paths):
        doc, _ = load_document(path, path.stem, path.read_bytes())
        misread, unknown = {}, {}
        for rate in RATES:
            text = noisy(doc.text, rate)
            misread[f"{rate:.0%}"] = round(share(text)[0], 4)
            unknown[f"{rate:.0%}"] = round(share(text, unknown_words)[0], 4)
        rows.append({"document": str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name,
                     "lower_case_words": share(doc.text)[1], "misread_share": misread, "unknown_share": unknown})
    counted = [r for r in rows if r["lower_case_words"] >= UNKNOWN_MIN_WORDS]
    summary = {measure: {f"{rate:.0%}": {"min": min(r[measure][f"{rate:.0%}"] for r in counted),
                                         "max": max(r[measure][f"{rate:.0%}"] for r in counted)} for rate in RATES}
               for measure in ("misread_share", "unknown_share")}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"documents": rows, "summary": summary}, indent=1) + "\n", encoding="utf-8")
    print(f"{'document':45} {'words':>7} " + " ".join(f"{k:>6}" for k in summary["misread_share"]))
    for r in rows:
        print(f"{r['document'][-45:]:45} {r['lower_case_words']:7d} "
              + " ".join(f"{v:6.1%}" for v in r["misread_share"].values()))
    for measure, figures in summary.items():
        print(f"{measure} over the {len(counted)} documents with at least {UNKNOWN_MIN_WORDS} lower-case words: "
              + "; ".join(f"CER {k}: {v['min']:.1%} to {v['max']:.1%}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
