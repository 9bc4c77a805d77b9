"""The values the decomposition's settings may take (``EvalConfig.abstain`` and
``EvalConfig.decompose_prompt``), declared apart from the stages that implement them
(``pipeline/decomposition/``), so that the settings check a value without loading a stage."""

from __future__ import annotations

# Abstention rules (``pipeline/decomposition/abstain.py``): "none" never abstains.
ABSTAIN_RULES: tuple[str, ...] = ("none", "generic", "perplexity_ai")
# The decomposition's instruction: "reference" is FActScore's text verbatim, no bullet prime.
DECOMPOSE_PROMPTS = ("ours", "reference")
