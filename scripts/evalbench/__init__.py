"""``fscore eval``'s model stages against FActScore's own verification procedure
(``python -m scripts.bench_eval``)."""
