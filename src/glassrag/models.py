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
                          "pip install torch==2.13.0 && pip install 'glassrag[neural]'") from None
    try:
        # trust_remote_code=False: a folder's modules.json may not name code outside sentence-transformers
        return getattr(sentence_transformers, kind)(str(path), device="cpu", local_files_only=True,
                                                    trust_remote_code=False)
    except Exception as err:  # the library's own error: say which folder and why
        raise ConfigError(f"cannot load {what} from {path}: {err}", needs) from None
