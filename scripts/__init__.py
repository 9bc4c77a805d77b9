"""The project's benchmarks of record, run from the checkout's root as
``python -m scripts.<name>``.

``scripts.common`` holds what they share (subjects, locating the labeled data, timing,
results files); each benchmark can write ``scripts/results/<name>.json``, whose ``status``
says whether its figures are current, superseded or a negative result. Here are the
benchmarks whose records replay from the committed caches, the speed and GPU runs, and the
checker and suites: ``scripts/suites/*.toml`` lay the records out as conditions × slices
(``python -m scripts.suite list``), ``python -m scripts.check`` replays the records against
their files. Superseded and negative experiments, and operations done once, left the tree:
their records keep their figures, and their ``code`` names the commit and path where git
keeps it. ``python -m docs.generate`` (``docs/generate/``) writes ``docs/benchmarks/`` from
the records. The benchmarks reach the package through its public names
(``factscore_local.studies`` for the pipeline's steps).
"""
