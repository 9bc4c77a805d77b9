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
from pathlib import Path
from typing import Any

from factscore_local.data import data_file

MODEL_DEFAULTS_PATH = data_file("model-defaults.json")
DEFAULTS_SCHEMA = 2
THRESHOLD_KEYS = ("margin", "np_threshold", "raw_text_shift")


def model_name(lm: str | None, lm_model: str | None = None) -> str:
    """The name an LM spec goes by: an embedded name, a file or directory's name, or for
    a server (``http://HOST:PORT/v1``) the name of the model it serves (``lm_model``, or
    the one ``/models`` lists), so the embedded models' fitted rules apply when a server
    serves their weights."""
    from factscore_local.model_store import DEFAULT_LM

    if lm is None:
        return DEFAULT_LM
    from factscore_local.lm.server_client import is_server_spec

    if is_server_spec(lm):
        from factscore_local.lm.server_client import served_model

        lm = served_model(lm, lm_model)
    return Path(lm).name.removesuffix(".gguf")


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
    from factscore_local.pipeline.decision.verifiers import get_verifier

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
    return _models().get(model_name(lm, lm_model), {})


def default_rule(lm: str | None, lm_model: str | None = None) -> str | None:
    """The rule shipped as this LM's default (None: the LM has none)."""
    return model_defaults(lm, lm_model).get("default_rule")


def shipped_rule(lm: str | None, rule: str, lm_model: str | None = None) -> ShippedRule | None:
    """The settings shipped for ``rule`` (any of its names) with this LM, or None."""
    from factscore_local.pipeline.decision.verifiers import get_verifier

    verifier = get_verifier(rule)
    entry = model_defaults(lm, lm_model).get("rules", {}).get(verifier.name)
    if entry is None:
        return None
    settings = {k: entry[k] for k in THRESHOLD_KEYS if k in entry}
    if "weights" in entry:
        settings["rule_weights"] = verifier.weights_from(entry["weights"])
    return ShippedRule(verifier.name, settings, dict(entry.get("provenance", {})))
