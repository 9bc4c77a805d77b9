"""The examples in the docstrings run: every module of the package (``factscore_local``, with
``index/`` and ``npm/`` under their installed names), imported by name and its doctests run
with ``doctest`` (``scripts/``'s: tests/test_scripts_seam.py). An example that needs an
index, data or a model says ``# doctest: +SKIP``; those that load spaCy's model run among
the e2e tests."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import factscore_local
import factscore_local.index
import factscore_local.npm

SPACY = {"factscore_local.pipeline.signals.rivals"}  # examples that load spaCy's model


def module_names(package) -> list[str]:
    """A package and its modules, ``__main__`` modules left out (importing one runs it);
    ``index`` and ``npm`` live in their own folders, so they are walked on their own."""
    found = pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
    return [package.__name__, *(m.name for m in found if not m.name.endswith("__main__"))]


MODULES = [
    pytest.param(name, marks=pytest.mark.e2e) if name in SPACY else name
    for package in (factscore_local, factscore_local.index, factscore_local.npm)
    for name in module_names(package)
]


def run_examples(name: str) -> None:
    """Runs a module's docstring examples; fails with doctest's report on a wrong one."""
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # an optional extra that is not installed
        pytest.skip(f"{name} does not import here: {exc}")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str):
    run_examples(name)
