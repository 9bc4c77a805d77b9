"""Benchmark `fscore eval`'s model stages against FActScore's own verification procedure:
the entry point of ``scripts/notebook/evalbench/``, whose package docstring says what it
measures (``--help`` prints it)."""

from scripts.notebook.evalbench.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
