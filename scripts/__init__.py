"""The project's benchmarks, run from the checkout's root as ``python -m scripts.<name>``.

``scripts.common`` holds what they share (subjects, locating the labeled data, timing,
results files); each benchmark can write ``scripts/results/<name>.json``, whose ``status``
says whether its figures are current, superseded or a negative result. The benchmarks
behind the figures of record sit at the top of ``scripts/``; the rest (operations, timings,
earlier and negative experiments) in ``scripts/notebook/``. ``scripts/suites/*.toml`` lay
the records out as conditions × slices (``python -m scripts.suite list``);
``python -m scripts.check`` replays the records against their files and
``python -m docs.generate`` writes ``docs/benchmarks/`` from them. The benchmarks reach the
package through its public names (``factscore_local.studies`` for the pipeline's steps).
"""
