"""Other tools' Python interfaces, backed by this project's estimator.

``factscore_local.compat.factscore`` mirrors the ``factscore`` package (FActScore 0.2.0):
code written against ``from factscore.factscorer import FactScorer`` runs offline by
changing only that import line.
"""
