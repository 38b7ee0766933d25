"""What every generator backend is and returns (backends.py finds one by name)."""

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
