"""The estimator's stages: decomposition, evidence, signals, decision and records, wired by
``estimator.py`` through the models of ``components.py`` and ``cached_models.py``."""
