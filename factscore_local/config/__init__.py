"""The estimator's settings: declared once, validated, never changed after construction.

``EvalConfig`` holds every setting with its default (``settings.py``); ``build_config`` is
the one way the CLI, a settings file of ``fscore calibrate`` and the scripts make one
(``build.py``). Unknown values are errors, not silent fallbacks.

The settings sit between the LM and the pipeline (docs: Layers): they check their values
against ``factscore_local.declarations`` (the values each stage's settings may take and the
rule registry) and import nothing of the pipeline.
"""

from __future__ import annotations

from factscore_local.config.build import SETTINGS_KEYS, build_config
from factscore_local.config.settings import (
    CONFIG_FIELDS,
    DEFAULT_GAMMA,
    DEFAULTS,
    MAX_EVIDENCE_BUDGET,
    SETTING_FIELDS,
    EvalConfig,
    setting,
    setting_choices,
)
from factscore_local.declarations.decomposition import ABSTAIN_RULES, DECOMPOSE_PROMPTS
from factscore_local.declarations.evidence import EVIDENCE_MODES, PASSAGE_ORDERS, RETRIEVALS
from factscore_local.declarations.signals import FACT_CONTEXTS, QUESTIONS, VERIFY_FORMATS

# Names this module has offered importers (scripts, tests) since before the split; each
# lives where its module says.
from factscore_local.fitted_defaults import default_rule, model_name, shipped_rule
from factscore_local.npm.defaults import (
    DEFAULT_NP_MODEL,
    JOINT_NP,
    NPM_THRESHOLD,
    STANDIN_NP_THRESHOLDS,
    default_np_threshold,
)

__all__ = [
    "ABSTAIN_RULES", "CONFIG_FIELDS", "DECOMPOSE_PROMPTS", "DEFAULTS", "DEFAULT_GAMMA",
    "DEFAULT_NP_MODEL", "EVIDENCE_MODES", "FACT_CONTEXTS", "JOINT_NP", "MAX_EVIDENCE_BUDGET",
    "NPM_THRESHOLD", "PASSAGE_ORDERS", "QUESTIONS", "RETRIEVALS", "SETTINGS_KEYS",
    "SETTING_FIELDS", "STANDIN_NP_THRESHOLDS", "VERIFY_FORMATS", "EvalConfig", "build_config",
    "default_np_threshold", "default_rule", "model_name", "setting", "setting_choices",
    "shipped_rule",
]  # fmt: skip
