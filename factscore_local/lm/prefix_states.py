"""Evaluated prompt prefixes kept on disk: llama.cpp's KV cache of a page's evidence, so
that a later pass over the same evidence (another question after it, another statement
context, a re-run) loads it instead of reading the page again.

Reading a 3,690-token page segment took 87 s on 2 CPU cores; loading its state (28.7 KB
a token for the 1.5B model) took 0.04 s (docs/benchmarks/verify-pass-model.md).
A loaded state is the cache as evaluating the prefix from an empty one left it,
so every result is the same as without the store (tested). Files are keyed by the
model's identity, the llama.cpp build and the prefix's token ids; each file also holds the
ids, checked on loading. A file is written under a temporary name and renamed, so a killed
run leaves no partial state; the least recently used files go once the store exceeds its
size.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
from pathlib import Path

import numpy as np

# Prefixes shorter than this are cheaper to evaluate than to store.
MIN_TOKENS = 512
DEFAULT_MAX_BYTES = 32 * 2**30


class PrefixStates:
    def __init__(self, folder: Path, identity: str, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        import llama_cpp

        self.lib = llama_cpp
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        build = llama_cpp.__version__ + llama_cpp.llama_print_system_info().decode(
            "utf-8", "ignore"
        )
        self.identity = f"{identity}|llama.cpp {build}"
        self.max_bytes = max_bytes
        self.loaded = self.saved = 0  # counts, for progress and benchmarks

    def _path(self, ids: list[int]) -> Path:
        digest = hashlib.sha256(self.identity.encode("utf-8"))
        digest.update(np.asarray(ids, dtype=np.int32).tobytes())
        return self.folder / f"{digest.hexdigest()}.kv"

    def load(self, llm, ids: list[int]) -> bool:
        """Put the state of ``ids`` into sequence 0 of ``llm`` (a ``llama_cpp.Llama``),
        replacing what it held; False (the cache emptied) when there is none."""
        path = self._path(ids)
        if len(ids) < MIN_TOKENS or not path.is_file():
            return False
        llm._ctx.kv_cache_clear()
        llm.n_tokens = 0
        tokens = (self.lib.llama_token * len(ids))()
        count = ctypes.c_size_t(0)
        read = self.lib.llama_state_seq_load_file(
            llm._ctx.ctx, str(path).encode(), 0, tokens, len(ids), ctypes.byref(count)
        )
        if not read or count.value != len(ids) or list(tokens) != list(ids):
            llm._ctx.kv_cache_clear()  # unreadable, or another prefix: evaluate it again,
            path.unlink(missing_ok=True)  # and store it anew
            return False
        llm.input_ids[: len(ids)] = ids
        llm.n_tokens = len(ids)
        os.utime(path)  # recently used
        self.loaded += 1
        return True

    def save(self, llm, ids: list[int]) -> None:
        """Store sequence 0 of ``llm``, which holds exactly ``ids`` evaluated."""
        path = self._path(ids)
        if len(ids) < MIN_TOKENS or path.is_file():
            return
        partial = path.with_suffix(f".{os.getpid()}.part")
        tokens = (self.lib.llama_token * len(ids))(*ids)
        if not self.lib.llama_state_seq_save_file(
            llm._ctx.ctx, str(partial).encode(), 0, tokens, len(ids)
        ):
            partial.unlink(missing_ok=True)
            return
        os.replace(partial, path)
        self.saved += 1
        self._prune()

    def _prune(self) -> None:
        files = sorted(self.folder.glob("*.kv"), key=lambda p: p.stat().st_mtime)
        total = sum(p.stat().st_size for p in files)
        for old in files:
            if total <= self.max_bytes:
                break
            total -= old.stat().st_size
            old.unlink(missing_ok=True)
