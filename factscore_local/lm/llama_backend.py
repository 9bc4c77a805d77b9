"""llama.cpp backend (llama-cpp-python) for GGUF files: the default for GGUF on CPU."""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from factscore_local.extras import require
from factscore_local.lm.base import LocalLM, cut_at_stop
from factscore_local.lm.chat import render_chat
from factscore_local.lm.protocol import IN_PROCESS, PREFIX_STATES, STREAMED_GENERATION
from factscore_local.runtime.cores import usable_cores
from factscore_local.runtime.device import DeviceError, cuda_available, is_gpu, resolve_device

CPU_BUILD_WARNING = (
    "warning: a CUDA GPU is visible, but this llama-cpp-python was built for the CPU: the "
    "LM runs on the CPU. For the GPU: --lm-backend transformers --device cuda, or rebuild "
    "llama-cpp-python with CMAKE_ARGS=-DGGML_CUDA=on"
)


def warn_if_amx(llama_cpp) -> None:
    """Warn when llama.cpp was built with its AMX path, which crashes or returns garbage
    with Q4_K models on the Xeons that have it (scripts/setup.sh builds without it)."""
    info = llama_cpp.llama_print_system_info().decode("utf-8", "ignore")
    if "AMX_INT8 = 1" in info:
        print(
            "warning: llama-cpp-python was built with AMX, which segfaults or gives wrong "
            "logits with Q4_K models; rebuild it with scripts/setup.sh (it turns AMX off)",
            file=sys.stderr,
        )


