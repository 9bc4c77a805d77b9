"""Click options built from the settings' own declaration (``EvalConfig``'s fields).

Each setting's help, default and allowed values are written once, in ``config/settings.py``;
:func:`config_option` turns a field into its ``--option``. The options that are not
settings (the input files, a settings file, which bios) are declared here, and
:func:`estimator_groups` sorts the estimator's options under the ``--help`` headings of
:mod:`factscore_local.cli.groups`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import MISSING
from functools import cache, partial
from pathlib import Path
from types import NoneType
from typing import Any, get_args, get_type_hints

import click

from factscore_local.cli.groups import DECISION, EVIDENCE, FACTS, IO, MODEL, RUNTIME
from factscore_local.config import SETTING_FIELDS, EvalConfig, setting_choices

# Options of eval and calibrate that are not settings of the estimator.
RUN_OPTIONS = ("inputs", "settings", "n_samples", "topic_half", "quiet")

# Help for the settings that config/settings.py declares without one (what --help shows).
FALLBACK_HELP = {
    "backend": "How the LM runs: 'auto' gives a GGUF file to llama.cpp (faster on a CPU) "
    "and a Hugging Face directory to transformers; or name one.",
    "retrieval": "How each fact's passages are found in its topic's page: BM25, or the "
    "dense encoder's similarity.",
    "abstain": "When a response counts as not responding (left out of the score): "
    "'generic' (FActScore's: it opens with \"I'm sorry\" or asks to provide more), "
    "'perplexity_ai' (Perplexity.ai's no-information phrases) or 'none'.",
}
MARGIN_HELP = (
    "A threshold rule's cut (e.g. --verifier retrieve-lm or paper): supported when "
    "logit(True) - logit(False) exceeds this. Default: the model's fitted rule (a threshold "
    "rule takes the model's shipped cut, else 0)."
)


@cache
def _field_types() -> dict[str, Any]:
    return get_type_hints(EvalConfig)


def config_option(name: str, **overrides: Any) -> Callable:
    """The click option of one ``EvalConfig`` field.

    Args:
        name: The field's name; the option is ``--name-with-dashes`` unless the field
            names another.
        **overrides: Metadata that differs for this command (e.g. ``help`` where a method
            reads the setting in its own way, ``min``/``max`` for a range,
            ``show_default`` as a string to show instead of the value); ``cls`` and
            ``metavar`` go to ``click.option`` as they are.

    Returns:
        A click option decorator whose parameter is the field's name.

    Example:
        >>> @click.command()
        ... @config_option("k")
        ... def show(k):
        ...     click.echo(k)
    """
    field = SETTING_FIELDS[name]
    passed = {k: overrides.pop(k) for k in ("cls", "metavar") if k in overrides}
    meta = {**field.metadata, **overrides}
    base = next(t for t in get_args(_field_types()[name]) or (_field_types()[name],)
                if t is not NoneType)  # fmt: skip
    flag = meta.get("option", "--" + name.replace("_", "-"))
    kwargs: dict[str, Any] = {"help": meta.get("help") or FALLBACK_HELP.get(name), **passed}
    if field.default is MISSING:
        kwargs["required"] = True
    else:
        kwargs["default"] = field.default
        shown = field.default is not None and (base is not bool or meta.get("negatable"))
        if isinstance(meta.get("show_default"), str):
            kwargs["show_default"] = meta["show_default"]
        elif shown and meta.get("show_default", True):
            kwargs["show_default"] = True
    choices = setting_choices(name)
    if base is bool:
        if meta.get("negatable"):
            flag = f"{flag}/--no-{flag[2:]}"
        else:
            kwargs["is_flag"] = True
            kwargs.pop("default")
    elif base is Path:
        existing = bool(meta.get("existing_file"))
        kwargs["type"] = click.Path(path_type=Path, exists=existing, dir_okay=not existing)
    elif choices is not None:
        kwargs["type"] = click.Choice(choices)
    elif "min" in meta or "max" in meta:
        kwargs["type"] = click.IntRange(meta.get("min"), meta.get("max"))
    elif field.default is None or base is int:
        kwargs["type"] = base if base in (int, float) else None
    return click.option(flag, name, **kwargs)


# --- the verifier's and the LM's help ---------------------------------------------------
def listed_rules() -> list[tuple[str, str]]:
    """The rules ``--verifier``'s help lists, read from the verifier registry now.

    The registry's own listing (``list_rules()``: the rules meant for users, the default
    first) where it has one; else every registered name with its description.

    Returns:
        ``(name, description)`` pairs, in the registry's order.

    Example:
        >>> listed_rules()[0][0]  # doctest: +SKIP
        'default'
    """
    from factscore_local.declarations import verifiers

    listing = getattr(verifiers, "list_rules", None)
    if listing is not None:
        return [(v.name, v.description) for v in listing()]
    return [(n, verifiers.get_verifier(n).description) for n in verifiers.verifier_names()]


def rule_list_help(intro: str, width: int | None = None) -> str:
    """``intro``, then one line per listed rule (``name: description``).

    Args:
        intro: What the option does and its default.
        width: Wrap the text to this many characters, each rule's line with a hanging
            indent (None: the intro as a paragraph, then one unwrapped line per rule).

    Returns:
        Help text whose rule lines click keeps as they are (a ``\\b`` paragraph).
    """
    from factscore_local.declarations.verifiers import verifier_names

    rules = listed_rules()
    lines = [f"{name}: {text}" if text else name for name, text in rules]
    tail = []
    if set(verifier_names()) - {name for name, _ in rules}:
        tail = ["Other registered names (older spellings, research rules) work too."]
    if width is None:
        return "\n\n".join([intro, "\b\n" + "\n".join(lines), *tail])
    wrap = partial(textwrap.wrap, width=width)  # a long name breaks at its hyphens
    wrapped = wrap(intro)
    for line in [*lines, *tail]:
        wrapped += wrap(line, subsequent_indent="" if line in tail else "  ")
    return "\b\n" + "\n".join(wrapped)


def _help_column(ctx: click.Context) -> int:
    """The narrowest the help column of an option list can be in this context's help."""
    formatter = ctx.make_formatter()
    available = formatter.width - formatter.indent_increment  # options sit under a heading
    col2 = available - getattr(formatter, "col1_max_width", 30)
    col2 -= getattr(formatter, "col_spacing", 2)
    if col2 < getattr(formatter, "col2_min_width", 0):  # cloup lists help below the option
        col2 = available - max(3, formatter.indent_increment)
    return max(col2, 20)


