"""The flags of FActScore's command line (``python -m factscore.factscorer``), with the
reference's names, defaults and types, and this project's few; and what the flags that
mean nothing offline were for."""

from __future__ import annotations

import argparse

from factscore_local.compat.factscore.factscorer import (
    ABSTAIN_TYPES,
    COST_ESTIMATES,
    DEFAULT_KNOWLEDGE_SOURCE,
    MODEL_NAMES,
)
from factscore_local.model_store import DEFAULT_LM, EMBEDDED_MODELS

PROG = "python -m factscore_local.compat.factscore"
DEFAULT_DIR = ".cache/factscore/"  # the reference's data_dir, model_dir and cache_dir
# What each ignored flag was for in the reference.
IGNORED = {
    "openai_key": "no OpenAI API here: facts are decomposed and verified by a local LM",
    "cost_estimate": "no API, so no cost to estimate",
    "print_rate_limit_error": "no API, so no rate limits",
}

KNOWLEDGE_HELP = (
    "The pages facts are checked against. A folder built by 'fscore build-index' (give "
    "its path), or a name NAME: the index folder DATA_DIR/NAME, else FActScore's "
    "DATA_DIR/NAME.db or DATA_DIR/NAME.jsonl, indexed once into CACHE_DIR/indexes/NAME. "
    f"Default name: {DEFAULT_KNOWLEDGE_SOURCE}."
)


def build_parser() -> argparse.ArgumentParser:
    """The reference's flags (same names, defaults and types) and this project's few.

    Returns:
        The parser; ``parse_args`` gives the reference's ``args`` names.
    """
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="FActScore's command line (python -m factscore.factscorer), offline: "
        "the same flags, the same summary lines and output file, scored by factscore-local "
        "with a local LM and an index of Wikipedia.",
    )
    ref = parser.add_argument_group("FActScore's flags")
    ref.add_argument(
        "--input_path",
        type=str,
        default="data/labeled/InstructGPT.jsonl",
        help="JSONL of {topic, output} (and 'annotations' with --use_atomic_facts).",
    )
    ref.add_argument(
        "--model_name",
        type=str,
        default="retrieval+ChatGPT",
        choices=list(MODEL_NAMES),
        metavar="MODEL_NAME",
        help=f"FActScore's estimator: {', '.join(MODEL_NAMES)}. It runs as this project's "
        "verifier with the local LM (a line on stderr says which).",
    )
    ref.add_argument(
        "--gamma",
        type=int,
        default=10,
        help="Length penalty (0: none, and no 'w/o length penalty' line).",
    )
    ref.add_argument("--knowledge_source", type=str, default=None, help=KNOWLEDGE_HELP)
    ref.add_argument(
        "--data_dir",
        type=str,
        default=DEFAULT_DIR,
        help="Where a knowledge source NAME is looked for (see above).",
    )
    ref.add_argument(
        "--cache_dir",
        type=str,
        default=DEFAULT_DIR,
        help="Result cache (eval-cache.db) and indexes built from FActScore's files.",
    )
    ref.add_argument(
        "--model_dir",
        type=str,
        default=None,
        help=f"Default {DEFAULT_DIR}. FActScore's Inst-LLaMA and NPM weights are "
        "not used; a bare --lm file name is looked for here.",
    )
    ref.add_argument(
        "--abstain_detection_type",
        type=str,
        default=None,
        choices=[k for k in ABSTAIN_TYPES if k is not None],
        help="Responses that abstain are left out (default: none).",
    )
    ref.add_argument(
        "--use_atomic_facts",
        action="store_true",
        help="Verify the input's 'model-atomic-facts' instead of decomposing.",
    )
    ref.add_argument(
        "--n_samples",
        type=int,
        default=None,
        help="Only the first N lines of the input (lines skipped as not "
        "annotated count, as in FActScore).",
    )
    ref.add_argument("--verbose", action="store_true", help="Show a progress bar.")
    ref.add_argument("--openai_key", type=str, default=None, help="Ignored (no API).")
    ref.add_argument(
        "--cost_estimate",
        type=str,
        default=None,
        choices=COST_ESTIMATES,
        help="Ignored (no API cost).",
    )
    ref.add_argument(
        "--print_rate_limit_error", action="store_true", help="Ignored (no API rate limits)."
    )
    own = parser.add_argument_group("factscore-local's flags (not FActScore's)")
    own.add_argument(
        "--lm",
        type=str,
        default=None,
        help=f"The local LM: an embedded model's name ({', '.join(EMBEDDED_MODELS)}; "
        f"default: {DEFAULT_LM}), a GGUF file or a Hugging Face directory.",
    )
    own.add_argument(
        "--device", type=str, default="auto", help="Where the LM runs: auto, cpu, cuda or cuda:N."
    )
    own.add_argument(
        "--verifier",
        type=str,
        default=None,
        help="This project's verifier instead of the one --model_name maps to "
        "(see 'fscore eval --help').",
    )
    own.add_argument(
        "--output_path",
        type=str,
        default=None,
        help="Where to write the output JSON (default, as FActScore: the input "
        "path with .jsonl replaced by _factscore_output.json).",
    )
    return parser
