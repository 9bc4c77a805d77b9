"""Load a local masked LM for NP and probe its tokenizer (length limit, special ids, markers).

Helpers behind :class:`npm.np_prob.NPScorer`: the model is read from a local directory only
(never the hub), and the tokenizer is inspected so that FActScore's ``<s>``/``</s>`` section
markers and the tokenizer's own wrapping ids are handled the same way for any masked LM.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from factscore_local.extras import require
from factscore_local.runtime.offline import enforce_offline

SECTION_MARKERS = ("<s>", "</s>")  # FActScore's passages keep these between sections


def _load_local(path: Path) -> tuple[Any, Any]:
    """Tokenizer and masked LM from a local directory, never the hub."""
    if not path.is_dir():
        raise FileNotFoundError(
            f"NP model directory {path} does not exist; NP needs a masked LM saved locally "
            "(e.g. facebook/npm-single downloaded beforehand with save_pretrained)"
        )
    enforce_offline()  # before transformers is imported: it reads the variables then
    require("torch", "transformers", "NP with a masked LM")
    from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    # A sentence encoder (MiniLM) has no masked-LM head: transformers reports the missing
    # head at length, but NP reads hidden states only, so the report is noise here.
    hf_logging.set_verbosity_error()

    try:
        config = AutoConfig.from_pretrained(str(path), local_files_only=True)
    except Exception as exc:
        raise ValueError(f"{path} is not a Hugging Face model directory: {exc}") from exc
    try:
        model = AutoModelForMaskedLM.from_pretrained(str(path), local_files_only=True)
    except ValueError as exc:
        raise ValueError(
            f"{path} holds a {config.model_type!r} model, which is not a masked LM: {exc}"
        ) from exc
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    except Exception as exc:
        raise ValueError(f"cannot load the tokenizer saved in {path}: {exc}") from exc
    return model, tokenizer


def _max_length(model: Any, tokenizer: Any) -> int:
    """Longest id sequence the encoder takes. RoBERTa offsets positions by pad_id + 1 = 2, so
    2 is taken off the configured positions (a harmless 2-token loss for BERT-style models)."""
    limits = []
    positions = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    if positions:
        limits.append(int(positions) - 2)
    tok_limit = getattr(tokenizer, "model_max_length", None)
    if tok_limit and tok_limit < 100_000:  # huge values mean "unset"
        limits.append(int(tok_limit))
    return max(1, min(limits)) if limits else 512


def _special_wrap(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The ids the tokenizer adds before and after a single text (RoBERTa: [0], [2])."""
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a", add_special_tokens=True)["input_ids"]
    n = len(plain)
    for start in range(len(full) - n + 1):
        if list(full[start : start + n]) == list(plain):
            return list(full[:start]), list(full[start + n :])
    return [], []


def _marker_replacements(tokenizer: Any, special_ids: set[int]) -> dict[str, str]:
    """Make FActScore's literal <s>/</s> section markers special ids for any tokenizer.

    RoBERTa-style tokenizers already map them to bos/eos. Others (e.g. WordPiece would give
    "<", "s", ">") get them rewritten to their own start/end special token, so the markers
    still reach the encoder as boundaries and are then dropped, as in the reference.
    """
    out: dict[str, str] = {}
    for marker, candidates in zip(
        SECTION_MARKERS,
        ((tokenizer.bos_token, tokenizer.cls_token), (tokenizer.eos_token, tokenizer.sep_token)),
        strict=True,
    ):
        ids = tokenizer(marker, add_special_tokens=False)["input_ids"]
        if len(ids) == 1 and ids[0] in special_ids:
            continue
        replacement = " "
        for cand in candidates:
            if cand is None:
                continue
            cand_ids = tokenizer(cand, add_special_tokens=False)["input_ids"]
            if len(cand_ids) == 1 and cand_ids[0] in special_ids:
                replacement = f" {cand} "
                break
        out[marker] = replacement
    return out