class RuleListOption(click.Option):
    """``--verifier``: its help lists the registry's rules when it is read, one a line
    (wrapped to the help column when ``--help`` shows it)."""

    @property
    def help(self) -> str:  # type: ignore[override]
        return rule_list_help(self._intro)

    @help.setter
    def help(self, value: str | None) -> None:
        self._intro = value or ""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        record = super().get_help_record(ctx)
        if record is None:
            return None
        extra = record[1][len(self.help) :]  # "  [required]" and the like, if any
        return record[0], rule_list_help(self._intro, _help_column(ctx)) + extra


def lm_option() -> Callable:
    """``--lm``, its help naming the embedded models and showing the default one."""
    from factscore_local.model_store import DEFAULT_LM, EMBEDDED_MODELS

    others = ", ".join(name for name in EMBEDDED_MODELS if name != DEFAULT_LM)
    text = SETTING_FIELDS["lm"].metadata["help"]
    return config_option("lm", help=f"{text} Embedded models: {DEFAULT_LM} (the default), "
                         f"{others} ('fscore models list').")  # fmt: skip


def verifier_option() -> Callable:
    """``--verifier``: a rule's name (NAME, not the list of every name), help from the
    registry."""
    text = SETTING_FIELDS["verifier"].metadata["help"]
    return config_option("verifier", cls=RuleListOption, metavar="NAME",
                         help=f"The rule that decides each fact. {text}")  # fmt: skip


