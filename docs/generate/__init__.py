"""The docs' generators: the pages, guide blocks and README tables made from the results
records of ``scripts/results/``, run from the checkout's root as ``python -m docs.generate``
(``docs/generate/pages.py``).

They sit beside the docs they write and read the benchmarks' records and constants
(``scripts.common``, ``scripts.tables``); nothing in ``scripts/`` imports them. MkDocs does
not publish this folder (``exclude_docs`` in ``mkdocs.yml``); ``docs/hooks/cli_reference.py``
builds the CLI reference page from ``cli_reference`` at every site build.
"""
