"""Finding a generator backend by name: the bundled local model or an OpenAI-compatible
endpoint. Each backend module imports `base`; this one imports each backend when it is named."""

from __future__ import annotations

from glassrag.generate.base import Backend


def make_backend(backend: str, model: str = "", timeout: float = 120.0) -> Backend:
    """`smollm2` (bundled, offline) or an OpenAI-compatible endpoint's base URL
    (`http://127.0.0.1:8080/v1`: llama.cpp server, Ollama, vLLM)."""
    if backend.startswith(("http://", "https://")):
        from glassrag.generate.endpoint import Endpoint

        return Endpoint(backend, model, timeout)
    from glassrag.generate.local import LocalModel

    return LocalModel(backend)
