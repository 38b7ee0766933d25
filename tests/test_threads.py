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


def test_a_models_threads_are_two_for_one_question_at_a_time_and_one_in_the_server(monkeypatch):
    from glassrag.rerank.cross_onnx import OnnxCrossEncoder, bundled_folder

    monkeypatch.setattr(threads, "cores", lambda: 8)
    monkeypatch.setattr(threads, "_model_threads", None)
    assert threads.model_threads() == 2
    monkeypatch.setattr(threads, "cores", lambda: 1)
    assert threads.model_threads() == 1
    monkeypatch.setattr(threads, "cores", lambda: 2)
    session, _ = OnnxCrossEncoder(bundled_folder()).load()
    assert session.get_session_options().intra_op_num_threads == 2
    threads.serving()
    assert threads.model_threads() == 1
    session, _ = OnnxCrossEncoder(bundled_folder()).load()
    assert session.get_session_options().intra_op_num_threads == 1


def test_the_server_runs_a_questions_retrievers_in_its_own_thread(index, monkeypatch):
    """Serving, the retrievers run one after the other in the request's thread (no pool: handing
    them to two more threads and back only added GIL switches under bench/load.py), with the
    same answer as side by side."""
    monkeypatch.setattr(threads, "cores", lambda: 2)
    monkeypatch.setattr(threads, "_model_threads", None)
    config = index.config.with_overrides(retrieve={"retrievers": ["bm25", "lsa"]})
    side_by_side = Pipeline(index, config)
    expected = side_by_side.run("what does E-4107 mean")
    assert side_by_side._pool is not None
    threads.serving()
    assert threads.pool_size(3) == 1
    serving = Pipeline(index, config)
    got = serving.run("what does E-4107 mean")
    assert serving._pool is None
    assert [(t.name, [(h.chunk_id, h.score) for h in t.hits]) for t in got.trace] == \
        [(t.name, [(h.chunk_id, h.score) for h in t.hits]) for t in expected.trace]
