"""The benchmarks reach the package by its public names only (``factscore_local.studies``
names what they need of the pipeline's internals), so that a refactor of the package breaks
the seam, which its tests cover, not the benchmarks. Read from the source with ``ast``: no
file under ``scripts/`` imports a name starting with ``_`` from ``factscore_local`` (or a
module of it whose path has one) or reads another object's private attribute."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import scripts
from tests.test_doctests import module_names, run_examples

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "scripts").rglob("*.py"))


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(source: str) -> list[str]:
    """``module: name`` of each import of a private name (or from a private module) of the
    package, a function's too.

    Example:
        >>> private_imports("from factscore_local.x import a, _b\\nimport factscore_local._c")
        ['factscore_local.x: _b', 'factscore_local._c']
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("factscore_local"):
            if any(private(part) for part in node.module.split(".")):
                found.append(node.module)
            found += [f"{node.module}: {a.name}" for a in node.names if private(a.name)]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("factscore_local")
                      and any(private(part) for part in a.name.split("."))]  # fmt: skip
    return found


def private_attributes(source: str) -> list[str]:
    """Reads of another object's private attribute (``self._x`` and ``cls._x`` are the
    file's own)."""
    return [
        ast.unparse(node)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and private(node.attr)
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    ]  # fmt: skip


def test_the_check_sees_a_private_import_and_attribute():
    assert private_imports("def f():\n    from factscore_local.pipeline import _x\n") == [
        "factscore_local.pipeline: _x"
    ]
    assert private_imports("from factscore_local.studies import judged_on") == []
    assert private_attributes("lm._text(ids)\nself._own = 1") == ["lm._text"]


@pytest.mark.parametrize("path", SCRIPTS, ids=[str(p.relative_to(ROOT)) for p in SCRIPTS])
def test_scripts_import_no_private_name_of_the_package(path: Path):
    source = path.read_text("utf-8")
    assert private_imports(source) == []
    assert private_attributes(source) == []


def test_the_seam_names_what_it_promises():
    """What the benchmarks use of the seam exists and is public."""
    from factscore_local import studies

    for name in ("run_on_bios", "verify_facts", "redecide", "seed_cache", "export_results",
                 "decomposer", "own_passages", "judged_on"):  # fmt: skip
        assert callable(getattr(studies, name)) and getattr(studies, name).__doc__


def test_the_seam_seeds_and_exports_a_cache(tmp_path):
    """seed_cache imports an export into a cache (stored results win) and export_results
    writes back what none of the excluded files holds."""
    from factscore_local import studies
    from factscore_local.runtime.cache import ResultCache, read_export

    source = tmp_path / "a.db"
    store = ResultCache(source)
    store.put_many("choice", {"k1": [1.0, 2.0]})
    store.close()
    first = tmp_path / "part1.jsonl.gz"
    assert studies.export_results(source, first) == 1
    seeded = tmp_path / "b.db"
    assert studies.seed_cache(seeded, [first]) == [(first, 1, 0)]
    assert studies.seed_cache(seeded, [first]) == [(first, 0, 1)]
    store = ResultCache(seeded)
    store.put_many("choice", {"k2": [0.5, 0.1]})
    store.close()
    second = tmp_path / "part2.jsonl.gz"
    assert studies.export_results(seeded, second, exclude=[first]) == 1
    assert [k for k, _, _ in read_export(second)] == ["k2"]


@pytest.mark.parametrize("name", module_names(scripts))
def test_the_scripts_docstring_examples_run(name: str):
    run_examples(name)
