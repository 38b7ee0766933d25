"""Generation, after the budget and off by default: a model writes an answer from the
passages the budget packed, each labelled by its document title and locator (prompt.py),
through the bundled local model (local.py) or an OpenAI-compatible endpoint (endpoint.py).
It never changes a ranking; it is a stage (glassrag/stage.py) that reads the packed chunks and
consults the answer's decision (a declined question gets no generation), and the loop's trace
of it records the passages given, tokens and time; evaluate/grade.py scores the answer
without a judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from glassrag.config import GenerateSettings
from glassrag.errors import PromptRefused
from glassrag.generate.backends import make_backend
from glassrag.generate.base import Backend, Completion
from glassrag.generate.prompt import given, messages
from glassrag.query import Query
from glassrag.schema import Chunk, Generation, Hit
from glassrag.schema.kind import Kind
from glassrag.stage import Entry, StageOutput, consulted, listed

if TYPE_CHECKING:  # an annotation only: glassrag.store loads scipy, and `glassrag ask --help` imports
    from glassrag.store.base import Index  # this package for generate.labels' choices


REFUSED = "prompt_refused"  # Generation.finish when the backend refused the prompt


def made(index: Any, config: Any, bm25: Any) -> Generator | None:
    """The generator of `[generate]`, or None when generation is off. The backend URL must be
    the user's own: one an index names is never contacted."""
    if not config.generate.enabled:
        return None
    config.check_user_only()
    return Generator(index, config.generate)


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "generator", (f"The generator ranks nothing: {params.get('backend', 'a model')} writes an answer from "
                         "the first packed passages, each labelled; its words are the model's, not the documents'.")


class Generator:
    name = "generate"
    kind = Kind.GENERATE

    def __init__(self, index: Index, settings: GenerateSettings, backend: Backend | None = None) -> None:
        # the settings were checked against their definitions in config/ (labels, ranges)
        self.index = index
        self.settings = settings
        self.backend = backend or make_backend(settings.backend, settings.model, settings.timeout)

    def params(self) -> dict[str, Any]:
        s, a = self.settings, self.backend.answering
        return {**self.backend.params(), "labels": s.labels, "passages": s.passages, "expand": s.expand,
                "max_tokens": s.max_tokens, "temperature": s.temperature, "seed": s.seed,
                "prompt": a.prompt, "stop": list(a.stop), "repeat_penalty": a.repeat_penalty}

    def neighbours(self, chunk: Chunk) -> dict[tuple[str, int], Chunk]:
        """The chunks up to `expand` places before and after `chunk` in its document, itself
        included, by (document, position)."""
        return {(c.doc_id, c.position): c for c in self.index.around(chunk.id, self.settings.expand)}

    def run(self, query: Query, inputs: Mapping[str, StageOutput]) -> StageOutput:
        """An answer written from the packed chunks, unless the answer was declined."""
        answer = consulted(inputs)
        if answer.declined:
            return StageOutput(notes=("not generated: " + (answer.why or "declined"),))
        return self.write(query.question, listed(inputs).hits)

    def write(self, question: str, packed: Sequence[Hit]) -> StageOutput:
        """The generation from the first `passages` of `packed`, and what its trace records:
        the passages given (not hits: this stage ranks nothing), tokens, a first load."""
        s, a = self.settings, self.backend.answering
        hits = packed[: s.passages] if s.passages else packed
        capped = a.passages is not None and len(hits) > a.passages
        hits = hits[: a.passages] if a.passages is not None else hits
        chunks = [self.index.chunk(h.chunk_id) for h in hits]
        places: dict[tuple[str, int], Chunk] = {}
        if s.expand:
            for c in chunks:
                places.update(self.neighbours(c))
        titles = {c.doc_id: self.index.documents[c.doc_id].title for c in chunks}
        passages = given(chunks, titles, places, s.labels, s.expand)
        prompt = messages(question, passages, a.prompt)
        loaded_before = getattr(self.backend, "load_ms", None) is not None
        refused = None
        try:
            done = self.backend.complete(prompt, s.max_tokens, s.temperature, s.seed, a.stop, a.repeat_penalty)
        except PromptRefused as e:  # this question only: no answer, and the reason in the trace
            refused = f"no answer generated: {e} ({e.hint})"
            done = Completion("", None, None, 0.0, REFUSED)
        params = self.params()
        generation = Generation(done.text.strip(), params["backend"], self.backend.model, s.labels,
                                tuple(p.to_dict() for p in passages), tuple(prompt), done.prompt_tokens,
                                done.completion_tokens, round(done.ms, 3), done.finish)
        notes = [f"{len(passages)} passages labelled by {s.labels}"
                 + (f", {sum(p.neighbours for p in passages)} neighbouring chunks attached" if s.expand else "")
                 + (f" (the {self.backend.model} backend takes at most {a.passages})" if capped else ""),
                 f"tokens: {done.prompt_tokens} in, {done.completion_tokens} out"
                 + (" (stopped at max_tokens)" if done.finish == "length" else "")]
        if refused:
            notes[-1] = refused
        load_ms = getattr(self.backend, "load_ms", None)
        loaded = not loaded_before and load_ms is not None
        if loaded:
            notes.append(f"the model was loaded for this first question: {load_ms:.0f} ms (not in the time shown)")
        return StageOutput(notes=tuple(notes), generation=generation, traced={"given": [p.chunk_id for p in passages]},
                           setup_ms=float(load_ms) if loaded and load_ms is not None else 0.0)


GENERATORS = {"generate": Entry(made, describe_score)}
