"""Which NP scorer and threshold a run gets when none is given, and why (measured on the
dev labels; the figures are in docs/benchmarks/)."""

from __future__ import annotations

from factscore_local.npm.np_prob import DEFAULT_NP_THRESHOLD as NPM_THRESHOLD

# NP's default scorer, chosen by measurement on the dev labels (docs/benchmarks/
# np-standins-4.md): the causal LM's token probabilities separate supported facts better than
# MiniLM with NPM's math (AUC 0.76 vs 0.62); read from the verification pass itself
# ("lm-joint") they separate as well as with NP's own passages (AUC 0.793 vs 0.792 on 10
# topics, 2,022 facts; np-joint-10.md) and the ensemble needs one pass per fact instead of two.
DEFAULT_NP_MODEL = "lm-joint"
# NPM's threshold (0.3) fits a masked LM trained for token retrieval. MiniLM's mass on the
# gold token is ~100x smaller, so it has its own default, fitted on dev topics. For the
# causal LM, thresholds fitted on either topic half (0.31 and 0.47 for NP alone, 0.11 and
# 0.47 in the ensemble) lie around NPM's 0.3, which is kept.
STANDIN_NP_THRESHOLDS = {"minilm": 0.004, "lm": 0.3, "lm-joint": 0.3}
# NP read from the Retrieve→LM pass: the probability of the fact's content tokens where the
# verification prompt writes them after its evidence (the verifier's passages, not NP's own
# top np_k), so the ensemble costs one pass per fact instead of two.
JOINT_NP = "lm-joint"


def default_np_threshold(np_model: str | None) -> float:
    """The NP threshold used when none is given, for an NP scorer spec."""
    return STANDIN_NP_THRESHOLDS.get(np_model or DEFAULT_NP_MODEL, NPM_THRESHOLD)
