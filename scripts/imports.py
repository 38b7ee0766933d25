"""glassrag's import graph: circles, arrows that run back up the layers, modules too long.

    python scripts/imports.py [--src src/glassrag] [--graph]

Every `import` and `from … import` of a glassrag module is an arrow, wherever it stands (module
level, inside a function, under `if TYPE_CHECKING:`): a function-level import still runs, and a
type-only one still couples. `from glassrag.x import y` is an arrow to the module `glassrag.x.y`
when that file exists, else to `glassrag.x`. A package's `__init__` is the module named after
the package; importing a submodule is not counted as an arrow to its package (Python runs the
package's `__init__` first, but the package does not depend on the submodule's importer).

A circle is a strongly connected component of more than one module (Tarjan). An arrow runs
back up when its target's layer (LAYERS, below) is higher than its source's; arrows within a
layer are allowed, as long as they make no circle. Settings that name a table by a string
("glassrag.chunk:CHUNKERS", looked up with importlib when the choices are asked for) are
listed as named arrows: lazy, and not checked.

Exits 1 when it finds a circle, an arrow back up, a module over MAX_LINES lines or a module no
layer claims. tests/test_layers.py runs the same checks.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "glassrag"
MAX_LINES = 400  # STYLE.md 6: keep modules under ~400 lines

# Bottom to top. A module may import its own layer and the layers below it, never above. The
# longest prefix that matches a module names its layer (a prefix is a module or a package;
# "glassrag" is the package's face, `__init__.py`, which holds its version, and claims nothing else,
# so a new top-level module is reported until it is given a layer).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # what every part reads: the typed data, settings, errors, where models are found, statistics
    ("foundation", ("glassrag", "glassrag.errors", "glassrag.schema", "glassrag.config", "glassrag.models",
                    "glassrag.threads", "glassrag.provenance", "glassrag.stats")),
    # what an index is made of: documents read, cut into chunks, counted and embedded
    ("parts", ("glassrag.ingest", "glassrag.chunk", "glassrag.lexical", "glassrag.dense")),
    # the index kept: a folder or a PostgreSQL schema, or folders cut into shards served on Ray
    ("store", ("glassrag.store", "glassrag.shard")),
    # one question's stages, in the order they run
    ("stages", ("glassrag.query", "glassrag.stage", "glassrag.retrieve", "glassrag.fuse", "glassrag.rerank",
                "glassrag.gate", "glassrag.read", "glassrag.present", "glassrag.generate")),
    # the stages put together: building an index (on one machine, or on Ray into shards), answering a question
    ("pipeline", ("glassrag.indexer", "glassrag.pipeline", "glassrag.stage_cache", "glassrag.shard.ingest",
                  "glassrag.shard.workers")),
    # measuring the pipeline: golden sets, runs, sweeps, the experiment log, the lab's exhibits
    ("measure", ("glassrag.evaluate", "glassrag.experiment", "glassrag.lab", "glassrag.prepared",
                 "glassrag.demo")),
    # what a user touches
    ("faces", ("glassrag.web", "glassrag.cli", "glassrag.__main__")),
)


@dataclass(frozen=True)
class Arrow:
    source: str
    target: str
    line: int


def module_name(path: Path, src: Path) -> str:
    parts = ("glassrag", *path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(src: Path = SRC) -> dict[str, Path]:
    """Every module of the package by dotted name."""
    return {module_name(p, src): p for p in sorted(src.rglob("*.py"))}


def _resolve(source: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module `node` imports from (relative imports resolved against `source`)."""
    if not node.level:
        return node.module or ""
    base = source.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def arrows_of(source: str, path: Path, known: set[str]) -> list[Arrow]:
    """The arrows from module `source` (file `path`) to other glassrag modules."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[Arrow] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(source, path.name == "__init__.py", node)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known and "." in target:  # import glassrag.x.y.Name
                target = target.rsplit(".", 1)[0]
            if target in known and target != source:
                found.append(Arrow(source, target, node.lineno))
    return found


def named_arrows(source: str, path: Path, known: set[str]) -> list[Arrow]:
    """Modules named in a string "glassrag.x:NAME" (a table looked up lazily by importlib)."""
    found = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for target in re.findall(r"[\"'](glassrag(?:\.\w+)+):\w+[\"']", line):
            if target in known and target != source:
                found.append(Arrow(source, target, i))
    return found


def graph(src: Path = SRC) -> dict[str, list[Arrow]]:
    """Each module's arrows, in file order, one per target."""
    mods = modules(src)
    out: dict[str, list[Arrow]] = {}
    for name, path in mods.items():
        seen: dict[str, Arrow] = {}
        for a in sorted(arrows_of(name, path, set(mods)), key=lambda a: a.line):
            seen.setdefault(a.target, a)
        out[name] = list(seen.values())
    return out