def margin_option() -> Callable:
    """``--margin`` with no default shown (the model's fitted rule decides without it)."""
    return config_option("margin", help=MARGIN_HELP, show_default=False)


# --- the estimator's options ------------------------------------------------------------
INPUT_OPTION = click.option(
    "--input",
    "inputs",
    required=True,
    multiple=True,
    type=click.Path(path_type=Path),
    help="JSONL with 'topic' and 'output' per line (FActScore's format); repeatable, "
    "one file per subject LM.",
)
SETTINGS_OPTION = click.option(
    "--settings",
    type=click.Path(path_type=Path),
    default=None,
    help="Thresholds written by 'fscore calibrate' (explicit options win).",
)


def n_samples_option(inputs: str = "bios") -> Callable:
    """``--n-samples N``: only the first N inputs of each file, in every command that has
    it (``factcheck --limit`` is its deprecated spelling).

    Args:
        inputs: What the command's input lines are, for the help ("bios", "lines").

    Returns:
        A click option decorator (parameter ``n_samples``).
    """
    return click.option(
        "--n-samples",
        default=None,
        type=click.IntRange(min=1),
        help=f"Only the first N {inputs} of each file (FActScore's --n_samples).",
    )


TOPIC_HALF_OPTION = click.option(
    "--topic-half",
    type=click.IntRange(0, 1),
    default=None,
    help="Only the topics of this half (0 or 1) of a fixed split: fit on one, measure "
    "on the other.",
)
QUIET_OPTION = click.option("--quiet", is_flag=True, help="No progress bars.")


def estimator_groups() -> dict[str, list[Callable]]:
    """The options of eval and calibrate under their ``--help`` headings: the settings by
    name (help from ``EvalConfig``) and the run's own options, in the order listed.

    Returns:
        Heading -> option decorators, for :func:`groups.option_groups`.

    Example:
        >>> import cloup
        >>> from factscore_local.cli.groups import option_groups
        >>> @cloup.command()
        ... @option_groups(estimator_groups())
        ... def fit(**opts): ...
        >>> [group.title for group in fit.option_groups][:3]
        ['Input and output', 'Atomic facts', 'Model']
    """
    settings = config_option
    return {
        IO: [settings("index"), INPUT_OPTION, n_samples_option(), TOPIC_HALF_OPTION],
        FACTS: [
            *map(settings, ("use_atomic_facts", "abstain", "clean", "standalone", "demos")),
            *map(settings, ("decompose_prompt", "max_sentences")),
        ],
        MODEL: [
            lm_option(),
            *map(settings, ("lm_model", "lm_concurrency", "backend", "lm_dtype", "device")),
        ],
        EVIDENCE: [
            *map(settings, ("retrieval", "k", "evidence", "evidence_budget")),
            *map(settings, ("global_evidence", "passage_order")),
        ],
        DECISION: [
            verifier_option(),
            margin_option(),
            *map(settings, ("np_model", "np_threshold", "np_stopwords")),
            SETTINGS_OPTION,
            *map(settings, ("verify_format", "verify_question", "verify_demos")),
            settings("fact_context"),
            settings("values_as_stated"),
        ],
        RUNTIME: [
            *map(settings, ("cache", "prefix_states", "threads", "batch_bios", "seed")),
            QUIET_OPTION,
        ],
    }


def chosen_settings(ctx: click.Context, opts: dict[str, Any]) -> dict[str, Any]:
    """The settings given on the command line (a default is no choice: a settings file or
    a model's fitted thresholds may fill it); index and cache are passed on their own.

    Args:
        ctx: The command's context.
        opts: The command's parameters.

    Returns:
        ``EvalConfig`` field name -> value, for the options typed on the command line.

    Example:
        >>> chosen_settings(ctx, opts)  # doctest: +SKIP
        {'verifier': 'random', 'seed': 3}
    """
    commandline = click.core.ParameterSource.COMMANDLINE
    return {
        k: v
        for k, v in opts.items()
        if k in SETTING_FIELDS
        and k not in ("index", "cache")
        and ctx.get_parameter_source(k) == commandline
    }
