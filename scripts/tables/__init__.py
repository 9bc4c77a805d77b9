"""FActScore's Tables 1, 3 and 9 on the dev split, and the sections measured beside them
(``python -m scripts.reproduce_tables``; the docstring of that module says what each
section measures)."""
