"""LMs: an embedded model, a GGUF file or a Hugging Face model directory loaded here, or an
OpenAI-compatible inference server (``http://HOST:PORT/v1``, ``lm/server_backend.py``)."""

from __future__ import annotations

from pathlib import Path

from factscore_local.lm.base import LocalLM, TrueFalse
from factscore_local.lm.protocol import LM
from factscore_local.lm.server_client import DEFAULT_CONCURRENCY, is_server_spec
from factscore_local.model_store import resolve_lm
from factscore_local.runtime.core_slots import hold_cores
from factscore_local.runtime.device import is_gpu
from factscore_local.runtime.offline import enforce_offline

BACKENDS = ("auto", "llama.cpp", "transformers")
DTYPES = ("auto", "float32", "bfloat16", "float16")  # the transformers backend's
# Tokens the LMs are loaded with: room for a shared block of evidence (margins are the same
# as with 4096 on prompts that fit both; the KV cache grows by ~120 MB for the 1.5B model).
LM_CONTEXT = 8192


def load_lm(
    spec: str | None = None,
    backend: str = "auto",
    threads: int | None = None,
    n_ctx: int = LM_CONTEXT,
    device: str = "auto",
    dtype: str = "auto",
    lm_model: str | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> LM:
    """Load a local causal LM, or connect to an LM server.

    Args:
        spec: an embedded model's name (``None``: the default), a GGUF file, a Hugging
            Face model directory, or the URL of an OpenAI-compatible server's API
            (``http://HOST:PORT/v1``).
        backend: ``auto`` (GGUF files go to llama.cpp, measured faster on a CPU;
            directories to transformers), ``llama.cpp`` or ``transformers``.
        threads: CPU threads (``None``: all cores).
        n_ctx: the context length llama.cpp allocates.
        device: ``auto``, ``cpu`` or ``cuda`` (see :mod:`factscore_local.runtime.device`):
            llama.cpp offloads every layer to the GPU, transformers runs there in bf16.
        dtype: the transformers backend's weights and arithmetic: ``auto`` (bf16 on a GPU,
            float32 on the CPU), ``float32``, ``bfloat16`` or ``float16``. llama.cpp runs
            the GGUF's own types and takes ``auto`` only.
        lm_model: a server's model, where it serves several (else the one it serves).
        concurrency: requests in flight to a server at most.

    Returns:
        An :class:`LM` (``lm/protocol.py``): an in-process engine or a ``ServerLM``.

    Example:
        >>> lm = load_lm("qwen2.5-coder-0.5b-instruct-q4_k_m", device="cpu")  # doctest: +SKIP
    """
    enforce_offline()
    if is_server_spec(spec):
        if backend != "auto" or dtype != "auto":
            raise ValueError(f"--lm-backend and --lm-dtype choose how a model runs here; "
                             f"{spec} is a server")  # fmt: skip
        from factscore_local.lm.server_backend import ServerLM

        return ServerLM(spec, lm_model=lm_model, concurrency=concurrency, n_ctx=n_ctx)
    if lm_model is not None:
        raise ValueError("--lm-model names a model of an LM server (--lm http://HOST:PORT/v1)")
    path = resolve_lm(spec)
    if backend not in BACKENDS:
        raise ValueError(f"unknown LM backend {backend!r}; choose from {', '.join(BACKENDS)}")
    if dtype not in DTYPES:
        raise ValueError(f"unknown LM dtype {dtype!r}; choose from {', '.join(DTYPES)}")
    if backend == "auto":
        backend = "llama.cpp" if path.is_file() else "transformers"
    if backend == "llama.cpp" and dtype != "auto":
        raise ValueError(f"--lm-dtype {dtype} needs the transformers backend (--lm-backend "
                         "transformers); llama.cpp computes in the GGUF's own types")  # fmt: skip
    if backend == "llama.cpp":
        if not path.is_file():
            raise ValueError(f"llama.cpp needs a GGUF file, and {path} is a directory")
        from factscore_local.lm.llama_backend import LlamaCppLM

        lm: LocalLM = LlamaCppLM(path, n_ctx=n_ctx, threads=threads, device=device)
    else:
        from factscore_local.lm.hf_backend import HFCausalLM

        lm = HFCausalLM(
            Path(path), threads=threads, device=device, dtype=None if dtype == "auto" else dtype
        )
    if not is_gpu(lm.device):  # CPU model processes take turns
        hold_cores(threads, f"{path.name} ({lm.backend})")
    return lm


__all__ = ["BACKENDS", "DTYPES", "LM", "LocalLM", "TrueFalse", "is_server_spec", "load_lm"]
