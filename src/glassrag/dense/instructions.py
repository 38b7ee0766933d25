"""Query and passage instructions per embedding-model family, from one table.

Some models were trained with a prefix on queries (and passages) and lose accuracy
without it; others were trained without and lose accuracy with one. The table is
matched against the model's name (case-insensitive, first match wins); a model that
matches no row gets no instruction, and the trace says so.

Sources: each family's model card (BAAI/bge-*-v1.5, intfloat/e5-*, nomic-ai/nomic-embed-text,
mixedbread-ai/mxbai-embed-large-v1, Snowflake/snowflake-arctic-embed, sentence-transformers/all-*).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BGE_QUERY = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True)
class Instruction:
    family: str
    query: str
    passage: str


TABLE: tuple[tuple[str, Instruction], ...] = (
    (r"all-minilm|all-mpnet|paraphrase-|multi-qa-|msmarco-",
     Instruction("sentence-transformers (trained without instructions)", "", "")),
    (r"bge-.*-v1\.5|bge-small-en|bge-base-en|bge-large-en", Instruction("bge v1.5 (English)", BGE_QUERY, "")),
    (r"bge-m3", Instruction("bge-m3 (no instruction)", "", "")),
    (r"multilingual-e5-.*-instruct", Instruction("e5 instruct",
                                                 "Instruct: Given a question, retrieve passages that answer it\nQuery: ", "")),
    (r"\be5-|/e5-|^e5", Instruction("e5", "query: ", "passage: ")),
    (r"nomic-embed-text", Instruction("nomic-embed-text", "search_query: ", "search_document: ")),
    (r"mxbai-embed-large", Instruction("mxbai-embed-large", BGE_QUERY, "")),
    (r"snowflake-arctic-embed", Instruction("snowflake-arctic-embed", BGE_QUERY, "")),
    (r"gte-", Instruction("gte (no instruction)", "", "")),
)

NONE = Instruction("unknown (no instruction: the model is not in the table)", "", "")


def instruction_for(model_name: str) -> Instruction:
    name = model_name.lower()
    for pattern, instruction in TABLE:
        if re.search(pattern, name):
            return instruction
    return NONE


def mismatch(model_name: str, query: str, passage: str) -> str | None:
    """A warning when the instructions in use differ from the table's for a known family
    (e.g. the bge query instruction given to all-MiniLM); None when they agree or the
    model is unknown (nothing to compare with)."""
    expected = instruction_for(model_name)
    if expected is NONE:
        return None
    if (query, passage) == (expected.query, expected.passage):
        return None
    return (f"instruction mismatch for {model_name} ({expected.family}): expected query prefix "
            f"{expected.query!r} and passage prefix {expected.passage!r}, got {query!r} and {passage!r}")
