"""The benchmarks' code (``scripts/``) has no import circle and does not import the docs'
generators (``docs/generate/``, which sit above it and read it): each module's imports, a
function's included, read from the source with ``ast`` (``tests/test_layers.py``). And it
stays small: the benchmarks of record, their suites and checker, at most 6,000 lines of
Python (superseded and negative experiments leave the tree; their records stay)."""

from __future__ import annotations

from pathlib import Path

from tests.test_layers import cycles, imports

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
GENERATORS = SCRIPTS.parent / "docs" / "generate"
MAX_LINES = 6000  # of Python under scripts/, counted as `wc -l` counts them (issue 75)


def scripts_graph() -> dict[str, set[str]]:
    """Each module of ``scripts/`` and the modules of ``scripts/`` it imports."""
    mods = {}
    for path in SCRIPTS.rglob("*.py"):
        parts = list(path.relative_to(SCRIPTS.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    known = set(mods)
    return {name: imports(path, known) - {name} for name, path in mods.items()}


def test_the_graph_sees_the_imports_of_scripts():
    graph = scripts_graph()
    assert "scripts.common" in graph["scripts.bench_veto_precision"]
    assert "scripts.tables.cli" in graph["scripts.reproduce_tables"]


def test_scripts_have_no_import_circle():
    assert cycles(scripts_graph()) == []


def test_scripts_do_not_import_the_docs_generators():
    known = {"docs", "docs.generate"} | {f"docs.generate.{p.stem}" for p in GENERATORS.glob("*.py")}
    assert "docs.generate.pages" in known
    found = {str(p.relative_to(SCRIPTS.parent)): imports(p, known) for p in SCRIPTS.rglob("*.py")}
    assert {path: names for path, names in found.items() if names} == {}


def test_scripts_hold_at_most_6000_lines_of_python():
    lines = {p: p.read_bytes().count(b"\n") for p in SCRIPTS.rglob("*.py")}
    assert lines[SCRIPTS / "common.py"] > 100
    assert sum(lines.values()) <= MAX_LINES, sorted(lines.items(), key=lambda kv: -kv[1])[:10]
