"""The per-fact signals a rule reads (margin, NP, coverage, slot check, rivals, state head)
and the lexical checks and vocabularies behind them."""