class LlamaCppLM(LocalLM):
    backend = "llama.cpp"
    # Sequences generated together: 1.1-1.4x the prompts/s of one at a time on real
    # decomposition and claim prompts, 2 cores (docs/benchmarks/parallel-generation.md);
    # 1 generates one prompt at a time.
    GENERATION_WIDTH = 16
    # Tokens drafted by prompt lookup per sequence and step (llama_parallel.py; 0: none):
    # fewer steps, but no faster on 2 CPU cores, where a step's cost grows with its tokens
    # (docs/benchmarks/prompt-lookup.md).
    GENERATION_DRAFT = 0
    # generate() reports each output as it ends (the result cache stores them as they come),
    # and evaluated prefixes can be kept on disk (prefix_states.py)
    capabilities = IN_PROCESS | {STREAMED_GENERATION, PREFIX_STATES}

    def __init__(
        self, path: Path, n_ctx: int = 4096, threads: int | None = None, device: str = "cpu"
    ) -> None:
        super().__init__()
        llama_cpp = require("llama_cpp", "llama", "the llama.cpp backend")
        self._lib = llama_cpp
        warn_if_amx(llama_cpp)
        path = Path(path)
        self.name, self.path = path.name, path
        if not path.is_file():
            raise FileNotFoundError(f"no GGUF file at {path}")
        self.device = self._offload_device(llama_cpp, device)
        try:
            self.llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_batch=512,
                n_threads=threads or usable_cores(),
                n_gpu_layers=-1 if is_gpu(self.device) else 0,
                logits_all=False,
                verbose=False,
            )
        except Exception as exc:
            raise ValueError(f"cannot load {path} with llama.cpp: {exc}") from exc
        meta = self.llm.metadata or {}
        self._template = meta.get("tokenizer.chat_template")
        self._add_bos = meta.get("tokenizer.ggml.add_bos_token", "false") == "true"
        self.n_ctx = n_ctx
        self._generator = None  # a ParallelGenerator, made at the first generation
        self._states = None  # a PrefixStates, when asked to keep evaluated prefixes

    @staticmethod
    def _offload_device(llama_cpp, device: str) -> str:
        """``cuda`` when the layers go to the GPU. ``auto`` offloads only when this build of
        llama.cpp can; ``cuda`` with a CPU-only build is an error that says how to rebuild."""
        can_offload = bool(getattr(llama_cpp, "llama_supports_gpu_offload", lambda: False)())
        if (device or "auto") == "auto":
            if can_offload:
                return resolve_device("auto")
            if cuda_available():  # a GPU this build cannot use: say so, not stay silent
                print(CPU_BUILD_WARNING, file=sys.stderr, flush=True)
            return "cpu"
        device = resolve_device(device)
        if is_gpu(device) and not can_offload:
            raise DeviceError(
                "llama-cpp-python was built without GPU support; rebuild it with "
                "CMAKE_ARGS=-DGGML_CUDA=on pip install --force-reinstall --no-cache-dir "
                "llama-cpp-python, or use --lm-backend transformers on the GPU"
            )
        return device

    def tokenize(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def prompt_ids(self, prompt: str) -> list[int]:
        ids = self.llm.tokenize(prompt.encode("utf-8"), add_bos=self._add_bos, special=True)
        if len(ids) >= self.n_ctx:  # keep the end: the fact and the question are there
            ids = ids[-(self.n_ctx - 8) :]
        return ids

    def continuation_ids(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def token_piece(self, token: int) -> bytes:
        size = 64
        while True:
            buffer = ctypes.create_string_buffer(size)
            n = self._lib.llama_token_to_piece(self.llm._model.vocab, token, buffer, size, 0, True)
            if n >= 0:
                return buffer.raw[:n]
            size = -n

    def keep_prefix_states(self, folder: Path, identity: str) -> None:
        from factscore_local.lm.prefix_states import PrefixStates

        if self._states is None or self._states.folder != Path(folder):
            self._states = PrefixStates(folder, identity)

    def _load_prefix(self, ids: list[int]) -> bool:
        return self._states is not None and self._states.load(self.llm, ids)

    def _save_prefix(self, ids: list[int]) -> None:
        if self._states is not None:
            self._states.save(self.llm, ids)

    def fits(self, n_tokens: int) -> bool:
        return n_tokens < self.n_ctx

    def chat(self, user: str) -> str:
        bos = self.llm.detokenize([self.llm.token_bos()]).decode("utf-8", "ignore")
        eos = self.llm.detokenize([self.llm.token_eos()]).decode("utf-8", "ignore")
        return render_chat(self._template, user, bos=bos, eos=eos)

    def generate(
        self,
        prompts: list[str],
        max_new_tokens: int,
        stop: list[str],
        on_done: Callable[[int, str], None] | None = None,
    ) -> list[str]:
        """Greedy outputs, GENERATION_WIDTH prompts decoded together in a context of their
        own (the verification context keeps its cached evidence); ``on_done(i, text)`` as
        each output is complete, in the order they end."""
        if self._generator is None:
            from factscore_local.lm.llama_parallel import ParallelGenerator

            self._generator = ParallelGenerator(
                self.llm, self.GENERATION_WIDTH, self.n_ctx, draft=self.GENERATION_DRAFT
            )
        ids = [self.prompt_ids(p) for p in prompts]

        def done(i: int, new: list[int]) -> None:
            if on_done is not None:
                on_done(i, cut_at_stop(self._text(new), stop))

        out = []
        for new in self._generator.run(ids, max_new_tokens, stop, self._text, on_done=done):
            self.stats.generated_tokens += len(new)
            out.append(cut_at_stop(self._text(new), stop))
        return out

    def _text(self, ids: list[int]) -> str:
        return self.llm.detokenize(ids).decode("utf-8", "ignore")

    def _holds(self, n: int) -> bool:
        return self.llm.n_tokens >= n

    def _tail_logits(
        self, ids: list[int], reuse: int, n: int, keep: Sequence[int] | None = None
    ) -> np.ndarray:
        llm = self.llm
        # Only what differs from the cached prefix is evaluated; eval() drops the rest.
        cached = llm.n_tokens
        if reuse > cached or list(llm.input_ids[:reuse]) != ids[:reuse]:
            reuse = 0
        llm.n_tokens = reuse
        head, tail = ids[reuse : len(ids) - n], ids[len(ids) - n :]
        if head:
            llm.eval(head)
        # The tail goes in batches that ask for logits at the wanted positions only (eval()
        # keeps the last one alone unless the whole context was made with logits_all).
        llm._ctx.kv_cache_seq_rm(-1, llm.n_tokens, -1)
        rows = []
        vocab = llm.n_vocab()
        wanted = set(range(n) if keep is None else keep)
        # The hidden state comes with embeddings on (no pooling): llama.cpp then outputs
        # every token of the batch (the LM head runs on all of the tail's tokens, ~3% of a
        # fact's time) and keeps the normed state beside the logits.
        capture = self._capturing
        if capture:
            self._lib.llama_set_embeddings(llm._ctx.ctx, True)
        try:
            for start in range(0, n, llm.n_batch):
                part = tail[start : start + llm.n_batch]
                past = llm.n_tokens
                flags = [start + j in wanted for j in range(len(part))]
                # with embeddings on every token is an output anyway (say so: llama.cpp
                # logs a warning for each batch that does not)
                self._fill_batch(part, past, [True] * len(part) if capture else flags)
                llm._ctx.decode(llm._batch)
                llm.input_ids[past : past + len(part)] = part
                llm.n_tokens += len(part)
                for j in (j for j, flag in enumerate(flags) if flag):
                    pointer = self._lib.llama_get_logits_ith(llm._ctx.ctx, j)
                    rows.append(np.ctypeslib.as_array(pointer, shape=(vocab,)).copy())
                if capture and start + len(part) == n:  # the tail's last token
                    pointer = self._lib.llama_get_embeddings_ith(llm._ctx.ctx, len(part) - 1)
                    if not pointer:
                        raise RuntimeError("llama.cpp returned no hidden state")
                    state = np.ctypeslib.as_array(pointer, shape=(llm.n_embd(),))
                    self._captured.append(state.astype(np.float32))
        finally:
            if capture:
                self._lib.llama_set_embeddings(llm._ctx.ctx, False)
        return np.stack(rows)

    def _fill_batch(self, tokens: Sequence[int], past: int, logits: Sequence[bool]) -> None:
        """One sequence's tokens from position ``past``, with the LM head (152k rows, ~15%
        of a token's compute) run only where ``logits`` says: tails 1.07x faster. The rows
        asked for match those of a pass with logits everywhere up to summation order
        (<= 1e-3 in a margin; docs/benchmarks/verify-pass-model.md)."""
        from factscore_local.lm.llama_parallel import put_tokens

        batch = self.llm._batch.batch
        batch.n_tokens = put_tokens(batch, 0, tokens, past, 0, logits)
