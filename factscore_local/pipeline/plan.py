"""One plan per run: which passes a rule's signal providers read, and what each pass asks
of the LM, made once from the config and checked against the LM before the first bio.

The providers of the rule's signals (``signals/providers.py``) declare the passes they
read (``signals/context.NEEDS``); each pass requires a capability of the LM
(``lm/protocol.py``): the margins next-token log-probabilities, NP read from the
verification pass (or the causal NP scorer) a prompt's own log-probabilities, a state head
the hidden states, raw text the generation. The estimator, its components, the Ray
workers and the FActScore drop-in read the plan instead of asking the rule or the LM what
they happen to hold; ``check`` compares it with the LM's declared capabilities and stops
with one message naming what is missing and the rules this LM could run instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from factscore_local.config import EvalConfig
from factscore_local.declarations.verifiers import Verifier, get_verifier
from factscore_local.lm.protocol import (
    GENERATION,
    HIDDEN_STATES,
    NEXT_TOKEN,
    PROMPT_LOGPROBS,
    CapabilityError,
)
from factscore_local.pipeline.signals.providers import providers_for

# What each pass of the signal context asks of the LM (None: no LM).
PASS_CAPABILITY: Mapping[str, str | None] = {
    "own_passages": None,
    "judged_margins": NEXT_TOKEN,
    "rivals": NEXT_TOKEN,
    "candidates": NEXT_TOKEN,
    "no_context": NEXT_TOKEN,
    "statement_p": PROMPT_LOGPROBS,
    "states": HIDDEN_STATES,
    "np_scorer": None,  # the LM's only with the causal scorer (np_model "lm"): see plan_run
}
PASS_WHAT = {
    "judged_margins": "the margins of the verification pass",
    "rivals": "the rivals' margins",
    "candidates": "the margins of the candidates for the facts' slots",
    "no_context": "the no-context margins",
    "statement_p": "NP read from the verification pass",
    "states": "the hidden states a state head reads",
    "np_scorer": "NP from the causal scorer (np_model lm)",
    "read_states": "the hidden states the run caches",
    "raw_text": "the decomposition of raw text into facts",
}


class PlanError(CapabilityError):
    """The LM cannot give what the run's rule needs: raised when the LM loads, before any
    work is given to it. Not a ValueError, which the estimator reports in one bio's row:
    no bio of the run can be scored."""


@dataclass(frozen=True)
class RunPlan:
    """What one run does: its rule, the passes its providers read, and the capabilities
    of the LM each of them needs (``needs``: capability -> the parts that need it)."""

    rule: str
    signals: tuple[str, ...]
    passes: tuple[str, ...]
    needs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    head: bool = False  # a state head is loaded (and checked) before the first bio

    @property
    def capabilities(self) -> frozenset[str]:
        """The LM capabilities the run needs."""
        return frozenset(self.needs)

    @property
    def loads_lm(self) -> bool:
        """Whether the run needs an LM at all (a labeled run of a lexical rule does not)."""
        return bool(self.needs)

    @property
    def generates(self) -> bool:
        return GENERATION in self.needs

    def missing(self, capabilities: frozenset[str]) -> list[str]:
        """The needed capabilities an LM with ``capabilities`` lacks, in a fixed order."""
        return [c for c in self.needs if c not in capabilities]

    def check(self, lm) -> None:
        """Stops the run (``PlanError``) when ``lm`` lacks a capability the plan needs."""
        missing = self.missing(lm.capabilities)
        if not missing:
            return
        where = lm.describe()
        lacks = "; ".join(
            f"{capability} (for {', '.join(PASS_WHAT.get(p, p) for p in self.needs[capability])})"
            for capability in missing
        )
        runnable = [name for name in listed_rules() if not plan_for(name).missing(lm.capabilities)]
        instead = (f"; rules it can run: {', '.join(runnable)} (--verifier NAME)" if runnable
                   else "")  # fmt: skip
        raise PlanError(f"the rule {self.rule} needs what {where} does not give: {lacks}"
                        f"{instead}")  # fmt: skip


def plan_run(config: EvalConfig, verifier: Verifier | None = None) -> RunPlan:
    """The plan of a run with ``config`` (its rule, or ``verifier`` in its place)."""
    verifier = verifier or get_verifier(config.verifier)
    providers = providers_for(verifier, config)
    passes = tuple(dict.fromkeys(need for p in providers for need in p.needs))
    needs: dict[str, list[str]] = {}

    def need(capability: str, part: str) -> None:
        needs.setdefault(capability, []).append(part)

    if not config.use_atomic_facts:
        need(GENERATION, "raw_text")
    for name in passes:
        capability = PASS_CAPABILITY[name]
        if name == "np_scorer" and config.np_model_spec == "lm":
            capability = PROMPT_LOGPROBS
        if capability is not None:
            need(capability, name)
    if config.read_states and "states" not in passes:
        need(HIDDEN_STATES, "read_states")
    return RunPlan(
        verifier.name,
        tuple(verifier.signals),
        passes,
        {capability: tuple(parts) for capability, parts in needs.items()},
        head="head" in verifier.signals,
    )


def plan_for(rule: str) -> RunPlan:
    """The plan of ``rule`` on labeled facts (what a rule needs of the LM by itself)."""
    return plan_run(EvalConfig(index=".", use_atomic_facts=True, verifier=rule))


def listed_rules() -> list[str]:
    """The rules ``--help`` lists, in its order."""
    from factscore_local.declarations.verifiers import list_rules

    return [v.name for v in list_rules()]


def warn_unfitted(config: EvalConfig, verifier: Verifier, lm, cache) -> None:
    """One line on stderr when the rule's thresholds are not this LM's: a calibrated rule
    with its built-in thresholds (no rule is fitted for the LM, and none was given), or a
    fitted rule applied by the model's name to weights that are other ones, or that could
    not be checked here (a server's)."""
    import sys

    from factscore_local.fitted_defaults import rule_entry

    spec = config.lm or lm.model_name
    calibrate = (f"fscore calibrate --lm {spec} ... --out my-lm.json' and run with --settings "
                 f"my-lm.json (docs: Using another verifier LM)")  # fmt: skip
    if verifier.thresholds and config.thresholds_from == "built-in defaults":
        print(f"warning: no rule is fitted for {lm.model_name}: {verifier.name} runs with its "
              f"built-in thresholds (margin {config.thresholds.margin:g}); fit one with "
              f"'{calibrate}", file=sys.stderr)  # fmt: skip
        return
    entry = rule_entry(config, lm.fingerprint(cache))
    if entry["weights"] == "other":
        print(f"warning: {lm.describe()} runs other weights than the rule {verifier.name} was "
              f"fitted on ({entry['fitted_for']}); fit one for these with '{calibrate}",
              file=sys.stderr)  # fmt: skip
    elif entry["weights"] == "not checked":
        print(f"note: the rule {verifier.name} fitted for {entry['fitted_for']} applies by the "
              f"name {lm.describe()} gives; its weights could not be checked here (serve the "
              f"folder 'python -m factscore_local.lm.export_hf' writes, or fit a rule with "
              f"'{calibrate})", file=sys.stderr)  # fmt: skip
