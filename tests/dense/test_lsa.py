import numpy as np
import pytest

from glassrag.dense.exact import ExactCosine
from glassrag.dense.lsa import LSA, randomized_svd
from glassrag.lexical.analyze import Analyzer
from glassrag.lexical.bm25 import TermCounts
import scipy.sparse as sp

TEXTS = [
    "the battery charger charges the battery pack",
    "charging a battery pack takes two hours on the charger",
    "the tilt sensor measures the tilt of the instrument",
    "calibrate the tilt sensor after a fall",
    "travel expenses are reimbursed within thirty days",
    "claim travel expenses with the expense form",
]


def fitted(dim=3, seed=0):
    a = Analyzer()
    model = LSA(dim=dim, seed=seed).fit(TermCounts.build([a(t) for t in TEXTS]))
    model.analyzer = a
    return model


def test_randomized_svd_matches_full_svd():
    rng = np.random.default_rng(1)
    low_rank = rng.standard_normal((60, 5)) @ rng.standard_normal((5, 40))
    x = sp.csr_matrix(low_rank + 1e-6 * rng.standard_normal((60, 40)))
    u, s, vt = randomized_svd(x, 5, power_iterations=4)
    s_full = np.linalg.svd(x.toarray(), compute_uv=False)
    np.testing.assert_allclose(s, s_full[:5], rtol=1e-6)
    np.testing.assert_allclose(u.T @ u, np.eye(5), atol=1e-8)
    np.testing.assert_allclose((u * s) @ vt, x.toarray(), atol=1e-4)


def test_deterministic_for_a_seed():
    a, b = fitted(seed=7), fitted(seed=7)
    np.testing.assert_array_equal(a.passage_vectors, b.passage_vectors)


def test_fold_in_of_an_indexed_passage_gives_its_own_vector():
    model = fitted(dim=5)
    np.testing.assert_allclose(model.embed_query(TEXTS[2]), model.passage_vectors[2], atol=1e-5)


def test_variance_share_is_a_share():
    model = fitted(dim=3)
    assert np.all(np.diff(model.variance_share) <= 1e-7)
    assert 0 < model.variance_share.sum() <= 1 + 1e-6


def test_query_finds_passages_about_its_topic_without_shared_words():
    model = fitted(dim=3)
    search = ExactCosine(model.passage_vectors)
    # "pack" and "hours" do not occur together in passage 0, yet the topic is battery charging
    idx, _, _ = search.search(model.embed_query("how long until the pack is charged"), 2)
    assert set(idx.tolist()) == {0, 1}


def test_unknown_words_give_a_zero_vector_and_no_hits():
    model = fitted()
    q = model.embed_query("zebra quantum")
    assert not q.any()
    assert ExactCosine(model.passage_vectors).search(q, 3)[0].size == 0


def test_cutoff_removes_and_counts():
    search = ExactCosine(np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]]))
    idx, scores, removed = search.search(np.array([1.0, 0.0]), 3, cutoff=0.5)
    assert idx.tolist() == [0, 1] and removed == 1
    np.testing.assert_allclose(scores, [1.0, 0.6], rtol=1e-6)


def test_fit_on_a_sample_folds_every_passage_in():
    from glassrag.dense.lsa import LSA
    from glassrag.lexical.bm25 import TermCounts

    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(40)]
    docs = [list(rng.choice(words, size=12)) for _ in range(60)]
    counts = TermCounts.build(docs)
    full = LSA(4, seed=1).fit(counts)
    assert full.fitted_on == 60 and "fitted_on" in full.params()
    same = LSA(4, seed=1, fit_sample=60).fit(counts)  # a sample as large as the corpus: no sample
    np.testing.assert_array_equal(same.passage_vectors, full.passage_vectors)
    part = LSA(4, seed=1, fit_sample=20).fit(counts)
    assert part.fitted_on == 20 and part.params()["fit_sample"] == 20
    assert part.passage_vectors.shape == (60, 4)
    # every passage vector is the fold-in v = x U_k S_k⁻¹ of its TF-IDF row
    x = part._weigh(counts.tf.tocsr())
    np.testing.assert_allclose(part.passage_vectors, x @ part.term_vectors, rtol=1e-5, atol=1e-6)
