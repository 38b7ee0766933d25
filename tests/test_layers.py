"""The package's shape (issue 29.7): no import circle, no arrow that runs back up the layers,
every module in a layer, no module over 400 lines. The analysis is scripts/imports.py's, which
prints the same findings with file and line; its layer table is written out in
docs/architecture.md."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "imports.py"


@pytest.fixture(scope="module")
def imports():
    spec = importlib.util.spec_from_file_location("imports_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def edges(imports):
    return imports.graph()


def shown(arrows) -> list[str]:
    return [f"{a.source} -> {a.target} (line {a.line})" for a in arrows]


# the package itself ---------------------------------------------------------------------------

def test_the_analysis_reads_the_whole_package(imports, edges):
    """Guards the checks below against passing on nothing: the tree is found and its arrows are
    seen, a function-level one among them (a generator backend is imported only when named)."""
    assert imports.SRC == SCRIPT.parents[1] / "src" / "glassrag"
    assert len(edges) > 150 and sum(map(len, edges.values())) > 500
    assert "glassrag.retrieve" in {a.target for a in edges["glassrag.pipeline.loop"]}
    assert "glassrag.generate" in {a.target for a in edges["glassrag.pipeline.stages"]}
    assert "glassrag.generate.local" in {a.target for a in edges["glassrag.generate.backends"]}


def test_no_module_imports_itself_back_through_others(imports, edges):
    assert imports.circles(edges) == []


def test_no_arrow_runs_back_up_the_layers(imports, edges):
    assert shown(imports.upward(edges)) == []


def test_every_module_has_a_layer(imports, edges):
    assert imports.unlayered(edges) == []


def test_no_module_is_over_400_lines(imports):
    assert imports.MAX_LINES == 400
    assert imports.too_long() == []



# the generated-words retrievers (retrieve/generated.py) ask a generator's backend for their words:
# a model they run, not the generator stage's output
RETRIEVERS_RUN_A_GENERATOR = {("glassrag.retrieve.generated", "glassrag.generate.local"),
                              ("glassrag.retrieve.generated", "glassrag.generate.backends")}


def test_no_stage_family_imports_one_that_runs_after_it(imports, edges):
    """Within the stages layer, LAYERS lists the families in the order a question meets them; each
    imports the contract and the families before it only (issue 50: the reranker's training took
    its AUROC from the gate's calibration, and the retrievers their ScoreSource from fusion; both
    now come from below, glassrag/stats.py and glassrag/stage.py)."""
    families = dict(imports.LAYERS)["stages"]
    assert families.index("glassrag.retrieve") < families.index("glassrag.fuse") < families.index("glassrag.rerank") \
        < families.index("glassrag.gate")
    later = [a for a in imports.upward(edges, tuple((f, (f,)) for f in families))
             if (a.source, a.target) not in RETRIEVERS_RUN_A_GENERATOR]
    assert shown(later) == []


# the analysis, on a small package written here ------------------------------------------------

def write(root: Path, files: dict[str, str]) -> Path:
    src = root / "glassrag"
    for name, text in files.items():
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return src


def test_a_circle_through_a_function_level_import_is_found(imports, tmp_path):
    src = write(tmp_path, {
        "__init__.py": "",
        "low.py": "def f():\n    from glassrag.high import g\n    return g\n",
        "high.py": "from glassrag.low import f\n",
        "alone.py": "import glassrag.low\n",
    })
    assert imports.circles(imports.graph(src)) == [["glassrag.high", "glassrag.low"]]


def test_a_type_checking_import_and_a_relative_one_are_arrows(imports, tmp_path):
    src = write(tmp_path, {
        "__init__.py": "",
        "pkg/__init__.py": "from .part import X\n",
        "pkg/part.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..top import Y\nX = 1\n",
        "top.py": "from glassrag.pkg import part\n",
    })
    edges = imports.graph(src)
    assert [a.target for a in edges["glassrag.pkg"]] == ["glassrag.pkg.part"]
    assert [(a.target, a.line) for a in edges["glassrag.pkg.part"]] == [("glassrag.top", 3)]
    assert [a.target for a in edges["glassrag.top"]] == ["glassrag.pkg.part"]  # the module, not the package


def test_an_arrow_to_a_higher_layer_is_upward_and_one_to_a_lower_is_not(imports, tmp_path):
    src = write(tmp_path, {
        "__init__.py": "",
        "base.py": "import glassrag.app.page\n",
        "app/__init__.py": "",
        "app/page.py": "from glassrag import base\n",
        "loose.py": "",
    })
    layers = (("bottom", ("glassrag", "glassrag.base")), ("top", ("glassrag.app",)))
    edges = imports.graph(src)
    assert shown(imports.upward(edges, layers)) == ["glassrag.base -> glassrag.app.page (line 1)"]
    assert imports.unlayered(edges, layers) == ["glassrag.loose"]  # the root claims itself only
    assert imports.layer_of("glassrag.app.page", layers) == 1


def test_a_module_over_the_limit_is_named_with_its_lines(imports, tmp_path):
    src = write(tmp_path, {"__init__.py": "", "long.py": "x = 1\n" * 401, "short.py": "x = 1\n" * 400})
    assert imports.too_long(src) == [("glassrag.long", 401)]
