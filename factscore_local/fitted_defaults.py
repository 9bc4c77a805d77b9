"""The thresholds and rules fitted on the dev labels for each embedded model, shipped in
``data/model-defaults.json`` (written by ``fscore ship-rule`` from ``fscore calibrate``;
see docs/benchmarks/). ``config.build_config`` applies them when that model is used and
neither an option nor a settings file gives them.

One schema for every model: ``{"schema": 2, "models": {model: {"default_rule": name,
"rules": {rule: {"margin"?, "np_threshold"?, "raw_text_shift"?, "weights"?: {feature:
coefficient}, "provenance": {...}}}}}}``. Rules are keyed by their ``data/rules.json``
names; weights by feature name, checked against the rule when read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from factscore_local.data import data_file
from factscore_local.lm.names import known_name, served_name

MODEL_DEFAULTS_PATH = data_file("model-defaults.json")
DEFAULTS_SCHEMA = 2
THRESHOLD_KEYS = ("margin", "np_threshold", "raw_text_shift")


def model_name(lm: str | None, lm_model: str | None = None) -> str:
    """The name an LM spec goes by (``lm/names.py``). For a server without ``lm_model``
    this asks the server which model it serves (``GET /models``): for commands that talk
    to a server on purpose; building a config never calls it (``known_name``)."""
    name = known_name(lm, lm_model)
    if name is None:
        from factscore_local.lm.server_client import served_model

        name = served_name(served_model(lm, lm_model))
    return name


@dataclass(frozen=True)
class ShippedRule:
    """A rule's shipped settings for one model: its thresholds, its weights in the rule's
    order (checked by name), and what they were fitted on."""

    rule: str
    settings: dict[str, Any]  # EvalConfig fields: margin, np_threshold, rule_weights, ...
    provenance: dict[str, Any] = field(default_factory=dict)


def check_defaults(table: dict, where: str = "model-defaults.json") -> dict[str, dict]:
    """The models' entries of a defaults table, each rule's weights checked by name.

    Raises:
        ValueError: on another schema, an unknown rule, or weights that do not name the
            rule's features (a feature renamed or reordered in code fails here, not
            silently).
    """
    from factscore_local.declarations.verifiers import get_verifier

    if table.get("schema") != DEFAULTS_SCHEMA:
        raise ValueError(f"{where}: schema {table.get('schema')!r}; this release reads "
                         f"{DEFAULTS_SCHEMA}")  # fmt: skip
    for model, entry in table["models"].items():
        for rule, shipped in entry.get("rules", {}).items():
            verifier = get_verifier(rule)
            if verifier.name != rule:
                raise ValueError(f"{where}: {model}: rule {rule!r} is named {verifier.name!r}")
            if "weights" in shipped:
                try:
                    verifier.weights_from(shipped["weights"])
                except ValueError as exc:
                    raise ValueError(f"{where}: {model}: {rule}: {exc}") from None
        get_verifier(entry["default_rule"])
    return table["models"]


@lru_cache(maxsize=1)
def _models() -> dict[str, dict]:
    return check_defaults(json.loads(MODEL_DEFAULTS_PATH.read_text(encoding="utf-8")))


def model_defaults(lm: str | None, lm_model: str | None = None) -> dict[str, Any]:
    """The shipped entry of this LM (``default_rule`` and ``rules``; {} when none)."""
    return defaults_of(model_name(lm, lm_model))


def defaults_of(name: str | None) -> dict[str, Any]:
    """The shipped entry of the model of this name ({} when none, or no name)."""
    return _models().get(name, {}) if name else {}


def default_rule(lm: str | None, lm_model: str | None = None) -> str | None:
    """The rule shipped as this LM's default (None: the LM has none)."""
    return defaults_of(model_name(lm, lm_model)).get("default_rule")


def shipped_rule(lm: str | None, rule: str, lm_model: str | None = None) -> ShippedRule | None:
    """The settings shipped for ``rule`` (any of its names) with this LM, or None."""
    return shipped_rule_of(model_name(lm, lm_model), rule)


def shipped_rule_of(name: str | None, rule: str) -> ShippedRule | None:
    """The settings shipped for ``rule`` (any of its names) with the model of this name."""
    from factscore_local.declarations.verifiers import get_verifier

    verifier = get_verifier(rule)
    entry = defaults_of(name).get("rules", {}).get(verifier.name)
    if entry is None:
        return None
    settings = {k: entry[k] for k in THRESHOLD_KEYS if k in entry}
    if "weights" in entry:
        settings["rule_weights"] = verifier.weights_from(entry["weights"])
    return ShippedRule(verifier.name, settings, dict(entry.get("provenance", {})))


def weights_match(name: str, sha256: str | None) -> bool | None:
    """Whether weights of this sha256 are those the model ``name``'s rules were fitted on
    (the embedded model's own digest): True, False, or None where it cannot be told (no
    digest, or a model this release does not embed)."""
    from factscore_local.model_store import EMBEDDED_MODELS

    model = EMBEDDED_MODELS.get(name)
    if model is None or not sha256:
        return None
    return sha256.startswith(model.sha256)


def rule_entry(config, lm: dict | None) -> dict:
    """The run record's account of the rule a run applied: its name, where its thresholds
    came from, the model they were fitted for, and whether the LM's weights are that
    model's (``weights``: "same" by sha256, "other", or "not checked" where the LM's
    digest is not known here, e.g. a server's weights on another machine)."""
    entry = {"name": config.verifier, "thresholds_from": config.thresholds_from,
             "fitted_for": None, "weights": None}  # fmt: skip
    prefix = "fitted defaults of "
    for source in config.thresholds_from.split(", "):
        if source.startswith(prefix):
            entry["fitted_for"] = name = source[len(prefix) :]
            sha = (lm or {}).get("served_sha256", (lm or {}).get("sha256"))
            match = weights_match(name, sha)
            entry["weights"] = {True: "same", False: "other", None: "not checked"}[match]
    return entry
