"""FActScore's Python API (``factscore`` 0.2.0 on PyPI), offline.

The module layout mirrors the reference package, so a user changes one import line::

    from factscore.factscorer import FactScorer                        # before
    from factscore_local.compat.factscore.factscorer import FactScorer  # after

``from factscore_local.compat.factscore import FactScorer`` works too.
"""

from factscore_local.compat.factscore.factscorer import FactScorer

__all__ = ["FactScorer"]
