"""What every generator backend is and returns (backends.py finds one by name), and how a
backend wants to be asked for an answer (`Answering`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    ms: float
    finish: str | None = None


@dataclass(frozen=True)
class Answering:
    """How the generator asks a backend for an answer: which prompt of prompt.PROMPTS, at most
    how many passages (None: the `[generate] passages` setting alone decides), the strings that
    end an answer, and llama.cpp's repeat penalty (1.0: none). A capable model gets the
    citing prompt and plain decoding; the bundled 135M model its own (local.py)."""

    prompt: str = "cite"
    passages: int | None = None
    stop: tuple[str, ...] = ()
    repeat_penalty: float = 1.0


class Backend(Protocol):
    model: str
    answering: Answering

    def params(self) -> dict[str, Any]: ...

    def complete(self, messages: list[dict[str, str]], max_tokens: int, temperature: float,
                 seed: int, stop: Sequence[str] = (), repeat_penalty: float = 1.0) -> Completion: ...
