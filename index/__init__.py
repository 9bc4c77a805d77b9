"""Builder of the offline knowledge source: Wikipedia dump -> passages -> BM25 and dense indexes."""

from index import offline as _offline  # noqa: F401  (sets the offline variables first)
