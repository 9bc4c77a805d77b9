"""Nonparametric masked-LM probability (NP), as used by FActScore's ensemble."""

from factscore_local.npm.np_prob import (
    DEFAULT_NP_THRESHOLD,
    DEFAULT_PREFIX,
    NPDetails,
    NPScorer,
    NPStats,
    TokenScore,
    retrieval_probabilities,
)
from factscore_local.npm.stopwords import derive_stopword_ids, load_stopword_ids

__all__ = [
    "DEFAULT_NP_THRESHOLD",
    "DEFAULT_PREFIX",
    "NPDetails",
    "NPScorer",
    "NPStats",
    "TokenScore",
    "derive_stopword_ids",
    "load_stopword_ids",
    "retrieval_probabilities",
]
