"""The tests' kinds, told apart by what each test reads (a pytest plugin; the checkout's
``conftest.py`` loads it):

- ``unit``: no real data, no model: the quick loop, ``python -m pytest -m unit``;
- ``e2e``: real data from ``../shared/data``, an embedded model or spaCy's, a browser, an
  optional heavy library, or marked ``slow`` or ``heavy``;
- ``scripts``: the test imports the benchmarks of ``scripts/`` or the docs' generators of
  ``docs/generate/`` (a mark beside ``unit`` or ``e2e``: ``-m "unit and not scripts"`` is
  the package's own unit tests).

A test is ``e2e`` when its function, a fixture it takes, or a function or module constant of
its file that it names (followed to the end) names one of ``NEEDS``, read from the source
with ``ast``; a mark set by hand wins (the marks are declared in ``pyproject.toml``). While
a ``unit`` test runs, ``require`` and ``load_lm`` fail it, so a test this reading gets wrong
shows up instead of passing slowly.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

# Names that mean real data, a model, a browser or a heavy library (tests/conftest.py's
# helpers and fixtures, the package's loaders, an index build: Lucene's JVM and, unless
# told otherwise, the MiniLM encoder; a head's fit: scikit-learn's cross-validated models).
NEEDS = frozenset({
    "require", "SHARED", "EXCERPT", "TABLES", "DEV_DB", "importorskip", "load_lm",
    "installed_path", "load_spacy", "load_shared_lm", "hf_small_lm", "small_lm_export",
    "xml_index", "db_index", "browser_page", "CHROMIUM", "sync_playwright", "build_index",
    "Embedder", "fit_head", "build-index",
})  # fmt: skip
CONFTEST = Path(__file__).with_name("conftest.py")


def names_in(node: ast.AST) -> set[str]:
    """The names a piece of source reads: variables, attributes, a function's parameters
    (its fixtures) and the command names it passes (``"build-index"``)."""
    out: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            out.add(child.id)
        elif isinstance(child, ast.Attribute):
            out.add(child.attr)
        elif isinstance(child, ast.arg):
            out.add(child.arg)
        elif isinstance(child, ast.Constant) and child.value in NEEDS:
            out.add(child.value)
    return out


@functools.cache
def needy_names(path: Path) -> frozenset[str]:
    """The names of a test file that lead to ``NEEDS``: its functions, fixtures and module
    constants that read one, followed until nothing more is added; every name of the file
    when its top level calls one (it reads data as it is imported).

    Example:
        >>> import tempfile
        >>> src = "A = SHARED / 'x'\\ndef helper():\\n    return A\\n"
        >>> src += "def test_a():\\n    helper()\\n"
        >>> with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        ...     _ = f.write(src)
        >>> sorted(needy_names(Path(f.name)) - NEEDS)
        ['A', 'helper', 'test_a']
    """
    tree = ast.parse(path.read_text("utf-8"))
    reads: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            reads[node.name] = names_in(node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    reads[item.name] = names_in(item) | names_in(node)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = names_in(node.value) if node.value is not None else set()
            for target in targets:
                for name in names_in(target):
                    if name != "pytestmark":
                        reads[name] = value
        elif isinstance(node, ast.Expr) and names_in(node) & NEEDS:
            return frozenset(reads) | NEEDS | names_in(tree)
    needy = set(NEEDS)
    if path != CONFTEST:
        needy |= needy_names(CONFTEST)
    grew = True
    while grew:
        grew = False
        for name, read in reads.items():
            if name not in needy and read & needy:
                needy.add(name)
                grew = True
    return frozenset(needy)


BENCHMARKS = {"scripts", "docs"}  # the benchmarks, and the docs' generators that read them


def imports_scripts(path: Path) -> bool:
    """Whether a test file imports the benchmarks (``scripts``) or the docs' generators
    (``docs.generate``, which read them), a function's import too."""
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in BENCHMARKS:
            return True
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in BENCHMARKS
                                                for a in node.names):  # fmt: skip
            return True
    return False


def kind_of(item: pytest.Item) -> str:
    """``unit`` or ``e2e`` for a collected test."""
    if item.get_closest_marker("slow") or item.get_closest_marker("heavy"):
        return "e2e"
    function = getattr(item, "function", None)
    path = Path(str(item.fspath))
    if function is None or path.suffix != ".py":
        return "unit"  # a doctest, or an item of another kind
    try:
        tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return "e2e"  # its source cannot be read: do not call it a unit test
    reads = names_in(tree) | set(getattr(item, "fixturenames", ()))
    return "e2e" if reads & needy_names(path) else "unit"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not (item.get_closest_marker("unit") or item.get_closest_marker("e2e")):
            item.add_marker(kind_of(item))
        path = Path(str(item.fspath))
        if path.suffix == ".py" and imports_scripts(path):
            item.add_marker("scripts")


def _refuse(what: str):
    def refused(*args, **kwargs):
        pytest.fail(f"a unit test {what}: it is an e2e test (tests/kinds.py reads it wrong)",
                    pytrace=False)  # fmt: skip

    return refused


@contextlib.contextmanager
def no_data_or_model(item: pytest.Item) -> Iterator[None]:
    """``require`` (the test file's and conftest's) and ``load_lm`` fail while it runs."""
    import factscore_local.lm as lm
    from tests import conftest

    patch = pytest.MonkeyPatch()
    try:
        patch.setattr(conftest, "require", _refuse("reads ../shared/data"))
        module = getattr(item, "module", None)
        if module is not None and hasattr(module, "require"):
            patch.setattr(module, "require", _refuse("reads ../shared/data"))
        patch.setattr(lm, "load_lm", _refuse("loads a model"))
        yield
    finally:
        patch.undo()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    if not item.get_closest_marker("unit") or not hasattr(item, "function"):
        return (yield)
    with no_data_or_model(item):
        return (yield)
