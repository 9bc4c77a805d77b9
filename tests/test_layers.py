"""The package's layers point one way (docs/concepts/fact-flow.md, "Layers"): read from the
source with ``ast``, every import counted (a function's too; an annotation-only import under
``if TYPE_CHECKING:`` is not)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Import name -> folder (pyproject.toml's package-dir).
PACKAGES = {"factscore_local": "factscore_local", "factscore_local.index": "index",
            "factscore_local.npm": "npm", "factscore_local.data": "data"}  # fmt: skip
# The pipeline's declarations, a layer of their own below the LM: the values a setting may
# take (each stage's ``choices`` module) and the rules a setting names (the rule registry).
# ``config`` checks its values against them and imports nothing else of the pipeline.
DECLARATIONS = {
    "factscore_local.pipeline.decomposition.choices",
    "factscore_local.pipeline.evidence.choices",
    "factscore_local.pipeline.signals.choices",
    "factscore_local.pipeline.decision.features",
    "factscore_local.pipeline.decision.rules",
    "factscore_local.pipeline.decision.verifiers",
}
ABOVE_PIPELINE = {"labels", "methods", "cli", "api", "report", "distributed"}
# A layer imports nothing from the layers named here. From the bottom up: runtime,
# declarations, lm, config, pipeline, labels, then the rest.
FORBIDDEN = {
    "runtime": {"declarations", "lm", "config", "pipeline", *ABOVE_PIPELINE},
    "declarations": {"lm", "config", "pipeline", *ABOVE_PIPELINE},
    "lm": {"config", "pipeline", *ABOVE_PIPELINE},
    "config": {"pipeline", *ABOVE_PIPELINE},
    "pipeline": ABOVE_PIPELINE,
    "labels": {"methods", "cli", "api", "distributed"},
}


def modules() -> dict[str, Path]:
    out = {}
    for package, folder in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if package == "factscore_local" and parts[0] in ("index", "npm", "data"):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(path: Path, known: set[str]) -> set[str]:
    """The package's modules a file imports (``from m import name`` counts ``m.name`` when
    that is a module, else ``m``)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(name if name in known else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text("utf-8")))
    return {name for name in found if name in known}


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports(path, known) - {name} for name, path in mods.items()}


def layer(module: str) -> str:
    if module in DECLARATIONS:
        return "declarations"
    return module.split(".")[1] if module.count(".") else ""


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return found


def test_no_layer_imports_one_above_it():
    wrong = [
        f"{module} imports {target}"
        for module, targets in graph().items()
        for target in sorted(targets)
        if layer(target) in FORBIDDEN.get(layer(module), ())
    ]
    assert not wrong, "\n".join(wrong)


def test_no_circle_of_imports():
    assert cycles(graph()) == []


def test_the_check_sees_a_planted_backward_import_and_circle():
    edges = graph()
    edges["factscore_local.pipeline.signals.slots"].add("factscore_local.labels.counterfactual")
    edges["factscore_local.labels.counterfactual"].add("factscore_local.pipeline.signals.slots")
    assert layer("factscore_local.labels.counterfactual") in FORBIDDEN["pipeline"]
    planted = {"factscore_local.labels.counterfactual", "factscore_local.pipeline.signals.slots"}
    assert any(planted <= set(group) for group in cycles(edges))


def test_config_sits_between_the_lm_and_the_pipeline():
    edges = graph()
    config = {m for m in edges if layer(m) == "config"}
    assert "factscore_local.config.settings" in config
    assert set(edges) >= DECLARATIONS, "a declaration moved: update DECLARATIONS"
    # Loading a declaration runs its packages' __init__ modules: they import nothing.
    packages = {m.rsplit(".", 1)[0] for m in DECLARATIONS} | {"factscore_local.pipeline"}
    assert all(not edges[p] for p in packages)
    # What the settings import of the pipeline is its declarations, and the pipeline reads
    # the settings.
    reached = {t for m in config for t in edges[m] if t.startswith("factscore_local.pipeline")}
    assert reached and reached <= DECLARATIONS
    assert any("factscore_local.config" in edges[m] for m in edges if layer(m) == "pipeline")
    for planted in (
        ("factscore_local.config.settings", "factscore_local.pipeline.evidence.blocks"),
        ("factscore_local.pipeline.signals.choices", "factscore_local.config"),
        ("factscore_local.lm.base", "factscore_local.config.settings"),
    ):
        module, target = planted
        assert layer(target) in FORBIDDEN[layer(module)], planted


def test_a_function_level_import_counts_and_a_type_checking_one_does_not(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from factscore_local.labels import validation\n"
        "def f():\n    from factscore_local.pipeline.signals import slots\n"
    )
    known = {"factscore_local.labels.validation", "factscore_local.pipeline.signals.slots"}
    assert imports(source, known) == {"factscore_local.pipeline.signals.slots"}
