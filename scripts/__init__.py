"""The project's benchmarks, run from the checkout's root as ``python -m scripts.<name>``.

``scripts.common`` holds what they share (subjects, locating the labeled data, timing,
results files); each benchmark can write ``scripts/results/<name>.json``;
``python -m scripts.check`` replays them against those files and ``python -m scripts.docs``
writes ``docs/benchmarks/`` from them.
"""
