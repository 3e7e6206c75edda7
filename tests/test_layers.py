"""The stages import one way: each module imports only modules of its own stage or of those
below it (ARCHITECTURE.md), at the top of a file or inside a function alike."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tcdist"

# Lowest first; a module is in the stage of the longest prefix that names it.
STAGES = [
    ("tcdist.errors", "tcdist.config", "tcdist.xp", "tcdist.progress", "tcdist.signals", "tcdist.results", "tcdist.caches", "tcdist.compiled",
     "tcdist.budget.sizes", "tcdist.budget.host", "tcdist.budget.model", "tcdist.cuda", "tcdist.budget"),
    ("tcdist.graph",),
    ("tcdist.io",),
    ("tcdist.partition",),
    ("tcdist.count",),
    ("tcdist.budget.search", "tcdist.budget.slices"),
    ("tcdist.device",),
    ("tcdist.clustering", "tcdist.edge_triangles", "tcdist.plan", "tcdist.source"),
    ("tcdist.ranks",),
    ("tcdist.api", "tcdist.environment", "tcdist.warm"),
    ("tcdist.report", "tcdist.flags", "tcdist.cli", "tcdist.__main__", "tcdist", "tcdist.nxbackend"),
]


def stage_of(module: str) -> int:
    best = max(((len(prefix), level) for level, prefixes in enumerate(STAGES) for prefix in prefixes
                if module == prefix or module.startswith(prefix + ".")), default=None)
    assert best is not None, f"{module} is in no stage"
    return best[1]


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tcdist"):
            for alias in node.names:  # `from tcdist.x import y` may import the module tcdist.x.y
                below = f"{node.module}.{alias.name}"
                yield below if (PACKAGE.parent / (below.replace(".", "/") + ".py")).exists() else node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("tcdist"))


def test_every_import_runs_down_the_stages():
    upward = [f"{module} ({stage_of(module)}) imports {target} ({stage_of(target)})"
              for module, path in modules() for target in imports(path)
              if target != "tcdist" and stage_of(target) > stage_of(module)]
    assert upward == []


def test_no_folder_is_named_dist():
    assert not (PACKAGE / "dist").exists()


def test_no_import_cycles():
    graph = {module: {t for t in imports(path) if t != module} for module, path in modules()}
    seen, on_path, cycles = set(), [], []

    def visit(module):
        if module in on_path:
            cycles.append(on_path[on_path.index(module):] + [module])
            return
        if module in seen:
            return
        seen.add(module)
        on_path.append(module)
        for target in graph.get(module, ()):
            if not module.startswith(target + ".") and target != "tcdist":  # a package's own __init__ runs first
                visit(target)
        on_path.pop()

    for module in graph:
        visit(module)
    assert cycles == []
