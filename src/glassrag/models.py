"""Finding and loading local sentence-transformers models, offline, for the neural
embedders and the cross-encoder alike. glassrag never downloads weights: a model is a
folder on disk, or the folder an installed Python package carries."""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path
from typing import Any

from glassrag.errors import ConfigError


def installed_model_folder(package: str) -> Path | None:
    """The model folder of an installed package (its `get_model_path()`, else `model/`)."""
    module = package.replace("-", "_")
    if "/" in package or importlib.util.find_spec(module) is None:
        return None
    loaded = importlib.import_module(module)
    getter = getattr(loaded, "get_model_path", None)
    folder = Path(getter()) if getter else Path(loaded.__file__).parent / "model"
    if not folder.is_dir():
        folder = Path(loaded.__file__).parent  # a package that is itself the model folder
    return folder


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
        return getattr(sentence_transformers, kind)(str(path), device="cpu", local_files_only=True)
    except Exception as err:  # the library's own error: say which folder and why
        raise ConfigError(f"cannot load {what} from {path}: {err}", needs) from None
