"""factscore-local: an offline FActScore estimator grounded in a local Wikipedia index."""

__version__ = "0.1.0"
