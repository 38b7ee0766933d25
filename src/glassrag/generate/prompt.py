"""What the generator is given: the packed passages, each labelled for the model, with
optional neighbouring chunks attached, and the prompt that asks for citations and for a
stated refusal.

A label is how the model (and so the reader of its answer) names a passage:

| labels | a passage is introduced (and cited) as |
|---|---|
| `title` (default) | `[Warranty, § 2 Coverage]` |
| `numbered` | `[Document 3]`: a label that means nothing to a reader of the answer |

The two differ in the labels only: the same template, the same passages, the same order.

Each backend names its prompt (`Answering.prompt`, generate/base.py):

| prompt | for | asks for |
|---|---|---|
| `cite` | a model behind an endpoint | one or two sentences, a citation by label, or the refusal |
| `short` | the bundled 135M model | one sentence copied from the text, or the refusal |

The short prompt asks for no citation: the 135M model cited no passage in 57 answers
when asked to (docs/measurements.md G1), and the request made its answers longer.

Context expansion attaches the `expand` chunks before and after each passage in its
document, in order, for the generator only: the ranking, the answer and every metric of
retrieval stay as they were. Their locators join the passage's, so citing them is not
citing something that was not given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Self, Sequence

from glassrag.schema import Chunk, _Plain

LABELS = ("title", "numbered")
REFUSAL = "Not in the documents."

SYSTEM = (
    "You answer questions about a company's documents using only the passages given. "
    "Answer in one or two sentences. After the answer, cite the passage you used by its "
    "name in square brackets, exactly as it is named, for example [{example}]. "
    f'If the passages do not contain the answer, reply only: "{REFUSAL}"'
)
SHORT = ("Answer the question with one sentence from the text below. "
         f'If the text does not answer it, reply only: "{REFUSAL}"')
PROMPTS = {"cite": SYSTEM, "short": SHORT}


@dataclass(frozen=True)
class Given(_Plain):
    """One passage as the generator received it."""

    chunk_id: str
    doc_id: str
    title: str
    label: str
    locators: tuple[str, ...]  # the passage's locator, then its attached neighbours'
    text: str
    neighbours: int = 0

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        return cls(data["chunk_id"], data["doc_id"], data["title"], data["label"],
                   tuple(data["locators"]), data["text"], data.get("neighbours", 0))


def label(title: str, locator: str, number: int, labels: str) -> str:
    if labels == "numbered":
        return f"Document {number}"
    return f"{title}, {locator}" if locator else title


def expand(chunk: Chunk, by_place: dict[tuple[str, int], Chunk], width: int) -> list[Chunk]:
    """The chunk with up to `width` neighbours on each side in its document, in order."""
    out = []
    for pos in range(chunk.position - width, chunk.position + width + 1):
        got = chunk if pos == chunk.position else by_place.get((chunk.doc_id, pos))
        if got is not None:
            out.append(got)
    return out


def given(chunks: Sequence[Chunk], titles: dict[str, str], by_place: dict[tuple[str, int], Chunk],
          labels: str, width: int) -> list[Given]:
    """The passages in the order given, labelled; with `width` > 0 each carries its
    neighbours' text (a neighbour already given as a passage of its own is not repeated)."""
    taken = {c.id for c in chunks}
    out = []
    for n, chunk in enumerate(chunks, 1):
        parts = [c for c in expand(chunk, by_place, width) if c.id == chunk.id or c.id not in taken]
        locators = tuple(dict.fromkeys([chunk.locator, *(c.locator for c in parts if c.locator)]))
        text = "\n".join(c.text.strip() for c in parts)
        title = titles[chunk.doc_id]
        out.append(Given(chunk.id, chunk.doc_id, title, label(title, chunk.locator, n, labels),
                         locators, text, len(parts) - 1))
    return out


def messages(question: str, passages: Sequence[Given], prompt: str = "cite") -> list[dict[str, str]]:
    """The chat messages: the instructions of `prompt` (a name in PROMPTS), then the passages
    under their labels and the question."""
    example = passages[0].label if passages else "Title, page 2"
    blocks = [f"[{p.label}]\n{p.text}" for p in passages]
    user = "\n\n".join([*blocks, f"Question: {question}"])
    return [{"role": "system", "content": PROMPTS[prompt].format(example=example)},
            {"role": "user", "content": user}]
