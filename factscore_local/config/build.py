"""``build_config``: the one way the CLI, a settings file of ``fscore calibrate`` and the
scripts make an ``EvalConfig``, filling what was not given from the settings file and from
the rule and thresholds shipped for the LM (``data/model-defaults.json``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from factscore_local.config.settings import CONFIG_FIELDS, DEFAULTS, EvalConfig
from factscore_local.fitted_defaults import default_rule, model_name, shipped_rule
from factscore_local.pipeline.decision.verifiers import get_verifier

# What a settings file of ``fscore calibrate`` may set.
SETTINGS_KEYS = ("verifier", "margin", "np_threshold", "np_model", "rule_weights", "head")


def build_config(
    options: Mapping[str, Any],
    settings: Mapping[str, Any] | None = None,
    explicit: Collection[str] | None = None,
) -> EvalConfig:
    """An EvalConfig from option values (keys are EvalConfig's field names).

    ``settings`` (a calibrate settings file) fills the thresholds and verifier unless the
    option was given explicitly: ``explicit`` names those (None: every key of ``options``).
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
    lm, lm_model = values.get("lm"), values.get("lm_model")
    rule = values.get("verifier")
    if "verifier" not in given:  # the model's own default rule (a rule fitted for it)
        rule = default_rule(lm, lm_model) or DEFAULTS["verifier"]
    verifier = get_verifier(rule)
    values["verifier"] = rule
    shipped = shipped_rule(lm, rule, lm_model)
    if shipped:
        taken = [k for k in ("margin", "np_threshold", "rule_weights") if k in shipped.settings
                 and k not in given]  # fmt: skip
        # The raw-text shift belongs to the shipped weights: not to weights given otherwise.
        if "rule_weights" in taken and "raw_text_shift" in shipped.settings:
            taken.append("raw_text_shift")
        values.update({k: shipped.settings[k] for k in taken})
        sources += [f"fitted defaults of {model_name(lm, lm_model)}"] * bool(taken)
    cuts = sorted(asked & {"margin", "np_threshold"})
    if cuts and verifier.features and values.get("rule_weights") is not None:
        options = " and ".join("--" + c.replace("_", "-") for c in cuts)
        raise ValueError(
            f"{options} cut a threshold rule, but rule {verifier.name!r} is a fitted rule "
            "that weighs the margin and NP; give a threshold rule with it (e.g. --verifier "
            "retrieve-lm or --verifier paper), or leave it out"
        )
    values["thresholds_from"] = ", ".join(sources) or "built-in defaults"
    if values.get("index") is None:
        raise ValueError("an index directory is required")
    values["index"] = Path(values["index"])
    return EvalConfig(**values)
