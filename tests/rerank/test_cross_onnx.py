"""The bundled cross-encoder (trained here, int8 ONNX) as it ships: it loads from the package,
reads question and passage together, runs without torch, and serves the reranker and the
gate alike."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from glassrag.errors import ConfigError
from glassrag.gate import answerability
from glassrag.rerank.cross_onnx import OnnxCrossEncoder, bundled_folder, is_onnx_folder

QUESTION = "What does error E-4107 mean on the TX-200?"
ANSWER = "E-4107: the tilt sensor lost its calibration. Run the field tilt calibration before measuring again."
NEAR = "The TX-200 weighs 5.4 kg with its battery and is carried in a hard case with a shoulder strap."
OFF = "Frédéric Chopin wrote most of his works for solo piano and gave few public concerts."


def test_the_bundled_model_ships_with_its_record():
    folder = bundled_folder()
    assert is_onnx_folder(folder) and (folder / "model.int8.onnx").stat().st_size < 50_000_000
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    assert (meta["questions"], meta["pairs"], meta["pooling"]) == (6000, 29151, "mean")
    assert meta["data"]["licence"] == "CC BY-SA 4.0"
    held = meta["heldout"]["int8"]
    assert held["same-article"]["auroc"] > 0.98 and held["answer-removed"]["auroc"] > 0.9


def test_the_bundled_models_digest_is_its_files_hash_as_recorded_and_another_folders_is_hashed(tmp_path: Path):
    from glassrag.rerank.cross_onnx import sha256

    folder = bundled_folder()
    assert answerability.model_digest(folder) == sha256(folder / "model.int8.onnx")[:12]
    copy = tmp_path / "copy"  # the same files with a wrong record: a folder of one's own is hashed
    copy.mkdir()
    for name in ("model.int8.onnx", "tokenizer.json"):
        (copy / name).write_bytes((folder / name).read_bytes())
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    meta["files"]["model.int8.onnx"] = "0" * 64
    (copy / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    assert answerability.model_digest(copy) == sha256(folder / "model.int8.onnx")[:12]


def test_it_scores_the_answer_above_a_near_miss_and_an_off_topic_passage():
    ce = OnnxCrossEncoder(bundled_folder(), "int8")
    answer, near, off = ce.predict([(QUESTION, ANSWER), (QUESTION, NEAR), (QUESTION, OFF)])
    assert answer > near > off or answer > max(near, off) + 2.0
    # dynamic int8 quantisation scales activations over the whole batch, padding included, so
    # a pair's logit moves with its batch-mates (-3.385 alone, -3.346 beside a longer passage
    # when this was written): the gate therefore scores one pair a call
    alone = ce.predict([(QUESTION, NEAR)])[0]
    assert alone == pytest.approx(near, abs=0.2)
    gate = answerability.Answerability(bundled_folder(), 3)
    texts = {"a": ANSWER, "n": NEAR, "o": OFF}
    assert gate.scores(QUESTION, ["n", "a", "o", "x"], texts.__getitem__)[0] == alone  # depth 3: "x" unread


def test_a_question_longer_than_the_window_is_truncated_not_refused():
    ce = OnnxCrossEncoder(bundled_folder(), "int8")
    assert np.isfinite(ce.predict([(" ".join(["tilt sensor"] * 400), ANSWER)])).all()


def test_the_signals_are_the_best_logit_and_its_margin():
    assert answerability.signals([1.0, 3.0, 2.5]) == {"answerability": 3.0, "answerability_margin": 0.5}
    assert answerability.signals([2.0]) == {"answerability": 2.0, "answerability_margin": 0.0}
    assert answerability.signals([]) == {}


def test_a_folder_without_a_model_is_refused_with_what_it_needs(tmp_path: Path):
    with pytest.raises(ConfigError) as e:
        answerability.model_folder(str(tmp_path))
    assert "holds no ONNX cross-encoder" in e.value.problem and "tokenizer.json" in e.value.hint
    assert answerability.model_folder("none") is None


@pytest.mark.slow
def test_the_onnx_path_never_imports_torch():
    """Scoring with the bundled model in a process where importing torch fails."""
    code = """
import sys
class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch.") or name == "transformers":
            raise ImportError("torch is not installed here")
sys.meta_path.insert(0, NoTorch())
from glassrag.rerank.cross_onnx import OnnxCrossEncoder, bundled_folder
print(float(OnnxCrossEncoder(bundled_folder()).predict([("q?", "a passage")])[0]))
assert "torch" not in sys.modules
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    float(r.stdout.strip())
