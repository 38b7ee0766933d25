"""The ask page computed once per answer: its JSON twin kept per index generation, settings and
question, and each chunk's label (tag and citation) kept per index generation.

An ask page's data is a function of the index's live generation, the pipeline's settings and
the question (the golden set and its judge are read once per generation, glassrag/web/catalog.py),
so the route layout, the BM25 explanation and the JSON twin are computed on the first ask and
served from here after that. What is kept is the encoded twin, not its Python objects: bytes are
a fifth of the memory, a JSON request is served as they are, and the HTML page is drawn from the
same bytes parsed, so it shows exactly what its twin says.

Nothing is kept across generations: the source tells the cache when the index it serves changes
(`Source.index()`), entries of another generation are dropped, and an answer computed on the old
generation that arrives after the change is not kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

# Bytes of JSON kept per index. A demo answer's twin is 90-140 KB (114 KB on average over
# bench/load.py's golden questions), a 4,000-character question's 162 KB: 32 MB keeps the last
# 200-300 distinct asks, a golden set's questions under a setting or two; the least recently
# used is dropped first.
ANSWERS_MB = 32
FRAMES_KEPT = 256  # frames (about 26 KB each on the demo) for as many settings, the oldest dropped first


class AnswerCache:
    """The JSON twins of the ask page, per (settings, question), for one index generation;
    least recently used dropped first when they exceed `budget_mb`. Thread-safe."""

    def __init__(self, budget_mb: float = ANSWERS_MB) -> None:
        self.budget = int(budget_mb * 2**20)
        self.generation: str | None = None
        self._entries: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self._frames: dict[str, bytes] = {}  # settings -> the encoded frame every question shares
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def live(self, generation: str) -> None:
        """The index now serves `generation`: everything kept for another one is dropped."""
        with self._lock:
            if generation != self.generation:
                self.generation = generation
                self._entries.clear()
                self._frames.clear()
                self._bytes = 0

    def get(self, generation: str, settings: str, question: str) -> bytes | None:
        with self._lock:
            body = self._entries.get((settings, question)) if generation == self.generation else None
            if body is None:
                self.misses += 1
                return None
            self._entries.move_to_end((settings, question))
            self.hits += 1
            return body

    def put(self, generation: str, settings: str, question: str, body: bytes) -> None:
        """Keeps `body` unless it was computed on a generation that is no longer live, or is
        larger than the whole budget."""
        if len(body) > self.budget:
            return
        key = (settings, question)
        with self._lock:
            if generation != self.generation:
                return
            old = self._entries.pop(key, None)
            self._bytes += len(body) - (len(old) if old is not None else 0)
            self._entries[key] = body
            while self._bytes > self.budget:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= len(dropped)

    def frame(self, generation: str, settings: str) -> bytes | None:
        """The encoded part of the twin that is the same for every question under `settings`."""
        with self._lock:
            return self._frames.get(settings) if generation == self.generation else None

    def keep_frame(self, generation: str, settings: str, frame: bytes) -> None:
        """Kept while `generation` is live, one per settings a page was asked under (a few KB each;
        the settings the server has pipelines for are bounded by the catalog's pipeline cache)."""
        with self._lock:
            if generation == self.generation:
                if len(self._frames) >= FRAMES_KEPT:
                    self._frames.pop(next(iter(self._frames)))
                self._frames[settings] = frame

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size(self) -> int:
        """Bytes kept."""
        return self._bytes
