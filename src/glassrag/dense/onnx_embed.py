"""A sentence-transformers model run by ONNX Runtime and the `tokenizers` library: no torch.

Where the graph comes from, in order:

1. `onnx/model.onnx` or `model.onnx` in the model folder (a Hugging Face repository's own
   export: inputs input_ids, attention_mask, token_type_ids, output last_hidden_state);
2. else built once from the folder's `model.safetensors` with the `onnx` package
   (glassrag/dense/onnx_graph.py) and kept in the cache folder, `$GLASSRAG_CACHE` or
   `~/.cache/glassrag` (`$XDG_CACHE_HOME/glassrag` where set), under `onnx/NAME-KEY/`,
   KEY a hash of the weights' header, size and time, the config and the graph version.
   The bundled all-MiniLM-L6-v2 ships safetensors only, so it takes this road.

int8 is ONNX Runtime's dynamic quantisation of that graph (weights int8 per channel,
activations quantised on the fly), built once beside it as `model.int8.onnx`.

Pooling follows the folder's `1_Pooling/config.json` as sentence-transformers does: the
mean of the token vectors under the attention mask (or the [CLS] vector), then unit
length; texts are stripped and truncated to the folder's `max_seq_length` tokens.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from glassrag.dense.onnx_graph import GRAPH_VERSION, OUTPUT, convertible, safetensors_header
from glassrag.errors import ConfigError
from glassrag.models import onnx_session, onnx_tokenizer, pad_id

POOLINGS = ("mean", "cls")
# Padded tokens in one session run. Runs this small keep a layer's activations in a core's
# cache (one 256-token text: a 1.5 MB feed-forward activation, 2 MB L2), and cores work on
# different runs: bench/onnx_embed.py --levers times batches of 32 on two intra-op threads
# against this (bench/results/onnx_embed.md); 256 beat 64, 128, 384, 512, 1024 and 2048 on
# SciFact abstracts and on their first sentences in a separate trial.
RUN_TOKENS = 256
ST_MODULES = {"sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
              "sentence_transformers.models.Normalize"}


def cache_root() -> Path:
    """Where graphs built here are kept: $GLASSRAG_CACHE, else $XDG_CACHE_HOME/glassrag,
    else ~/.cache/glassrag."""
    if os.environ.get("GLASSRAG_CACHE"):
        return Path(os.environ["GLASSRAG_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "glassrag"


def pooling_of(folder: Path) -> str | None:
    """mean or cls, from the folder's sentence-transformers pooling config; None for any other
    mode (max, weighted...) this path does not implement. No config: mean, the library's default."""
    config = folder / "1_Pooling" / "config.json"
    if not config.is_file():
        return "mean"
    c = json.loads(config.read_text(encoding="utf-8"))
    modes = {k for k, v in c.items() if k.startswith("pooling_mode_") and v}
    if modes == {"pooling_mode_mean_tokens"}:
        return "mean"
    if modes == {"pooling_mode_cls_token"}:
        return "cls"
    return None


def shipped_graph(folder: Path) -> Path | None:
    """The folder's own fp32 export, when it has one."""
    for name in ("onnx/model.onnx", "model.onnx"):
        if (folder / name).is_file():
            return folder / name
    return None


def unsupported(folder: Path) -> str | None:
    """None when this path can run the folder's model, else why not (then torch must)."""
    if not (folder / "tokenizer.json").is_file():
        return "it has no tokenizer.json"
    modules = folder / "modules.json"
    if modules.is_file():
        kinds = {m.get("type") for m in json.loads(modules.read_text(encoding="utf-8"))}
        if not kinds <= ST_MODULES:
            return f"its modules.json names modules beyond transformer, pooling and normalize: {sorted(kinds - ST_MODULES)}"
    if pooling_of(folder) is None:
        return "its pooling is neither mean nor cls"
    return None if shipped_graph(folder) else convertible(folder)


