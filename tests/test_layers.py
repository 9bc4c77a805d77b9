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
# Each folder or top-level module of the package -> its layer, from the bottom up: the
# runtime's helpers; what serves every layer (the knowledge source, the NP scorers, the
# shipped data and prompts); the declarations (what a setting may take and the rule
# registry, ``factscore_local.declarations``); the LM; the settings (with the per-model
# defaults they read); the pipeline; the labels' tools; then the rest. A module of none of
# them fails ``test_every_module_has_a_layer``.
LAYER_OF = {
    "runtime": "runtime", "extras": "runtime", "model_store": "runtime",
    "index": "shared", "npm": "shared", "data": "shared", "prompts": "shared",
    "declarations": "declarations",
    "lm": "lm",
    "config": "config", "fitted_defaults": "config",
    "pipeline": "pipeline",
    "labels": "labels",
    "": "top", "api": "top", "cli": "top", "methods": "top", "report": "top",
    "distributed": "top", "results": "top", "studies": "top", "compat": "top",
    "harness": "top",
}  # fmt: skip
ORDER = ("runtime", "shared", "declarations", "lm", "config", "pipeline", "labels", "top")
# A layer imports nothing from the layers above it.
FORBIDDEN = {name: set(ORDER[i + 1 :]) for i, name in enumerate(ORDER)}
# The declarations' modules: ``config`` checks its values against them and imports nothing
# of the pipeline; the pipeline's stages read them.
DECLARATIONS = {
    "factscore_local.declarations.decomposition",
    "factscore_local.declarations.evidence",
    "factscore_local.declarations.signals",
    "factscore_local.declarations.features",
    "factscore_local.declarations.rules",
    "factscore_local.declarations.verifiers",
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


def folder(module: str) -> str:
    """The folder or top-level module of the package a module is in ("" for the package's
    ``__init__``)."""
    return module.split(".")[1] if module.count(".") else ""


def layer(module: str) -> str | None:
    return LAYER_OF.get(folder(module))


def folder_graph(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The imports between the package's folders and top-level modules."""
    out: dict[str, set[str]] = {folder(m): set() for m in edges}
    for module, targets in edges.items():
        out[folder(module)] |= {folder(t) for t in targets} - {folder(module)}
    return out


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


def test_every_module_has_a_layer():
    """The layer test covers every module of the package, the declarations included."""
    mods = modules()
    assert set(mods) >= DECLARATIONS, "a declaration moved: update DECLARATIONS"
    assert all(layer(m) == "declarations" for m in DECLARATIONS)
    without = sorted(m for m in mods if layer(m) is None)
    assert not without, "modules of no layer (add their folder to LAYER_OF):\n" + "\n".join(without)
    assert set(LAYER_OF.values()) == set(ORDER)
    assert layer("factscore_local.planted.module") is None  # what a new folder would get


def test_the_declarations_import_nothing_of_the_pipeline_or_above():
    edges = graph()
    declarations = {m for m in edges if layer(m) == "declarations"}
    assert declarations >= DECLARATIONS | {"factscore_local.declarations"}
    reached = {t for m in declarations for t in edges[m]}
    assert {layer(t) for t in reached} <= {"runtime", "shared", "declarations"}
    assert not {t for t in reached if folder(t) in ("lm", "config", "pipeline")}
    # Loading a declaration runs its package's __init__, which imports nothing; so does the
    # pipeline's.
    assert not edges["factscore_local.declarations"]
    assert not edges["factscore_local.pipeline"]
    for planted in (
        ("factscore_local.declarations.rules", "factscore_local.pipeline.signals.slots"),
        ("factscore_local.declarations.signals", "factscore_local.config"),
        ("factscore_local.declarations.verifiers", "factscore_local.lm.base"),
    ):
        module, target = planted
        assert layer(target) in FORBIDDEN[layer(module)], planted


def test_config_sits_between_the_lm_and_the_pipeline():
    edges = graph()
    config = {m for m in edges if folder(m) == "config"}
    assert "factscore_local.config.settings" in config
    # The settings check their values against the declarations and import nothing of the
    # pipeline; the pipeline reads the settings.
    reached = {t for m in config for t in edges[m]}
    assert reached & DECLARATIONS
    assert not {t for t in reached if folder(t) == "pipeline"}
    assert any("factscore_local.config" in edges[m] for m in edges if layer(m) == "pipeline")
    for planted in (
        ("factscore_local.config.settings", "factscore_local.pipeline.evidence.blocks"),
        ("factscore_local.lm.base", "factscore_local.config.settings"),
    ):
        module, target = planted
        assert layer(target) in FORBIDDEN[layer(module)], planted


def test_no_circle_between_folders():
    """No two folders (or top-level modules) of the package import each other, through
    any path: config and the pipeline in particular."""
    folders = folder_graph(graph())
    assert "config" in folders["pipeline"] and "pipeline" not in folders["config"]
    assert cycles(folders) == []
    edges = graph()
    edges["factscore_local.config.settings"].add("factscore_local.pipeline.evidence.blocks")
    assert any({"config", "pipeline"} <= set(group) for group in cycles(folder_graph(edges)))


def test_a_function_level_import_counts_and_a_type_checking_one_does_not(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from factscore_local.labels import validation\n"
        "def f():\n    from factscore_local.pipeline.signals import slots\n"
    )
    known = {"factscore_local.labels.validation", "factscore_local.pipeline.signals.slots"}
    assert imports(source, known) == {"factscore_local.pipeline.signals.slots"}
