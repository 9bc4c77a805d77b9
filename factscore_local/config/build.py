"""``build_config``: the one way the CLI, a settings file of ``fscore calibrate`` and the
scripts make an ``EvalConfig``, filling what was not given from the settings file and from
the rule and thresholds shipped for the LM (``data/model-defaults.json``).

Building a config sends no request: for a server whose model is not named (``--lm URL``
without ``--lm-model``) the model's fitted defaults are left pending, and the run's plan
applies them once the server says which model it serves (``with_served_defaults``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from factscore_local.config.settings import CONFIG_FIELDS, DEFAULTS, EvalConfig
from factscore_local.declarations.verifiers import get_verifier
from factscore_local.fitted_defaults import defaults_of, shipped_rule_of
from factscore_local.lm.names import known_name

# What a settings file of ``fscore calibrate`` may set.
SETTINGS_KEYS = ("verifier", "margin", "np_threshold", "np_model", "rule_weights", "head")


# What a model's fitted defaults fill (when not given).
FITTED_KEYS = ("verifier", "margin", "np_threshold", "rule_weights", "raw_text_shift")


def build_config(
    options: Mapping[str, Any],
    settings: Mapping[str, Any] | None = None,
    explicit: Collection[str] | None = None,
    served: str | None = None,
) -> EvalConfig:
    """An EvalConfig from option values (keys are EvalConfig's field names).

    ``settings`` (a calibrate settings file) fills the thresholds and verifier unless the
    option was given explicitly: ``explicit`` names those (None: every key of ``options``).
    ``served``: the name of the model a server serves, once it is known.
    """
    unknown = set(options) - set(CONFIG_FIELDS)
    if unknown:
        raise ValueError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    values = dict(options)
    given = set(options) if explicit is None else set(explicit)
    asked = set(given)  # options given explicitly (not by a settings file)
    sources = []
    if settings:
        taken = [k for k in SETTINGS_KEYS if k in settings and k not in given]
        values.update({k: settings[k] for k in taken})
        given |= set(taken)
        sources += ["settings file"] * bool(taken)
    name = served or known_name(values.get("lm"), values.get("lm_model"))
    rule = values.get("verifier")
    if "verifier" not in given:  # the model's own default rule (a rule fitted for it)
        rule = defaults_of(name).get("default_rule") or DEFAULTS["verifier"]
    verifier = get_verifier(rule)
    values["verifier"] = rule
    shipped = shipped_rule_of(name, rule)
    if shipped:
        taken = [k for k in ("margin", "np_threshold", "rule_weights") if k in shipped.settings
                 and k not in given]  # fmt: skip
        # The raw-text shift belongs to the shipped weights: not to weights given otherwise.
        if "rule_weights" in taken and "raw_text_shift" in shipped.settings:
            taken.append("raw_text_shift")
        values.update({k: shipped.settings[k] for k in taken})
        sources += [f"fitted defaults of {name}"] * bool(taken)
    cuts = sorted(asked & {"margin", "np_threshold"})
    if cuts and verifier.features and values.get("rule_weights") is not None:
        options = " and ".join("--" + c.replace("_", "-") for c in cuts)
        raise ValueError(
            f"{options} cut a threshold rule, but rule {verifier.name!r} is a fitted rule "
            "that weighs the margin and NP; give a threshold rule with it (e.g. --verifier "
            "retrieve-lm or --verifier paper), or leave it out"
        )
    sources += ["options"] * bool(asked & {"margin", "np_threshold", "rule_weights"})
    values["defaults_pending"] = None
    if name is None:  # a server's model: its fitted defaults wait for its name
        values["defaults_pending"] = tuple(sorted(given & set(FITTED_KEYS)))
        sources.append("the served model's fitted defaults, once connected")
    values["thresholds_from"] = ", ".join(sources) or "built-in defaults"
    if values.get("index") is None:
        raise ValueError("an index directory is required")
    values["index"] = Path(values["index"])
    return EvalConfig(**values)


def with_served_defaults(config: EvalConfig, served: str) -> EvalConfig:
    """``config`` with the fitted defaults of the model a server serves (named ``served``)
    where they were pending; the settings given explicitly stay. Unchanged otherwise."""
    if config.defaults_pending is None:
        return config
    given = set(config.defaults_pending)
    options = {name: getattr(config, name) for name in CONFIG_FIELDS
               if name not in ("thresholds_from", "defaults_pending")
               and (name in given or name not in FITTED_KEYS)}  # fmt: skip
    return build_config(options, explicit=set(options) - set(FITTED_KEYS) | given, served=served)
