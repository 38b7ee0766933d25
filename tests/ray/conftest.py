"""A local 3-node Ray cluster (1 CPU a node, loopback only, no dashboard, Ray's files in a
temporary folder) shared by the tests of this folder, and the indexes they shard: the demo
handbook (BM25 only, and with MiniLM's vectors too: skipped where MiniLM cannot run) and SciFact
(skipped where ../shared/bench/scifact is absent). Every test here is skipped where Ray is not
installed (pip install 'glassrag[ray]')."""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

import pytest

# ray.cluster_utils, not ray: where Ray is absent, `import ray` may find this folder
pytest.importorskip("ray.cluster_utils", reason="the sharded index's tests need pip install 'glassrag[ray]'")

from glassrag.config import Config  # noqa: E402
from glassrag.errors import ConfigError, ShardError  # noqa: E402
from glassrag.demo import demo_docs  # noqa: E402
from glassrag.indexer import build_index  # noqa: E402
from glassrag.shard import shard_index  # noqa: E402
from glassrag.shard import serve  # noqa: E402
from glassrag.shard.local import local_cluster  # noqa: E402
from glassrag.store import EmbeddedStore  # noqa: E402

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "bench" / "scifact"


@pytest.fixture(scope="session")
def cluster():
    with local_cluster(3) as running:  # Ray's folder under /tmp: its socket paths must stay short
        yield running


# the demo's hybrid: BM25 and MiniLM fused (the catalogue fuses ray-bm25 and ray-minilm)
HYBRID = {"neural": {"models": ["minilm"]}, "retrieve": {"retrievers": ["bm25", "minilm"]}}


def single_and_sharded(folder: Path, source: Path, shards: int = 3, config: Config | None = None) -> tuple[Path, Path]:
    """`source` ingested into folder/single, and that index cut into `shards` at folder/sharded."""
    index, report = build_index([source], config or Config(), cache_dir=folder / "cache")
    assert not report.failed
    EmbeddedStore(folder / "single").write(index)
    shard_index(EmbeddedStore(folder / "single").read(), shards, folder / "sharded")
    return folder / "single", folder / "sharded"


@pytest.fixture(scope="session")
def demo_shards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return single_and_sharded(tmp_path_factory.mktemp("demo"), demo_docs())


@pytest.fixture(scope="session")
def scifact_shards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if not (SCIFACT / "corpus.jsonl").is_file():
        pytest.skip(f"SciFact not found at {SCIFACT}")
    return single_and_sharded(tmp_path_factory.mktemp("scifact"), SCIFACT)


@pytest.fixture(scope="session")
def demo_dense_shards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo with MiniLM's vectors, and its 3 shards (each with its rows of the vectors)."""
    try:
        config = Config().updated(HYBRID, "tests/ray", "flag")
        return single_and_sharded(tmp_path_factory.mktemp("demo-dense"), demo_docs(), config=config)
    except ConfigError as e:  # MiniLM's package or its runtime is not installed
        pytest.skip(f"MiniLM cannot run here: {e.problem}")


def killed_mid_question(sharded: Any, ask: Callable[[], Any], shard: int = 1) -> ShardError:
    """Shard `shard`'s actor process of `sharded` (a ray-* retriever) is stopped, `ask()` sent,
    and the process killed while the question waits on it: the ShardError the question raised
    (the test fails when it returned a ranking instead). The killed pid must not serve again."""
    pid = serve.pool(sharded.folder, sharded.shards).where()[shard]["pid"]
    os.kill(pid, signal.SIGSTOP)
    with ThreadPoolExecutor(1) as pool:
        asked = pool.submit(ask)
        time.sleep(1.0)
        assert not asked.done()  # waiting on the stopped shard
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(ShardError) as failed:
            asked.result(timeout=60)
    assert pid not in {w["pid"] for w in serve.pool(sharded.folder, sharded.shards).where()}
    return failed.value
