"""Click options built from the settings' own declaration (``EvalConfig``'s fields).

Each setting's help, default and allowed values are written once, in ``config.py``;
:func:`config_option` turns a field into its ``--option``. The options that are not
settings (the input files, a settings file, which bios) are declared here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING
from functools import cache
from pathlib import Path
from types import NoneType
from typing import Any, get_args, get_type_hints

import click

from factscore_local.config import SETTING_FIELDS, EvalConfig, setting_choices

# Options of eval and calibrate that are not settings of the estimator.
RUN_OPTIONS = ("inputs", "settings", "n_samples", "topic_half", "quiet")


@cache
def _field_types() -> dict[str, Any]:
    return get_type_hints(EvalConfig)


def config_option(name: str, **overrides: Any) -> Callable:
    """The click option of one ``EvalConfig`` field.

    Args:
        name: The field's name; the option is ``--name-with-dashes`` unless the field
            names another.
        **overrides: Metadata that differs for this command (e.g. ``help`` where a method
            reads the setting in its own way, ``min``/``max`` for a range).

    Returns:
        A click option decorator whose parameter is the field's name.

    Example:
        >>> @click.command()
        ... @config_option("k")
        ... def show(k):
        ...     click.echo(k)
    """
    field = SETTING_FIELDS[name]
    meta = {**field.metadata, **overrides}
    base = next(t for t in get_args(_field_types()[name]) or (_field_types()[name],)
                if t is not NoneType)  # fmt: skip
    flag = meta.get("option", "--" + name.replace("_", "-"))
    kwargs: dict[str, Any] = {"help": meta.get("help") or None}
    if field.default is MISSING:
        kwargs["required"] = True
    else:
        kwargs["default"] = field.default
        shown = field.default is not None and (base is not bool or meta.get("negatable"))
        if shown and meta.get("show_default", True):
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
SELECTION_OPTIONS = [
    click.option(
        "--n-samples",
        default=None,
        type=click.IntRange(min=1),
        help="Only the first N bios of each file.",
    ),
    click.option(
        "--topic-half",
        type=click.IntRange(0, 1),
        default=None,
        help="Only the topics of this half (0 or 1) of a fixed split: fit on one, measure "
        "on the other.",
    ),
    click.option("--quiet", is_flag=True),
]

# The options of eval and calibrate, in the order --help lists them: the settings by
# name (help from EvalConfig), and the run's own options.
ESTIMATOR_OPTIONS = [
    config_option("index"),
    INPUT_OPTION,
    *map(config_option, ("lm", "backend", "lm_dtype", "device", "verifier", "retrieval", "k")),
    *map(config_option, ("np_model", "np_threshold", "np_stopwords", "margin")),
    SETTINGS_OPTION,
    *map(config_option, ("abstain", "clean", "standalone", "demos", "passage_order")),
    config_option("verify_demos"),
    *map(config_option, ("fact_context", "verify_format", "verify_question", "evidence")),
    *map(config_option, ("evidence_budget", "global_evidence", "decompose_prompt")),
    *map(config_option, ("max_sentences", "use_atomic_facts", "cache", "prefix_states")),
    *map(config_option, ("seed", "threads")),
    *SELECTION_OPTIONS,
]


def estimator_options(command: Callable) -> Callable:
    """Adds the estimator's options (:data:`ESTIMATOR_OPTIONS`) to a command.

    Args:
        command: The click command function.

    Returns:
        The command with the options, listed in the order declared.

    Example:
        >>> @click.command()
        ... @estimator_options
        ... def fit(**opts): ...
    """
    for option in reversed(ESTIMATOR_OPTIONS):
        command = option(command)
    return command


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
