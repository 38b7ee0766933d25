"""What every generator backend returns, and the table that finds a backend by name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    ms: float
    finish: str | None = None


class Backend(Protocol):
    model: str

    def params(self) -> dict[str, Any]: ...

    def complete(self, messages: list[dict[str, str]], max_tokens: int, temperature: float,
                 seed: int) -> Completion: ...


def make_backend(backend: str, model: str = "", timeout: float = 120.0) -> Backend:
    """`smollm2` (bundled, offline) or an OpenAI-compatible endpoint's base URL
    (`http://127.0.0.1:8080/v1`: llama.cpp server, Ollama, vLLM)."""
    if backend.startswith(("http://", "https://")):
        from glassrag.generate.endpoint import Endpoint

        return Endpoint(backend, model, timeout)
    from glassrag.generate.local import LocalModel

    return LocalModel(backend)
