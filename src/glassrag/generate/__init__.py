"""Generation, after the budget and off by default: a model writes an answer from the
passages the budget packed, each labelled by its document title and locator (prompt.py),
through the bundled local model (local.py) or an OpenAI-compatible endpoint (endpoint.py).
It never changes a ranking; the trace records the prompt, the passages given, tokens and
time, and evaluate/grade.py scores the answer without a judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from glassrag.config import GenerateSettings
from glassrag.errors import PromptRefused
from glassrag.generate.backends import make_backend
from glassrag.generate.base import Backend, Completion
from glassrag.generate.prompt import given, messages
from glassrag.schema import Chunk, Generation, Hit, StageTrace

if TYPE_CHECKING:  # an annotation only: glassrag.store loads scipy, and `glassrag ask --help` imports
    from glassrag.store.base import Index  # this package for generate.labels' choices


REFUSED = "prompt_refused"  # Generation.finish when the backend refused the prompt


class Generator:
    name = "generate"
    kind = "generate"

    def __init__(self, index: Index, settings: GenerateSettings, backend: Backend | None = None) -> None:
        # the settings were checked against their definitions in config/ (labels, ranges)
        self.index = index
        self.settings = settings
        self.backend = backend or make_backend(settings.backend, settings.model, settings.timeout)

    def params(self) -> dict[str, Any]:
        s = self.settings
        return {**self.backend.params(), "labels": s.labels, "passages": s.passages, "expand": s.expand,
                "max_tokens": s.max_tokens, "temperature": s.temperature, "seed": s.seed}

    def neighbours(self, chunk: Chunk) -> dict[tuple[str, int], Chunk]:
        """The chunks up to `expand` places before and after `chunk` in its document, itself
        included, by (document, position)."""
        return {(c.doc_id, c.position): c for c in self.index.around(chunk.id, self.settings.expand)}

    def run(self, question: str, packed: Sequence[Hit]) -> tuple[Generation, StageTrace]:
        s = self.settings
        hits = packed[: s.passages] if s.passages else packed
        chunks = [self.index.chunk(h.chunk_id) for h in hits]
        places: dict[tuple[str, int], Chunk] = {}
        if s.expand:
            for c in chunks:
                places.update(self.neighbours(c))
        titles = {c.doc_id: self.index.documents[c.doc_id].title for c in chunks}
        passages = given(chunks, titles, places, s.labels, s.expand)
        prompt = messages(question, passages)
        loaded_before = getattr(self.backend, "load_ms", None) is not None
        refused = None
        try:
            done = self.backend.complete(prompt, s.max_tokens, s.temperature, s.seed)
        except PromptRefused as e:  # this question only: no answer, and the reason in the trace
            refused = f"no answer generated: {e} ({e.hint})"
            done = Completion("", None, None, 0.0, REFUSED)
        params = self.params()
        generation = Generation(done.text.strip(), params["backend"], self.backend.model, s.labels,
                                tuple(p.to_dict() for p in passages), tuple(prompt), done.prompt_tokens,
                                done.completion_tokens, round(done.ms, 3), done.finish)
        notes = [f"{len(passages)} passages labelled by {s.labels}"
                 + (f", {sum(p.neighbours for p in passages)} neighbouring chunks attached" if s.expand else ""),
                 f"tokens: {done.prompt_tokens} in, {done.completion_tokens} out"
                 + (" (stopped at max_tokens)" if done.finish == "length" else "")]
        if refused:
            notes[-1] = refused
        load_ms = getattr(self.backend, "load_ms", None)
        if not loaded_before and load_ms is not None:
            notes.append(f"the model was loaded for this first question: {load_ms:.0f} ms (not in the time shown)")
        # the passages given are in the params, not hits: this stage ranks nothing
        trace = StageTrace(self.name, self.kind, {**params, "given": [p.chunk_id for p in passages]}, ("budget",),
                           (), len(packed), round(done.ms, 3), tuple(notes))
        return generation, trace
