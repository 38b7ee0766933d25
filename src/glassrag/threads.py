"""Threads sized for the machine, set once per process.

One question's work is small: a BM25 sum over a few columns, a 64-dimension product per
chunk, one MiniLM encoding of a dozen tokens. Splitting it over threads gains little on an
idle machine and loses badly on a busy one: on 2 cores with one busy-loop process beside
it, a MiniLM query encoded in 484–504 ms with torch's default threads against 14–26 ms with
one, and LSA's QR steps took ~1 s each instead of milliseconds (issue 18; re-measured by
bench/threads.py). So BLAS and torch run one thread per operation for questions, and
parallelism comes from running the retrievers side by side in one pool made once per
pipeline, with no more workers than cores; in the web server, whose processes and page pool
already keep the cores busy, a question's retrievers run in its own thread (`serving`). Batch
work (embedding a corpus at ingest) uses every core it is given.

What a MiniLM question runs on, measured (bench/results/threads.md, per-thread CPU time):
the main thread and the pool's workers, about one core in all; BLAS's, OpenMP's and the
tokenizers' own threads exist but use no CPU with these settings (with torch's default
threads, two native worker threads do). Beside a busy-loop process the question takes 1.85× its
time on the otherwise same machine: the core it shares, not a thread setting.
"""

from __future__ import annotations

import os
import sys
from typing import Any

QUERY_THREADS = 1
_model_threads: int | None = None  # set by the web server: `model_threads`
_configured = False
_limits: Any = None  # threadpoolctl's limiter, kept so its limit stays in force
_loaded_on_one = False  # `before_numpy` had every BLAS start on QUERY_THREADS: `configure` has nothing to do
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def cores() -> int:
    """Cores this process may run on (its CPU affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def pool_size(tasks: int) -> int:
    """Workers of the pipeline's retriever pool: one a retriever, no more than the cores
    (three retrievers on two cores would keep three threads runnable where two can run); one in
    the web server, which runs them in the request's own thread (`serving`)."""
    return 1 if _model_threads == 1 else max(1, min(tasks, cores()))


def before_numpy() -> None:
    """BLAS's thread count for a glassrag command's process, before numpy is imported: one (a
    user's OPENBLAS_NUM_THREADS, MKL_NUM_THREADS or BLIS_NUM_THREADS stands). Every BLAS call
    glassrag makes runs on one thread (`configure`), but OpenBLAS starts a thread a core when
    numpy loads, and starting them cost about 0.09 CPU s of every `glassrag ask` here
    (bench/startup.py). When every BLAS then loads on one thread, `configure` need not ask
    threadpoolctl, whose scan of the process's libraries cost 9.5 ms of every ask."""
    global _loaded_on_one
    for name in BLAS_THREADS:
        os.environ.setdefault(name, str(QUERY_THREADS))
    _loaded_on_one = "numpy" not in sys.modules and all(os.environ[n] == str(QUERY_THREADS) for n in BLAS_THREADS)


def model_threads() -> int:
    """Intra-op threads of an ONNX model a question runs (the gate's cross-encoder reading five
    passages): two where one question is answered at a time (`glassrag ask` on the calibrated demo:
    111–137 ms a question on two, 151–172 ms on one, for 17–20 % more CPU), one in the web server,
    whose processes and page pool already answer as many questions at once as there are cores
    (bench/load.py --index on the calibrated demo: p95 17.2 s on one, 22.2 s on two)."""
    return _model_threads if _model_threads is not None else max(1, min(2, cores()))


def serving() -> None:
    """This process serves pages: every ONNX model a question runs gets one thread from now on,
    and a question's retrievers run one after the other in its own thread. The server's
    processes and page pools already answer as many questions at once as there are cores; handing
    each question's retrievers to two more threads and back only added switches of the GIL
    (bench/load.py)."""
    global _model_threads
    _model_threads = 1


def configure() -> None:
    """BLAS (OpenBLAS, MKL) to QUERY_THREADS threads, once per process; torch is set when
    it is loaded (`torch_for_queries`). Idempotent."""
    global _configured, _limits
    if _configured:
        return
    _configured = True
    if _loaded_on_one:
        return
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return
    _limits = ThreadpoolController().limit(limits=QUERY_THREADS, user_api="blas")


def torch_threads(n: int) -> None:
    """Set torch's intra-op threads (a no-op where torch is not loaded)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != n:
        torch.set_num_threads(n)