def graph_key(folder: Path) -> str:
    """What a built graph depends on, cheaply: the weights' header, size and modification
    time, the config, and the builder's version (hashing 90 MB of weights per load would not be cheap)."""
    weights = folder / "model.safetensors"
    h = hashlib.sha256(f"glassrag-onnx-graph-v{GRAPH_VERSION}".encode())
    h.update((folder / "config.json").read_bytes())
    start, header = safetensors_header(weights)
    stat = weights.stat()
    h.update(json.dumps(header, sort_keys=True).encode())
    h.update(f"{stat.st_size}:{stat.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def _write_atomically(target: Path, write: Any) -> None:
    """`write(path)` into a temporary file beside `target`, renamed into place when complete."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide a shared cache from other users
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def graph_file(folder: Path, precision: str, name: str) -> Path:
    """The ONNX file of the folder's model at `precision` (fp32 or int8), built on first use."""
    shipped = shipped_graph(folder)
    if precision == "fp32" and shipped is not None:
        return shipped
    key = graph_key(folder) if shipped is None else hashlib.sha256(
        f"{shipped.resolve()}:{shipped.stat().st_size}:{shipped.stat().st_mtime_ns}".encode()).hexdigest()[:16]
    where = cache_root() / "onnx" / f"{name}-{key}"
    fp32 = shipped or where / "model.onnx"
    try:
        if not fp32.is_file():
            from glassrag.dense.onnx_graph import build

            model = build(folder)
            import onnx

            _write_atomically(fp32, lambda p: onnx.save_model(model, str(p)))
            (where / "source.json").write_text(json.dumps(
                {"folder": str(folder.resolve()), "built by": f"glassrag/dense/onnx_graph.py v{GRAPH_VERSION}"},
                indent=1), encoding="utf-8")
        if precision == "fp32":
            return fp32
        int8 = where / "model.int8.onnx"
        if not int8.is_file():
            try:
                from onnxruntime.quantization import QuantType, quantize_dynamic
            except ImportError:
                raise ConfigError("int8 quantisation of the ONNX graph needs the onnx package (once: it is cached)",
                                  "pip install onnx (it comes with glassrag[neural])") from None
            _write_atomically(int8, lambda p: _quantize(fp32, p))
        return int8
    except OSError as err:
        raise ConfigError(f"cannot write the ONNX graph of {name} under {where}: {err.strerror}",
                          "set GLASSRAG_CACHE to a writable folder") from None


def _quantize(fp32: Path, out: Path) -> None:
    """ONNX Runtime's dynamic int8 quantisation of `fp32` into `out`: MatMul and Attention
    weights int8 per channel, activations uint8 scaled per call, as rerank/cross_train.py
    quantises the cross-encoder."""
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # its advice to pre-process, printed on every call
    try:
        # the fused operators' outputs carry no inferred type: they are float32
        quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    finally:
        root.setLevel(level)


class OnnxSentenceModel:
    """`encode(texts)`: unit-length float32 rows, as sentence-transformers' `encode(...,
    normalize_embeddings=True)` gives them for the same folder. Everything runs on one
    one-thread session: a question on the caller's thread, a corpus as small runs on as many
    threads as it is given, side by side (`session(n)` makes an n-thread session for
    comparisons: ONNX Runtime fixes a session's threads)."""

    def __init__(self, folder: Path, precision: str = "fp32", max_seq_length: int | None = None,
                 name: str = "model") -> None:
        if precision not in ("fp32", "int8"):
            raise ConfigError(f"unknown precision {precision!r}", "choose fp32 or int8")
        why = unsupported(folder)
        if why:
            raise ConfigError(f"the model in {folder} cannot run without torch: {why}",
                              "use the torch backend (neural.backend = torch) for this model")
        self.folder, self.precision, self.name = folder, precision, name
        st = folder / "sentence_bert_config.json"
        c = json.loads(st.read_text(encoding="utf-8")) if st.is_file() else {}
        self.max_seq_length = int(max_seq_length or c.get("max_seq_length") or 512)
        self.lower = bool(c.get("do_lower_case", False))
        self.pooling = pooling_of(folder)
        self._file: Path | None = None
        self._sessions: dict[int, Any] = {}
        self._tokenizer: Any = None
        self.dim: int | None = None

    @property
    def file(self) -> Path:
        if self._file is None:
            self._file = graph_file(self.folder, self.precision, self.name)
        return self._file

    def session(self, threads: int) -> Any:
        if threads not in self._sessions:
            self._sessions[threads] = onnx_session(
                self.file, threads, f"delete {self.file.parent} to have it rebuilt, or use neural.backend = torch")
        return self._sessions[threads]

    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            self._tokenizer = onnx_tokenizer(self.folder / "tokenizer.json", self.max_seq_length, pad=False)
        return self._tokenizer

    def encode(self, texts: list[str], batch_size: int = 32, threads: int = 1,
               run_tokens: int = RUN_TOKENS) -> np.ndarray:
        """Texts tokenised at once, sorted by token length and cut into `runs` of at most
        `batch_size` texts and `run_tokens` padded tokens, each padded only to its own longest
        member; with `threads` > 1 that many runs go through the one-thread session side by
        side (ONNX Runtime releases the GIL), instead of one run split over an intra-op pool."""
        tok = self.tokenizer()
        enc = tok.encode_batch([t.strip().lower() if self.lower else t.strip() for t in texts])
        lengths = np.array([len(e.ids) for e in enc], dtype=np.int64)
        groups = runs(lengths, batch_size, run_tokens)
        session, pad = self.session(1), pad_id(tok)

        def one(idx: np.ndarray) -> np.ndarray:
            ids, mask, types = padded(enc, lengths, idx, pad)
            hidden = session.run([OUTPUT], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
            return pool(hidden, mask, self.pooling)

        if threads > 1 and len(groups) > 1:
            with ThreadPoolExecutor(min(threads, len(groups))) as workers:
                pooled = list(workers.map(one, groups))
        else:
            pooled = [one(idx) for idx in groups]
        if not pooled:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        self.dim = pooled[0].shape[1]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for idx, rows in zip(groups, pooled):
            out[idx] = rows
        return out


def runs(lengths: np.ndarray, most_texts: int, most_tokens: int = RUN_TOKENS) -> list[np.ndarray]:
    """Text indices grouped for one session run each: longest first (stable), each run a
    consecutive stretch of that order that grows while len(run) <= most_texts and
    len(run) * length(its first, longest text) <= most_tokens; a run holds at least one text."""
    order = np.argsort(-lengths, kind="stable")
    out: list[np.ndarray] = []
    begin = 0
    while begin < len(order):
        width = max(int(lengths[order[begin]]), 1)
        take = max(1, min(most_texts, most_tokens // width, len(order) - begin))
        out.append(order[begin: begin + take])
        begin += take
    return out


def padded(enc: list[Any], lengths: np.ndarray, idx: np.ndarray, pad: int) -> tuple[np.ndarray, ...]:
    """input_ids, attention_mask, token_type_ids (int64, len(idx) x the longest length in idx)
    of the encodings `idx`, right-padded with `pad` and mask 0."""
    width = int(lengths[idx].max())
    ids = np.full((len(idx), width), pad, dtype=np.int64)
    mask = np.zeros((len(idx), width), dtype=np.int64)
    types = np.zeros((len(idx), width), dtype=np.int64)
    for row, i in enumerate(idx):
        n = lengths[i]
        ids[row, :n], mask[row, :n], types[row, :n] = enc[i].ids, 1, enc[i].type_ids
    return ids, mask, types


def pool(hidden: np.ndarray, mask: np.ndarray, pooling: str | None) -> np.ndarray:
    """Unit-length sentence vectors from token vectors h (batch x length x dim):
    cls: v = h[:, 0]; mean: v = Σₜ mₜ·hₜ / max(Σₜ mₜ, 1e-9); then v / max(‖v‖, 1e-12),
    as sentence-transformers' Pooling and Normalize modules compute them."""
    if pooling == "cls":
        v = hidden[:, 0]
    else:
        m = mask[:, :, None].astype(np.float32)
        v = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
    return (v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)).astype(np.float32)


_LOADED: dict[tuple[str, str, int | None], OnnxSentenceModel] = {}


def shared(folder: Path, precision: str = "fp32", max_seq_length: int | None = None,
           name: str = "model") -> OnnxSentenceModel:
    """One loaded model per folder, precision and length in a process (the ingest, every
    pipeline and the web app share it), as rerank/cross_onnx.py's `shared` does."""
    key = (str(folder), precision, max_seq_length)
    if key not in _LOADED:
        _LOADED[key] = OnnxSentenceModel(folder, precision, max_seq_length, name)
    return _LOADED[key]
