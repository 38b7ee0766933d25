"""Finding and loading local sentence-transformers models, offline, for the neural
embedders and the cross-encoder alike. glassrag never downloads weights: a model is a
folder on disk, or the folder an installed Python package carries."""

from __future__ import annotations

import importlib.util
import keyword
import os
from pathlib import Path
from typing import Any

from glassrag.errors import ConfigError


MODEL_FILES = ("config.json", "modules.json", "model.onnx")  # any one marks a folder holding a model


def bundled_cross_encoder() -> Path:
    """The folder of the bundled cross-encoder (rerank/cross_onnx.py runs it; the gate reads its
    answerability and ingest's quality check its vocabulary)."""
    return Path(__file__).resolve().parent / "data" / "models" / "cross-encoder"


def holds_model(folder: Path) -> bool:
    """Whether `folder` carries model files (a sentence-transformers or ONNX model's config)."""
    return any((folder / name).is_file() for name in MODEL_FILES)


def installed_model_folder(package: str) -> Path | None:
    """The model folder an installed package carries (its `model/` subfolder, or the package
    folder itself when that holds the model), found WITHOUT importing the package: a name read
    from an index folder must never run code (issue 28.1). A plain top-level package name only
    (a dotted name would import its parents); None for a module, a package without model files,
    or a name that is not installed."""
    module = package.replace("-", "_")
    if not module.isidentifier() or keyword.iskeyword(module):
        return None
    try:
        spec = importlib.util.find_spec(module)  # a top-level name: looked up, not imported
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None  # not installed, or a plain module (such as the standard library's `this`)
    for root in spec.submodule_search_locations:
        for folder in (Path(root) / "model", Path(root)):
            if folder.is_dir() and holds_model(folder):
                return folder
    return None


def offline() -> None:
    """No hub access and no progress bars from the libraries, whatever the caller set."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def load(kind: str, path: Path, what: str, needs: str) -> Any:
    """A sentence-transformers `SentenceTransformer` or `CrossEncoder` from `path`, on the CPU,
    from local files only; a missing library or a broken folder is a ConfigError that says
    what to install or what the folder must hold."""
    offline()
    try:
        import sentence_transformers
    except ImportError:
        raise ConfigError(f"{what} needs sentence-transformers and torch",
                          "pip install torch==2.13.0 && pip install 'glassrag[torch]'") from None
    try:
        # trust_remote_code=False: a folder's modules.json may not name code outside sentence-transformers
        return getattr(sentence_transformers, kind)(str(path), device="cpu", local_files_only=True,
                                                    trust_remote_code=False)
    except Exception as err:  # the library's own error: say which folder and why
        raise ConfigError(f"cannot load {what} from {path}: {err}", needs) from None


def onnx_session(file: Path, threads: int, hint: str, spin: bool = False) -> Any:
    """An ONNX Runtime CPU session of `file` on `threads` intra-op threads (one inter-op thread).
    Without `spin`, idle worker threads sleep instead of spinning: a spinning pool burns CPU
    between the calls of a batch loop and between questions, which the per-CPU-second bench
    counts (bench/onnx_embed.py). A missing runtime or an unreadable file is a ConfigError
    with `hint`."""
    try:
        import onnxruntime as ort
    except ImportError:
        raise ConfigError("running an ONNX model needs onnxruntime", "pip install onnxruntime") from None
    if not file.is_file():
        raise ConfigError(f"{file} is missing", hint)
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, threads)
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    try:
        return ort.InferenceSession(str(file), options, providers=["CPUExecutionProvider"])
    except Exception as err:  # the runtime's own error: say which file
        raise ConfigError(f"cannot load the ONNX model {file}: {err}", hint) from None


def onnx_tokenizer(file: Path, max_length: int, pad: bool = True) -> Any:
    """The `tokenizers` tokenizer of `file` (a tokenizer.json), truncating to `max_length` tokens
    (special tokens included, the longest of a pair first) and, with `pad`, padding a batch to its
    longest member (never to a fixed length, whatever the file says)."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise ConfigError("running an ONNX model needs the tokenizers library", "pip install tokenizers") from None
    try:
        tok = Tokenizer.from_file(str(file))
    except Exception as err:
        raise ConfigError(f"cannot read the tokenizer {file}: {err}",
                          "the model folder needs the tokenizer.json its model was trained with") from None
    tok.enable_truncation(max_length, strategy="longest_first")
    tok.no_padding()
    if pad:
        tok.enable_padding(pad_id=pad_id(tok), pad_token="[PAD]")
    return tok


def pad_id(tok: Any) -> int:
    """The id of the tokenizer's [PAD] token (BERT's vocabularies: 0)."""
    found = tok.token_to_id("[PAD]")
    return 0 if found is None else int(found)
