"""What the estimator asks of an LM, and what each LM declares it can do.

Every LM, in this process or behind a server, offers the operations of :class:`LM` and
states its ``capabilities`` as data: a frozenset of the names below. The run's plan
(``pipeline/plan.py``) names the capabilities its passes need and compares them with the
LM's once, before the first bio, so no code asks an LM object what it happens to have.

- ``GENERATION``: greedy continuations (the decomposition of raw text);
- ``NEXT_TOKEN``: next-token log-probabilities of label words (True/False margins);
- ``PROMPT_LOGPROBS``: log-probabilities of a prompt's own tokens (NP from the
  verification pass, and the causal NP scorer);
- ``HIDDEN_STATES``: the final hidden state where a verdict is read (the state heads);
- ``WHOLE_LOGITS``: the whole next-token distribution, not only its top entries;
- ``STREAMED_GENERATION``: ``generate`` reports each output as it ends (``on_done``);
- ``PREFIX_STATES``: evaluated prefixes can be kept on disk (``keep_prefix_states``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from factscore_local.lm.base import LMStats, TrueFalse

GENERATION = "generation"
NEXT_TOKEN = "next-token log-probabilities"
PROMPT_LOGPROBS = "prompt log-probabilities"
HIDDEN_STATES = "hidden states"
WHOLE_LOGITS = "whole logits"
STREAMED_GENERATION = "streamed generation"
PREFIX_STATES = "stored prefix states"
CAPABILITIES = (GENERATION, NEXT_TOKEN, PROMPT_LOGPROBS, HIDDEN_STATES, WHOLE_LOGITS,
                STREAMED_GENERATION, PREFIX_STATES)  # fmt: skip
# What an in-process engine (llama.cpp, transformers) can always do.
IN_PROCESS = frozenset({GENERATION, NEXT_TOKEN, PROMPT_LOGPROBS, HIDDEN_STATES, WHOLE_LOGITS})


class CapabilityError(Exception):
    """An LM lacks a capability a run needs (``pipeline/plan.py`` raises it as PlanError)."""


@runtime_checkable
class LM(Protocol):
    """An LM as the estimator uses it (``lm/base.py``'s engines and ``ServerLM``)."""

    name: str  # the model's name: a file's, or the served model's
    model_name: str  # the name fitted defaults know it by (an embedded model's name)
    backend: str  # llama.cpp, transformers or server
    device: str  # cpu, cuda[:N] or server
    capabilities: frozenset[str]
    stats: LMStats
    read_states: bool  # set by the cache while a pass should also read hidden states
    last_states: list

    def tokenize(self, text: str) -> list[int]:
        """Token ids of text as it continues a prompt (no BOS added)."""
        ...

    def prompt_ids(self, prompt: str) -> list[int]:
        """Ids of a whole prompt (a BOS where the model wants one)."""
        ...

    def chat(self, user: str) -> str:
        """The user message in the model's chat template."""
        ...

    def generate(
        self,
        prompts: list[str],
        max_new_tokens: int,
        stop: list[str],
        on_done: Callable[[int, str], None] | None = None,
    ) -> list[str]:
        """Greedy continuations, cut at the first stop string."""
        ...

    def true_false(self, prompts: list[str], prefixes: list[str] | None = None) -> list[TrueFalse]:
        """The True and False logits after each prompt."""
        ...

    def choice_logits(
        self,
        prompts: list[str],
        labels: Sequence[Sequence[str]],
        prefixes: list[str] | None = None,
    ) -> np.ndarray:
        """(n_prompts, n_labels): each label's next-token logit after each prompt."""
        ...

    def true_false_with_statement(
        self,
        prompts: list[str],
        prefixes: list[str],
        spans: list[tuple[int, int]],
        labels: tuple[Sequence[str], Sequence[str]],
        bases: list[str] | None = None,
    ) -> list[tuple[TrueFalse, list[int], np.ndarray]]:
        """Label logits and the statement's token log-probabilities from one pass."""
        ...

    def token_logprobs(self, pairs: list[tuple[list[int], list[int]]]) -> list[np.ndarray]:
        """log P(continuation[j] | context, continuation[:j]) for (context, continuation)."""
        ...

    def describe(self) -> str:
        """How a message names this LM (a server by its URL)."""
        ...

    def cache_identity(self, cache) -> str:
        """What the result cache keys this LM's results by (its weights, not a URL)."""
        ...

    def fingerprint(self, cache) -> dict:
        """The run record's entry for this LM (name, weights, backend, device, ...)."""
        ...

    def keep_prefix_states(self, folder: Path, identity: str) -> None:
        """Keep evaluated prefixes in ``folder`` (with ``PREFIX_STATES``; else nothing)."""
        ...

    def close(self) -> None:
        """Free what the LM holds (a server's connections; nothing for most engines)."""
        ...
