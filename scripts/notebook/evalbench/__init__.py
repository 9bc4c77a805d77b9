"""``fscore eval``'s model stages against FActScore's own verification procedure
(``python -m scripts.notebook.bench_eval``)."""
