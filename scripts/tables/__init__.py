"""FActScore's Tables 1, 3 and 9 on the dev split, with the embedded CPU models.

    python -m scripts.reproduce_tables --index dev-index --topics 98

- Table 1: statistics of the labeled dev files (all topics; no model).
- Table 3 / Table 9: ER (estimated FActScore) and micro-F1 per verifier on ``--topics``
  topics of the dev files (all three subjects), taken round-robin over the five frequency
  classes (all 98 with ``--topics 98``; ``--max-passages`` can leave out long pages), with
  the labels' ``model-atomic-facts`` (ER) and the human atomic facts (F1); each thresholded
  verifier once with the default thresholds and once calibrated by 2-fold cross-fitting
  over the fixed topic halves (thresholds fitted on one half, measured on the other: no
  number is fitted on the data it is measured on); the same split by page length (at most
  5 passages, or more). ``--evidence`` picks the evidence mode of every run.
- The fitted decision rules (``retrieve-lm+np-fitted``, a logistic model over margin and
  NP; ``retrieve-lm+np+coverage-fitted``, the same with the fact's lexical coverage by its
  passages, and the slot check's rules over it) cross-fitted like the thresholds, on the
  main run's signals (no model run).
- What limits the estimate: the share of human-supported facts' content words present on
  the dev pages (no model), and per-label agreement of retrieve-lm with the humans.

The sections no replayed record runs (evidence modes on long pages, prompt levers, NP
stand-ins, the own decomposition, retrieval ablations, demonstrations) left the tree; their
records keep their figures and say where the code is (their ``code``).

Every model result goes through one SQLite cache (``--cache``), so a rerun, or a run with
more topics, only computes what is new; ``--seed-cache FILE`` first imports the results of
an earlier run (``fscore cache export``), e.g. on another machine. Prints markdown; writes
all figures as JSON; with ``--results NAME``, a results file for ``scripts.check``.
The code is in this package; ``python -m scripts.reproduce_tables`` runs it.
"""
