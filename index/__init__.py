"""Builder of the offline knowledge source: Wikipedia dump -> passages -> BM25 and dense indexes."""
