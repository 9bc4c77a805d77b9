"""factscore-local: an offline FActScore estimator grounded in a local Wikipedia index."""

from index import offline as _offline  # noqa: F401  (sets the offline variables first)

__version__ = "0.1.0"
