"""A GGUF's weights as a Hugging Face safetensors folder, for servers that cannot read GGUF.

vLLM 0.32 fails on a local ``.gguf`` as ``--model``; it serves a folder with
``config.json``, the tokenizer's files and ``model.safetensors``. This writes one from a
GGUF (an embedded model's name, or a file), through transformers' GGUF reader, which
dequantizes every tensor:

    python -m factscore_local.lm.export_hf qwen2.5-coder-0.5b-instruct-q4_k_m OUT_DIR

In ``float32`` (the default) the dequantized values are kept exactly (a Q4_K or Q6_K
weight is a small integer times a half-precision scale); ``bfloat16`` halves the folder
and rounds each weight to 8 bits of mantissa. The folder records the GGUF's sha256 and the
dtype (``fscore-export.json``): a second export of the same GGUF in the same dtype does
nothing. The config has no ``quantization_config`` (the weights are plain tensors now)
and no sampling defaults (a server would apply a ``generation_config.json``'s).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from factscore_local.runtime.files import file_sha256
from factscore_local.runtime.offline import enforce_offline

STAMP = "fscore-export.json"
WEIGHTS = "model.safetensors"
DTYPES = ("float32", "bfloat16")
FORMAT = 1  # of the stamp: a later layout of the folder gets another number


def default_out(spec: str, dtype: str = "float32") -> Path:
    """Where an export goes without OUT_DIR: beside the embedded models, one folder per
    model and dtype (``<model cache>/hf/NAME-DTYPE``)."""
    from factscore_local.model_store import model_dir

    return model_dir() / "hf" / f"{Path(spec).name.removesuffix('.gguf')}-{dtype}"


def read_stamp(out: Path) -> dict | None:
    """The export record of ``out``, or None where it holds none (or an unreadable one)."""
    try:
        stamp = json.loads((out / STAMP).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None


def is_current(out: Path, sha256: str, dtype: str) -> bool:
    """Whether ``out`` holds a whole export of the GGUF with this digest, in ``dtype``."""
    stamp = read_stamp(out)
    if not stamp or stamp.get("format") != FORMAT:
        return False
    if (stamp.get("gguf_sha256"), stamp.get("dtype")) != (sha256, dtype):
        return False
    files = stamp.get("files")
    return isinstance(files, dict) and bool(files) and all(
        (out / name).is_file() and (out / name).stat().st_size == size
        for name, size in files.items()
    )  # fmt: skip


def export_hf(spec: str | Path, out: Path | None = None, dtype: str = "float32", log=print) -> Path:
    """Writes the safetensors export of a GGUF to ``out`` (default: :func:`default_out`)
    and returns it; returns at once where ``out`` already holds it.

    Args:
        spec: an embedded model's name (installed) or a GGUF file.
        out: the folder; an existing one must be empty or an earlier export (replaced).
        dtype: ``float32`` (exact) or ``bfloat16``.
        log: where the one-line progress messages go.

    Raises:
        ValueError: a spec that is not a GGUF, an unknown dtype, or an ``out`` that holds
            other files.
        FileNotFoundError: an embedded model not installed, or a missing file.
    """
    from factscore_local.model_store import resolve_lm

    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; choose one of {', '.join(DTYPES)}")
    gguf = resolve_lm(str(spec))
    if not (gguf.is_file() and gguf.suffix == ".gguf"):
        raise ValueError(f"{gguf} is not a GGUF file (an HF folder needs no export)")
    out = Path(out) if out is not None else default_out(str(spec), dtype)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and read_stamp(out) is None)):
        raise ValueError(f"{out} holds files that are not an export; name an empty or new folder")
    sha256 = file_sha256(gguf)
    if is_current(out, sha256, dtype):
        log(f"export: {out} already holds {gguf.name} in {dtype}")
        return out
    log(f"export: {gguf.name} -> {out} ({dtype}, dequantized)")
    partial = out.with_name(f".{out.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        _write(gguf, partial, dtype)
        files = {p.name: p.stat().st_size for p in sorted(partial.iterdir())}
        stamp = {"format": FORMAT, "gguf": gguf.name, "gguf_sha256": sha256, "dtype": dtype,
                 "files": files}  # fmt: skip
        (partial / STAMP).write_text(json.dumps(stamp, indent=1) + "\n", "utf-8")
        if out.exists():  # an earlier export (checked above) or an empty folder
            shutil.rmtree(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        partial.rename(out)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return out


def _write(gguf: Path, folder: Path, dtype: str) -> None:
    """The config, tokenizer and weights of ``gguf`` into ``folder``."""
    enforce_offline()
    from factscore_local.extras import require

    torch = require("torch", "transformers", "exporting a GGUF")
    require("gguf", "transformers", "exporting a GGUF")
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kwargs = {"gguf_file": gguf.name, "local_files_only": True}
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, dtype=getattr(torch, dtype), **kwargs)
    folder.mkdir(parents=True)
    tokenizer.save_pretrained(folder)
    config = model.config.to_dict()
    config.pop("quantization_config", None)
    config.pop("_name_or_path", None)  # where it was read from, on this machine
    config["architectures"] = [type(model).__name__]  # what a server picks its code by
    config["dtype"] = dtype
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n", "utf-8")
    tensors = model.state_dict()
    if config.get("tie_word_embeddings"):  # one tensor, stored once under the embedding's name
        tensors.pop("lm_head.weight", None)
    tensors = {name: t.detach().contiguous() for name, t in tensors.items()}
    save_file(tensors, str(folder / WEIGHTS), metadata={"format": "pt"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m factscore_local.lm.export_hf",
        description="Export a GGUF (an embedded model's name or a file) as a Hugging Face "
        "safetensors folder, e.g. for vLLM.",
    )
    parser.add_argument("gguf", help="an embedded model's name or a GGUF file")
    parser.add_argument("out", nargs="?", type=Path,
                        help="the folder (default: <model cache>/hf/NAME-DTYPE)")  # fmt: skip
    parser.add_argument("--dtype", choices=DTYPES, default="float32",
                        help="float32 keeps the dequantized weights exactly (default)")  # fmt: skip
    args = parser.parse_args(argv)
    try:
        out = export_hf(args.gguf, args.out, args.dtype, log=lambda m: print(m, file=sys.stderr))
    except (ValueError, OSError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
