"""The lab notebook: benchmarks kept for their records but not behind the README's figures,
run as ``python -m scripts.notebook.<name>``.

Each writes ``scripts/results/<name>.json`` like the benchmarks at the top of ``scripts/``;
the record's ``status`` says whether its figures are current (operations: setup, the air
gap, GPUs, Ray, timings), superseded or a negative result. ``python -m scripts.suite list``
shows the suite each belongs to.
"""
