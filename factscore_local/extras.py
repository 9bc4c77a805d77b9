"""Optional parts of the package and the one-line error when one is not installed.

The core install scores with per-page BM25 over the index's SQLite store; the heavy parts
are extras of the ``factscore-local`` distribution (``pyproject.toml``):

- ``llama``: the llama.cpp backend (llama-cpp-python), the default for GGUF models;
- ``transformers``: the transformers backend (torch, accelerate, gguf);
- ``dense``: dense retrieval and NP with the embedded MiniLM (sentence-transformers, FAISS);
- ``lucene``: the global Lucene BM25 index (pyserini and a Java runtime);
- ``report``: the figures of ``fscore report`` (matplotlib);
- ``stats``: fitting calibrated rules and Factcheck-Bench's scores (scikit-learn);
- ``ray``: scoring across a Ray cluster; ``harness``: the lm-evaluation-harness task.

Each place that imports one of them goes through :func:`require`, so a missing extra reads
as one line that names it instead of a traceback from deep inside the pipeline.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

import click

__all__ = ["EXTRAS", "MissingExtra", "check_installed", "require"]

DISTRIBUTION = "factscore-local"
EXTRAS = ("llama", "transformers", "dense", "lucene", "report", "stats", "ray", "harness")


class MissingExtra(ImportError, click.ClickException):
    """An optional dependency is not installed.

    An ``ImportError`` for callers of the Python API; a ``ClickException`` so that
    ``fscore`` prints its one line (``Error: ...``) and exits with status 1.
    """

    def __init__(self, message: str, module: str) -> None:
        ImportError.__init__(self, message, name=module)
        click.ClickException.__init__(self, message)

    def __str__(self) -> str:
        return self.message


def install_hint(extra: str) -> str:
    """The pip command that installs an extra, e.g. ``pip install 'factscore-local[llama]'``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def require(module: str, extra: str, what: str) -> ModuleType:
    """Import an optional dependency, or fail with one line naming the extra.

    Args:
        module: the module to import (``"llama_cpp"``, ``"pyserini.search.lucene"``).
        extra: the extra of ``factscore-local`` that installs it (one of :data:`EXTRAS`).
        what: the feature that needs it, as the message's subject ("the llama.cpp backend").

    Returns:
        The imported module.

    Raises:
        MissingExtra: the module (or one it needs) cannot be imported.

    Example:
        >>> json = require("json", "report", "reading JSON")
        >>> require("no_such_module", "llama", "the llama.cpp backend")
        Traceback (most recent call last):
        ...
        factscore_local.extras.MissingExtra: the llama.cpp backend needs the 'llama' extra: \
pip install 'factscore-local[llama]' (no module named 'no_such_module')
    """
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = exc.name or module
        raise MissingExtra(
            f"{what} needs the '{extra}' extra: {install_hint(extra)} (no module named "
            f"'{missing}')",
            missing,
        ) from exc


def check_installed(module: str, extra: str, what: str) -> None:
    """Like :func:`require` without importing the module: a cheap check before long work
    (sentence-transformers takes seconds to import).

    Args:
        module: the top-level module to look for.
        extra: the extra that installs it.
        what: the feature that needs it.

    Raises:
        MissingExtra: the module is not installed.

    Example:
        >>> check_installed("json", "report", "reading JSON")
    """
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a blocked module
        found = False
    if not found:
        require(module, extra, what)  # raises the one-line error
