"""Threads sized for the machine (glassrag/threads.py)."""

from glassrag import threads
from glassrag.pipeline import Pipeline


def test_the_retriever_pool_has_one_worker_a_retriever_and_no_more_than_the_cores(monkeypatch):
    monkeypatch.setattr(threads, "cores", lambda: 2)
    assert [threads.pool_size(n) for n in (1, 2, 3, 5)] == [1, 2, 2, 2]
    monkeypatch.setattr(threads, "cores", lambda: 8)
    assert [threads.pool_size(n) for n in (1, 3, 8, 9)] == [1, 3, 8, 8]
    monkeypatch.setattr(threads, "cores", lambda: 1)
    assert threads.pool_size(3) == 1


def test_a_pipeline_with_three_retrievers_on_two_cores_runs_two_at_a_time(index, monkeypatch):
    monkeypatch.setattr(threads, "cores", lambda: 2)
    config = index.config.with_overrides(retrieve={"retrievers": ["bm25", "lsa"], "observe": ["bm25-rm3"]})
    pipe = Pipeline(index, config)
    answer = pipe.run("what does E-4107 mean")
    assert {"bm25", "lsa", "bm25-rm3"} <= {s.name for s in answer.trace}
    assert pipe._pool is not None and pipe._pool._max_workers == 2