def circles(edges: dict[str, list[Arrow]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        # iterative Tarjan: the graph is small, but recursion depth should not depend on it
        work = [(v, iter(edges.get(v, ())))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            for arrow in it:
                w = arrow.target
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(edges.get(w, ()))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def layer_of(module: str, layers: tuple[tuple[str, tuple[str, ...]], ...] = LAYERS) -> int | None:
    """The index of `module`'s layer in `layers` (the longest prefix that matches it names
    it), or None when no prefix claims it."""
    found = [(len(p), i) for i, (_, prefixes) in enumerate(layers) for p in prefixes
             if module == p or ("." in p and module.startswith(p + "."))]  # the root claims itself only
    return max(found)[1] if found else None


def upward(edges: dict[str, list[Arrow]], layers=LAYERS) -> list[Arrow]:
    """Arrows whose target sits in a higher layer than their source."""
    out = []
    for arrows in edges.values():
        for a in arrows:
            s, t = layer_of(a.source, layers), layer_of(a.target, layers)
            if s is not None and t is not None and t > s:
                out.append(a)
    return out


def unlayered(edges: dict[str, list[Arrow]], layers=LAYERS) -> list[str]:
    return [m for m in sorted(edges) if layer_of(m, layers) is None]


def too_long(src: Path = SRC, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """(module, lines) of every module over `limit` lines."""
    out = []
    for name, path in modules(src).items():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > limit:
            out.append((name, n))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", type=Path, default=SRC)
    ap.add_argument("--graph", action="store_true", help="print every arrow, by layer")
    args = ap.parse_args(argv)
    edges = graph(args.src)
    mods = modules(args.src)
    root = args.src.parent.parent

    def where(a: Arrow) -> str:
        return f"{mods[a.source].relative_to(root)}:{a.line}"

    if args.graph:
        for m in sorted(edges, key=lambda m: (layer_of(m) if layer_of(m) is not None else -1, m)):
            layer = layer_of(m)
            print(f"[{LAYERS[layer][0] if layer is not None else '?'}] {m}")
            for a in edges[m]:
                print(f"    -> {a.target}  ({where(a)})")
    problems = 0
    for component in circles(edges):
        problems += 1
        print("circle: " + " <-> ".join(component))
        for a in (a for m in component for a in edges[m] if a.target in component):
            print(f"    {a.source} -> {a.target}  ({where(a)})")
    for a in upward(edges):
        problems += 1
        s, t = layer_of(a.source), layer_of(a.target)
        print(f"up: {a.source} [{LAYERS[s][0]}] -> {a.target} [{LAYERS[t][0]}]  ({where(a)})")
    for m in unlayered(edges):
        problems += 1
        print(f"no layer: {m} (add it to LAYERS in scripts/imports.py)")
    for m, n in too_long(args.src):
        problems += 1
        print(f"too long: {m} ({n} lines > {MAX_LINES})")
    for m, path in mods.items():
        for a in named_arrows(m, path, set(mods)):
            print(f"named (lazy, not checked): {a.source} -> {a.target}  ({where(a)})")
    print(f"{len(edges)} modules, {sum(map(len, edges.values()))} arrows, {problems} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
