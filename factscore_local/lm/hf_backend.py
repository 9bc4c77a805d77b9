"""transformers backend: a Hugging Face causal LM directory, or a GGUF file (dequantized).

On a GPU the weights are cast to bfloat16 (float16 where the card has no bf16) and every
forward pass runs there; on the CPU they stay in float32, as before. In half precision the
last projection to the vocabulary runs in float32: bf16 logits of magnitude ~16 move in
steps of 0.125, coarse against the True/False margins' thresholds (on 20 dev bios, 6.4% of
an H100's bf16 decisions differed from float32 for that reason alone).

Verification prompts that share a page's prefix run their tails as one padded batch
(``tail_batch`` of them, 16 on a GPU): the prefix's keys and values are copied once per
row, each tail is padded on the right, and the causal mask keeps a row's real tokens from
seeing its padding. On the CPU one prompt at a time stays the default (a batch buys
little there); both orders give the same logits within float tolerance.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

from factscore_local.extras import require
from factscore_local.lm.base import LocalLM, cut_at_stop
from factscore_local.runtime.device import is_gpu, resolve_device
from factscore_local.runtime.offline import enforce_offline


class HFCausalLM(LocalLM):
    backend = "transformers"

    def __init__(
        self,
        path: Path,
        threads: int | None = None,
        device: str = "cpu",
        dtype: str | None = None,
        tail_batch: int | None = None,
    ) -> None:
        super().__init__()
        enforce_offline()
        torch = require("torch", "transformers", "the transformers backend")
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if threads:
            torch.set_num_threads(threads)
        self.torch = torch
        self.device = resolve_device(device)
        if is_gpu(self.device):
            auto = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        else:
            auto = torch.float32
        # Another dtype, e.g. "bfloat16" (the GPU's arithmetic, checked on a CPU) or float32
        # on a GPU (faster than bf16 for a small model, and the CPU's decisions).
        dtype = auto if dtype is None else getattr(torch, dtype)
        self.dtype = dtype
        self.default_dtype = dtype == auto  # the cache keeps other precisions apart
        self.tail_batch = tail_batch or (16 if is_gpu(self.device) else 1)
        self.generation_batch = 16 if is_gpu(self.device) else 1
        path = Path(path)
        self.name, self.path = path.name, path
        try:
            if path.is_file():  # a GGUF: transformers dequantizes it to float32
                for module in ("gguf", "accelerate"):  # what transformers reads GGUF with
                    require(module, "transformers", "a GGUF file on the transformers backend")
                kwargs = {"gguf_file": path.name, "local_files_only": True}
                self.tokenizer = AutoTokenizer.from_pretrained(path.parent, **kwargs)
                self.model = AutoModelForCausalLM.from_pretrained(
                    path.parent, dtype=dtype, **kwargs
                )
            else:
                self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
                self.model = AutoModelForCausalLM.from_pretrained(
                    path, dtype=dtype, local_files_only=True
                )
            self.model.to(self.device)
        except Exception as exc:
            raise ValueError(f"cannot load a causal LM from {path}: {exc}") from exc
        self.model.eval()
        self._head = None  # the vocabulary projection in float32, for half-precision models
        if dtype != torch.float32:
            head = self.model.get_output_embeddings()
            self._head = (
                head.weight.detach().float(),
                None if head.bias is None else head.bias.detach().float(),
            )
        self._cache = None
        self._cached_len = 0

    def tokenize(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def prompt_ids(self, prompt: str) -> list[int]:
        return self.tokenizer(prompt)["input_ids"]

    def chat(self, user: str) -> str:
        if not getattr(self.tokenizer, "chat_template", None):
            return user
        return self.tokenizer.apply_chat_template(
            [{"role": "user", "content": user}], tokenize=False, add_generation_prompt=True
        )

    def generate(
        self,
        prompts: list[str],
        max_new_tokens: int,
        stop: list[str],
        on_done: Callable[[int, str], None] | None = None,
    ) -> list[str]:
        """Greedy outputs, ``generation_batch`` prompts at a time (left-padded, each
        stopping on its own; 16 on a GPU, 1 on the CPU, where batching buys little);
        ``on_done(i, text)`` as each batch ends."""
        self.forget()  # generation moves the KV cache away from the last prompt
        # Prompts of similar length together: less padding.
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
        texts: dict[int, str] = {}
        for start in range(0, len(order), self.generation_batch):
            part = order[start : start + self.generation_batch]
            for i, text in zip(
                part,
                self._generate_batch([prompts[i] for i in part], max_new_tokens, stop),
                strict=True,
            ):
                texts[i] = text  # fmt: skip
                if on_done is not None:
                    on_done(i, text)
        return [texts[i] for i in range(len(prompts))]

    def _generate_batch(self, prompts: list[str], max_new_tokens: int, stop: list[str]):
        torch = self.torch
        encoded = [self.prompt_ids(p) for p in prompts]
        width = max(map(len, encoded))
        pad = self.tokenizer.pad_token_id or self.tokenizer.eos_token_id or 0
        ids = torch.tensor([[pad] * (width - len(e)) + e for e in encoded], device=self.device)
        mask = torch.tensor([[0] * (width - len(e)) + [1] * len(e) for e in encoded],
                            device=self.device)  # fmt: skip
        with torch.inference_mode():
            gen = self.model.generate(
                ids,
                attention_mask=mask,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                num_beams=1,
                pad_token_id=pad,
                stop_strings=stop or None,
                tokenizer=self.tokenizer,
            )
        out = []
        for row in gen[:, width:].tolist():
            new = [t for t in row if t != pad] if len(prompts) > 1 else row
            self.stats.generated_tokens += len(new)
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            out.append(cut_at_stop(text, stop))
        return out

    def _holds(self, n: int) -> bool:
        return self._cache is not None and self._cached_len >= n

    def _tail_logits(self, ids: list[int], reuse: int, n: int, keep=None):
        from transformers import DynamicCache

        torch = self.torch
        if self._cache is None or reuse == 0:
            self._cache = DynamicCache()
            reuse = 0
        elif self._cached_len > reuse:
            # Drop what this prompt does not share (transformers 5 crops by a negative count).
            self._cache.crop(reuse - self._cached_len)
        inputs = {
            "input_ids": torch.tensor([ids[reuse:]], device=self.device),
            "past_key_values": self._cache,
            "use_cache": True,
            "position_ids": torch.arange(reuse, len(ids), device=self.device).unsqueeze(0),
        }
        out, rows, hidden = self._forward(inputs)
        positions = list(range(len(ids) - reuse - n, len(ids) - reuse))
        logits = self._logits(rows[0], _picked(positions, keep))
        if hidden is not None:
            self._captured.append(self._state(hidden[0, len(ids) - reuse - 1]))
        self._cache = out.past_key_values
        self._cached_len = len(ids)
        return logits

    def _tail_logits_batch(self, items, reuse: int):
        if reuse == 0 or not self._holds(reuse):
            return super()._tail_logits_batch(items, reuse)
        torch = self.torch
        if self._cached_len > reuse:
            self._cache.crop(reuse - self._cached_len)
            self._cached_len = reuse
        tails = [ids[reuse:] for ids, _, _ in items]
        width = max(map(len, tails))
        pad = self.tokenizer.pad_token_id or self.tokenizer.eos_token_id or 0
        cache = copy.deepcopy(self._cache)  # the held prefix stays for the next prompts
        cache.batch_repeat_interleave(len(items))
        mask = torch.zeros((len(items), reuse + width), dtype=torch.long, device=self.device)
        for row, tail in enumerate(tails):
            mask[row, : reuse + len(tail)] = 1
        inputs = {
            "input_ids": torch.tensor(
                [t + [pad] * (width - len(t)) for t in tails], device=self.device
            ),  # fmt: skip
            "attention_mask": mask,
            "past_key_values": cache,
            "use_cache": True,
            "position_ids": torch.arange(reuse, reuse + width, device=self.device)
            .unsqueeze(0)
            .expand(len(items), -1),
        }
        _, rows, hidden = self._forward(inputs)
        out = []
        for row, (tail, (_, n, keep)) in enumerate(zip(tails, items, strict=True)):
            positions = list(range(len(tail) - n, len(tail)))
            out.append(self._logits(rows[row], _picked(positions, keep)))
            if hidden is not None:
                self._captured.append(self._state(hidden[row, len(tail) - 1]))
        return out

    def _forward(self, inputs):
        """One pass: the output; per row, the states the logits are read from (the logits
        themselves, or the half-precision decoder's last hidden states); and, while a
        tail's state is asked for (``_capturing``), the decoder's last hidden states (after
        the final norm, as llama.cpp's embeddings), else None."""
        with self.torch.inference_mode():
            if self._head is None and not self._capturing:
                out = self.model(**inputs)
                return out, out.logits, None
            out = self.model.get_decoder()(**inputs)
            hidden = out.last_hidden_state
            # float32: the model's own projection, as model() runs it
            rows = self.model.get_output_embeddings()(hidden) if self._head is None else hidden
            return out, rows, hidden if self._capturing else None

    def _state(self, vector):
        return vector.float().cpu().numpy()

    def _logits(self, row, positions: list[int]):
        """Float32 logits at a row's positions (the vocabulary projection in float32 for a
        half-precision model)."""
        picked = row[positions]
        if self._head is not None:
            weight, bias = self._head
            with self.torch.inference_mode():
                picked = self.torch.nn.functional.linear(picked.float(), weight, bias)
        return picked.float().cpu().numpy()


def _picked(positions: list[int], keep) -> list[int]:
    """The positions of the rows ``keep`` (all of them when None)."""
    return positions if keep is None else [positions[k] for k in keep]
