"""FActScore's own verification procedure, for comparison: its prompt, evaluated from
scratch, generating up to 128 tokens greedily."""

from __future__ import annotations

import string
import time

REF_MAX_NEW_TOKENS = 128  # the reference's Inst-LLaMA path: max_length = len(prompt) + 128
REF_MAX_PROMPT_TOKENS = 2048 - 128  # and its left truncation of the prompt


def reference_prompt(topic: str, atom: str, passages: list[tuple[str, str]]) -> str:
    """FActScore's Retrieve→LM prompt, built as factscorer.py builds it (then stripped)."""
    definition = f"Answer the question about {topic} based on the given context.\n\n"
    context = ""
    for title, text in reversed(passages):
        context += "Title: {}\nText: {}\n\n".format(
            title, text.replace("<s>", "").replace("</s>", "")
        )
    definition += context.strip()
    if definition[-1] not in string.punctuation:
        definition += "."
    return f"{definition.strip()}\n\nInput: {atom.strip()} True or False?\nOutput:".strip()


def reset_state(raw) -> None:
    """Forget the backend's KV cache, so the next prompt is evaluated from scratch."""
    raw.forget()
    if hasattr(raw, "llm"):
        raw.llm.reset()
    else:
        raw._cache = None
        raw._cached_len = 0


def decide(raw, logits) -> tuple[float, float]:
    true_ids, false_ids = raw.label_ids()
    return max(float(logits[t]) for t in true_ids), max(float(logits[t]) for t in false_ids)


def reference_generate(raw, ids: list[int], ignore_eos: bool = False) -> dict:
    """Greedy generation of up to 128 tokens from a fresh state, no stop string; the
    decision is read from the first step's logits, as the reference does. Generation ends
    at the model's end token unless ``ignore_eos`` (then always 128 tokens: the worst case)."""
    reset_state(raw)
    t0 = time.perf_counter()
    if hasattr(raw, "llm"):
        import numpy as np

        llm, lib = raw.llm, raw._lib
        first_s, n_new, scores = None, 0, None
        tokens = llm.generate(
            ids, top_k=1, top_p=1.0, min_p=0.0, temp=0.0, repeat_penalty=1.0, reset=True
        )
        # An end token counts as generated, as it does in transformers' generate.
        new: list[int] = []
        for n_new, token in enumerate(tokens, start=1):
            new.append(token)
            if first_s is None:
                first_s = time.perf_counter() - t0
                pointer = lib.llama_get_logits_ith(llm._ctx.ctx, -1)
                scores = decide(raw, np.ctypeslib.as_array(pointer, shape=(llm.n_vocab(),)))
            eog = lib.llama_vocab_is_eog(llm._model.vocab, token) and not ignore_eos
            if eog or n_new >= REF_MAX_NEW_TOKENS:
                break
        text = llm.detokenize(new).decode("utf-8", "ignore")
    else:
        import torch
        from transformers import LogitsProcessor, LogitsProcessorList

        marks: list[float] = []

        class Mark(LogitsProcessor):
            def __call__(self, input_ids, scores):
                marks.append(time.perf_counter())
                return scores

        tensor = torch.tensor([ids])
        tok = raw.tokenizer
        with torch.inference_mode():
            out = raw.model.generate(
                tensor,
                attention_mask=torch.ones_like(tensor),
                max_new_tokens=REF_MAX_NEW_TOKENS,
                min_new_tokens=REF_MAX_NEW_TOKENS if ignore_eos else None,
                do_sample=False,
                num_beams=1,
                output_scores=True,
                return_dict_in_generate=True,
                pad_token_id=tok.pad_token_id or tok.eos_token_id,
                logits_processor=LogitsProcessorList([Mark()]),
            )
        first_s = marks[0] - t0 if marks else None
        new = out.sequences[0, len(ids) :].tolist()
        n_new = len(new)
        text = tok.decode(new)
        scores = decide(raw, out.scores[0][0])
    total = time.perf_counter() - t0
    return {
        "seconds": total,
        "first_token_s": first_s,
        "new_tokens": n_new,
        "margin": float(scores[0] - scores[1]),
        "text": text,
    }
