"""The thresholds and rules fitted on the dev labels for each embedded model, shipped in
``data/model-defaults.json`` (written by ``scripts/ship_rule.py`` from ``fscore calibrate``;
see docs/benchmarks/). ``config.build_config`` applies them when that model is used and
neither an option nor a settings file gives them; "verifier" is the model's default verifier.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from factscore_local.data import data_file

MODEL_DEFAULTS_PATH = data_file("model-defaults.json")


def model_name(lm: str | None) -> str:
    """The name an LM spec goes by: an embedded name, or a file or directory's name."""
    from factscore_local.model_store import DEFAULT_LM

    if lm is None:
        return DEFAULT_LM
    return Path(lm).name.removesuffix(".gguf")


@lru_cache(maxsize=1)
def _model_defaults_table() -> dict[str, dict]:
    return json.loads(MODEL_DEFAULTS_PATH.read_text(encoding="utf-8"))


def model_defaults(lm: str | None) -> dict[str, Any]:
    """The fitted thresholds shipped for this LM ({} when there are none)."""
    return _model_defaults_table().get(model_name(lm), {})
