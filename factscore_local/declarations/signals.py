"""The values the verification prompt's settings may take (``EvalConfig.verify_question``,
``.verify_format`` and ``.fact_context``), declared apart from
``pipeline/signals/verify_prompt.py`` (it reads the prompt files), so that the settings check a
value without loading it."""

from __future__ import annotations

# The question after the statement, and the words its two answers start with (their
# first tokens' logits are compared). "true-false" is FActScore's.
QUESTIONS = {
    "true-false": ("True or False?", ("True", "False")),
    "yes-no": ("Yes or No?", ("Yes", "No")),
}
DEFAULT_QUESTION = "true-false"
# What the verifier sees of a fact besides the statement: "sentence" adds the sentence it
# was taken from, as context for its pronouns and references (not as evidence).
FACT_CONTEXTS = ("none", "sentence")
# How a verification prompt reaches the LM: "chat", wrapped in the model's chat template;
# "plain", as text ending in "Answer:".
VERIFY_FORMATS = ("chat", "plain")
