"""An lm-evaluation-harness task: FActScore of the bios a model under test writes.

The folder holds the task's YAML (``factscore_local.yaml``); ``task.py`` loads the
topics, scores each bio with this project's estimator and aggregates FActScore. Point
lm-eval at the folder::

    lm_eval --model hf --model_args pretrained=DIR --tasks factscore_local \\
        --include_path "$(python -m factscore_local.harness)" \\
        --metadata '{"fscore_topics": "topics.txt", "fscore_index": "idx"}'

Settings (``--metadata`` keys, else environment variables): ``fscore_topics`` /
``FSCORE_TOPICS`` (one entity per line, or FActScore's JSONL), ``fscore_index`` /
``FSCORE_INDEX`` (an index of ``fscore build-index``), ``fscore_lm`` / ``FSCORE_LM``
(the estimator's LM; default the embedded one) and ``fscore_settings`` /
``FSCORE_SETTINGS`` (other ``EvalConfig`` fields, a JSON object).
"""

from __future__ import annotations

from pathlib import Path

TASK_NAME = "factscore_local"


def task_dir() -> Path:
    """The folder to pass to ``lm_eval --include_path``.

    Returns:
        The directory holding ``factscore_local.yaml``.

    Example:
        >>> (task_dir() / "factscore_local.yaml").is_file()
        True
    """
    return Path(__file__).resolve().parent
