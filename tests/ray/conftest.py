"""A local 3-node Ray cluster (1 CPU a node, loopback only, no dashboard, Ray's files in a
temporary folder) shared by the tests of this folder, and the indexes they shard: the demo
handbook and SciFact (skipped where ../shared/bench/scifact is absent). Every test here is
skipped where Ray is not installed (pip install 'glassrag[ray]')."""

from __future__ import annotations

from pathlib import Path

import pytest

# ray.cluster_utils, not ray: where Ray is absent, `import ray` may find this folder
pytest.importorskip("ray.cluster_utils", reason="the sharded index's tests need pip install 'glassrag[ray]'")

from glassrag.config import Config  # noqa: E402
from glassrag.demo import demo_docs  # noqa: E402
from glassrag.indexer import build_index  # noqa: E402
from glassrag.shard import shard_index  # noqa: E402
from glassrag.shard.local import local_cluster  # noqa: E402
from glassrag.store import EmbeddedStore  # noqa: E402

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "bench" / "scifact"


@pytest.fixture(scope="session")
def cluster():
    with local_cluster(3) as running:  # Ray's folder under /tmp: its socket paths must stay short
        yield running


def single_and_sharded(folder: Path, source: Path, shards: int = 3) -> tuple[Path, Path]:
    """`source` ingested into folder/single, and that index cut into `shards` at folder/sharded."""
    index, report = build_index([source], Config())
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
