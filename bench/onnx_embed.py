"""Encoding throughput of all-MiniLM-L6-v2 per CPU second: glassrag's ONNX backend against
plain sentence-transformers (torch), fp32 and int8, in the same run, on a seeded sample of
SciFact's abstracts (title + " " + text, as the BEIR runs index them).

    python bench/onnx_embed.py [--n 400] [--repeats 3] [--levers]
        writes bench/results/onnx_embed.json and .md

CPU seconds are the process's (`time.process_time`: every thread), so a backend that keeps
two cores busy for one second costs two. Each round runs every variant once, in turn, and a
variant's figure is the median of its rounds; the ratios compare medians of the same run.
Both backends run on the cores the process may use (2 here), batches of 32. Before timing,
the ONNX fp32 vectors are compared with sentence-transformers' (worst cosine).

`--levers` also times the ONNX graph without each lever the backend uses: batches of 32
texts on one session with two intra-op threads (what the backend did before: the two levers
below together); batches of 32 texts side by side (runs of 256 padded tokens is the lever
alone); one thread (does running runs side by side cost CPU?); and runs cut in input order
and padded to the model's 256-token window (sentence-transformers sorts by length and pads
to the longest member of a batch, so this is the padding lever alone).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import SCIFACT, save  # noqa: E402

from glassrag import threads  # noqa: E402
from glassrag.dense import onnx_embed  # noqa: E402
from glassrag.dense.neural import SentenceEmbedder  # noqa: E402
from glassrag.models import pad_id  # noqa: E402


def sample(n: int) -> list[str]:
    docs = [json.loads(line) for line in (SCIFACT / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    picked = np.random.default_rng(0).choice(len(docs), n, replace=False)
    return [f"{docs[i]['title']} {docs[i]['text']}".strip() for i in sorted(picked)]


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - c0, time.perf_counter() - w0, out


def padded_in_order(model: onnx_embed.OnnxSentenceModel, texts: list[str], workers: int) -> np.ndarray:
    """The backend without the padding lever: runs of 256 padded tokens (one text each here)
    in input order, every one padded to the 256-token window, side by side as encode runs them."""
    session, tok = model.session(1), model.tokenizer()
    enc = tok.encode_batch([t.strip() for t in texts])
    width, lengths = model.max_seq_length, np.array([len(e.ids) for e in enc])
    groups = [np.array([i]) for i in range(len(enc))]

    def one(idx: np.ndarray) -> np.ndarray:
        ids, mask, types = onnx_embed.padded(enc, lengths, idx, pad_id(tok))
        grow = ((0, 0), (0, width - ids.shape[1]))
        ids, mask, types = np.pad(ids, grow, constant_values=pad_id(tok)), np.pad(mask, grow), np.pad(types, grow)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        return onnx_embed.pool(hidden, mask, model.pooling)

    with ThreadPoolExecutor(workers) as pool:
        return np.concatenate(list(pool.map(one, groups)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=400, help="abstracts encoded per variant and round")
    ap.add_argument("--repeats", type=int, default=3, help="rounds")
    ap.add_argument("--levers", action="store_true", help="also time the graph without each lever")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    cores = threads.cores()
    torch.set_num_threads(cores)
    texts = sample(args.n)
    folder = SentenceEmbedder("minilm").path
    st32 = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    st8 = torch.quantization.quantize_dynamic(SentenceTransformer(str(folder), device="cpu", local_files_only=True),
                                              {torch.nn.Linear}, dtype=torch.qint8)
    ox32 = onnx_embed.OnnxSentenceModel(folder, "fp32", name="all-MiniLM-L6-v2")
    ox8 = onnx_embed.OnnxSentenceModel(folder, "int8", name="all-MiniLM-L6-v2")

    def st(model: Any) -> Callable[[], np.ndarray]:
        return lambda: model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)

    def ox(model: onnx_embed.OnnxSentenceModel, n_threads: int = cores,
           run_tokens: int = onnx_embed.RUN_TOKENS) -> Callable[[], np.ndarray]:
        return lambda: model.encode(texts, 32, n_threads, run_tokens)

    variants: dict[str, Callable[[], np.ndarray]] = {
        "sentence-transformers fp32": st(st32), "glassrag onnx fp32": ox(ox32),
        "sentence-transformers int8": st(st8), "glassrag onnx int8": ox(ox8)}
    levers = ("onnx fp32, batches of 32 on two intra-op threads", "onnx fp32, batches of 32 side by side",
              "onnx fp32, one thread", "onnx fp32, in order, padded to 256")
    if args.levers:
        pooled = onnx_embed.OnnxSentenceModel(folder, "fp32", name="all-MiniLM-L6-v2")
        pooled._sessions[1] = ox32.session(cores)  # encode's runs go through an intra-op pool instead
        pooled.encode(texts[:32], 32, 1, 10 ** 9)
        variants |= dict(zip(levers, (ox(pooled, 1, 10 ** 9), ox(ox32, cores, 10 ** 9), ox(ox32, 1),
                                      lambda: padded_in_order(ox32, texts, cores))))
    warm = texts[:32]
    for model in (ox32, ox8):  # graphs built, sessions made, first-call costs paid before timing
        model.encode(warm, 32, cores)
        model.encode(warm, 32, 1)
    st32.encode(warm, batch_size=32)
    st8.encode(warm, batch_size=32)

    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    vectors: dict[str, np.ndarray] = {}
    for r in range(args.repeats):
        for name, fn in variants.items():
            cpu, wall, v = timed(fn)
            vectors[name] = v
            rounds[name].append({"cpu_s": cpu, "wall_s": wall})
            print(f"round {r + 1}  {name:38s} {len(texts) / cpu:7.1f} texts/CPU s  "
                  f"{len(texts) / wall:7.1f} texts/s", flush=True)
    figures = {}
    for name, rs in rounds.items():
        cpu = statistics.median(x["cpu_s"] for x in rs)
        wall = statistics.median(x["wall_s"] for x in rs)
        figures[name] = {"texts_per_cpu_s": round(len(texts) / cpu, 2), "texts_per_s": round(len(texts) / wall, 2),
                         "cpu_s": [round(x["cpu_s"], 3) for x in rs], "wall_s": [round(x["wall_s"], 3) for x in rs]}

    def ratio(a: str, b: str) -> float:
        return round(figures[a]["texts_per_cpu_s"] / figures[b]["texts_per_cpu_s"], 3)

    full32 = (vectors["glassrag onnx fp32"] * vectors["sentence-transformers fp32"]).sum(1)
    ratios = {"onnx fp32 / sentence-transformers fp32": ratio("glassrag onnx fp32", "sentence-transformers fp32"),
              "onnx int8 / sentence-transformers fp32": ratio("glassrag onnx int8", "sentence-transformers fp32"),
              "onnx int8 / sentence-transformers int8": ratio("glassrag onnx int8", "sentence-transformers int8"),
              "sentence-transformers int8 / fp32": ratio("sentence-transformers int8", "sentence-transformers fp32")}
    if args.levers:
        for lever in levers:
            ratios[f"onnx fp32 / {lever}"] = ratio("glassrag onnx fp32", lever)
    parity = {"worst cosine onnx fp32 vs sentence-transformers fp32": float(full32.min()),
              "mean cosine onnx int8 vs onnx fp32": float((vectors["glassrag onnx int8"] * vectors["glassrag onnx fp32"]).sum(1).mean()),
              "mean cosine sentence-transformers int8 vs fp32": float(
                  (vectors["sentence-transformers int8"] * vectors["sentence-transformers fp32"]).sum(1).mean())}
    print()
    for k, v in ratios.items():
        print(f"{k:55s} {v:.2f}x")
    for k, v in parity.items():
        print(f"{k:55s} {v:.7f}")
    result = {"texts": len(texts), "repeats": args.repeats, "cores": cores, "batch": 32,
              "torch_threads": torch.get_num_threads(), "figures": figures, "ratios": ratios, "parity": parity,
              "command": "python bench/onnx_embed.py" + (" --levers" if args.levers else "")
              + (f" --n {args.n}" if args.n != 400 else "") + (f" --repeats {args.repeats}" if args.repeats != 3 else "")}
    path = save("onnx_embed", result)
    lines = ["# all-MiniLM-L6-v2 encoding per CPU second (bench/onnx_embed.py)", "",
             f"`{result['command']}`: {len(texts)} SciFact abstracts, batches of 32, {cores} cores, "
             f"median of {args.repeats} rounds.", "",
             "| variant | texts / CPU s | texts / s |", "|---|---|---|"]
    lines += [f"| {k} | {v['texts_per_cpu_s']:.1f} | {v['texts_per_s']:.1f} |" for k, v in figures.items()]
    lines += ["", "| ratio (texts per CPU second) | |", "|---|---|"]
    lines += [f"| {k} | {v:.2f}× |" for k, v in ratios.items()]
    lines += ["", *[f"- {k}: {v:.7f}" for k, v in parity.items()], ""]
    path.with_suffix(".md").write_text("\n".join(lines), encoding="utf-8")
    print(f"\nwrote {path} and {path.with_suffix('.md')}")


if __name__ == "__main__":
    main()
