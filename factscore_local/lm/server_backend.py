"""An OpenAI-compatible inference server as the LM: ``fscore eval --lm http://HOST:PORT/v1``.

Everything goes through the *completions* API (``POST {base}/completions``, prompt strings,
greedy: temperature 0), many requests in flight (``lm/server_client.py``):

- **generation** (the decomposition): the completion's text, cut at the stop strings and
  at a greedy loop as the in-process backends cut theirs;
- **True/False** (and any choice of label words): the top ``TOP_LOGPROBS`` log-probabilities
  of the next token (``logprobs: k``, ``max_tokens: 1``); a label's logit is the highest of
  its words' first tokens found there. Log-probabilities share the softmax's normaliser, so
  their difference is the in-process margin. A label outside the top k gets the lowest
  value shown (an upper bound of its own), counted in ``stats.extra``;
- **NP** (the statement's token probabilities, ``lm-joint``; ``token_logprobs`` for ``lm``):
  the log-probabilities of the prompt's own tokens, in the same request, where the server
  gives them: vLLM's ``prompt_logprobs`` extension, or OpenAI's ``echo`` with ``logprobs``.
  A short probe at start-up finds which, and checks that the echoed numbers are each
  token's own: llama-cpp-python's server shifts them by one position (each holds the next
  token's distribution) and computes them in Python over the whole vocabulary (~0.5 s a
  token on 2 cores), so it counts as giving none. A server that gives none scores rules
  without NP (``--verifier retrieve-lm``); a rule with NP stops at once, naming the URL.

Hidden states (the state heads) and whole logits cannot be read from a server: the LM
declares what it can do (``capabilities``, ``lm/protocol.py``: generation, next-token
log-probabilities, and prompt log-probabilities where the probe found them), and the run's
plan stops a rule that needs more before the first bio (``pipeline/plan.py``). The
tokenizer is the served model's own (``lm/server_vocab.py``). Results are cached as the
in-process LMs' are, keyed by the served weights (their sha256 where they are on this
machine, else the model's name on the server), not by the URL.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from factscore_local.lm.base import FALSE_WORDS, TRUE_WORDS, TrueFalse, cut_at_stop
from factscore_local.lm.names import served_name
from factscore_local.lm.prompt_tokens import LabelTokens
from factscore_local.lm.protocol import GENERATION, NEXT_TOKEN, PROMPT_LOGPROBS
from factscore_local.lm.server_client import (
    DEFAULT_CONCURRENCY,
    ServerClient,
    ServerError,
    pick_model,
)
from factscore_local.lm.server_metrics import ServerMetrics
from factscore_local.lm.server_vocab import load_vocab, local_weights
from factscore_local.runtime.weights import lm_fingerprint, model_identity

TOP_LOGPROBS = 20  # vLLM's default ceiling (--max-logprobs)
PROMPTS_PER_REQUEST = 8  # to a server that takes a list of prompts (vLLM, SGLang)
# The probe of prompt log-probabilities: after "1, 2, 3," each next token is near certain
# (> 0.9 for the embedded 0.5B); numbers shifted by a position put it near -10.
PROBE = "1, 2, 3, 4, 5"
PROBE_FLOOR = -1.0  # the median log-probability of the probe's last tokens, at least
NO_PROMPT_LOGPROBS = "server|no-prompt-logprobs"


class ServerLM(LabelTokens):
    """An OpenAI-compatible server as an ``LM`` (see the module docstring)."""

    backend = "server"
    device = "server"  # not this process's CPU or GPU

    def __init__(
        self,
        url: str,
        lm_model: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        client: ServerClient | None = None,
        n_ctx: int = 8192,  # assumed when the server does not say (load_lm: LM_CONTEXT)
        prompts_per_request: int = PROMPTS_PER_REQUEST,
    ) -> None:
        super().__init__()
        self.url = url.rstrip("/")
        self.client = client or ServerClient(self.url, concurrency)
        entry = pick_model(self.client, self.client.models(), lm_model)
        self.model = entry["id"]
        self.name = self.model_name = served_name(self.model)
        self.root = entry.get("root") if isinstance(entry.get("root"), str) else None
        limit = entry.get("max_model_len")
        self.n_ctx = limit if isinstance(limit, int) and limit > 0 else n_ctx
        # No repetition penalty, as in process: llama-cpp-python's server applies 1.1 unless
        # told (repeat_penalty); vLLM and SGLang, which report max_model_len, take a served
        # folder's generation_config.json as their defaults (the hub's Qwen2.5: 1.05).
        self._extra = ({"repetition_penalty": 1.0} if "max_model_len" in entry
                       else {"repeat_penalty": 1.0})  # fmt: skip
        self.weights: Path | None = local_weights(self.model)
        self.vocab = load_vocab(self.client, self.model, self.weights)
        self.prompt_logprobs = self._probe()  # "prompt_logprobs", "echo" or None
        # vLLM and SGLang (which report max_model_len) take a list of prompts per request:
        # a page's prompts then reach the engine's scheduler together.
        self.per_request = prompts_per_request if "max_model_len" in entry else 1
        self.metrics = ServerMetrics(lambda: self.client.text("/metrics"))
        self.capabilities = frozenset(
            {GENERATION, NEXT_TOKEN} | ({PROMPT_LOGPROBS} if self.prompt_logprobs else set())
        )

    def describe(self) -> str:
        return f"the LM server at {self.url} ({self.model})"

    def no_np_message(self, verifier: str = "") -> str:
        rule = f"the rule {verifier} reads NP" if verifier else "NP reads them"
        return (f"the LM server at {self.url} gives no log-probabilities of a prompt's own "
                f"tokens (neither vLLM's prompt_logprobs nor echo with logprobs, or echoed "
                f"numbers that are not each token's own, as llama-cpp-python's), and {rule}: "
                f"use a rule without NP, e.g. --verifier retrieve-lm, or serve the model with "
                f"vLLM (docs: LM servers)")  # fmt: skip

    def _no_states_message(self) -> str:
        return (f"hidden states cannot be read from the LM server at {self.url}: a rule with "
                f"a head needs the model in this process (--lm NAME or FILE)")  # fmt: skip

    def cache_identity(self, cache) -> str:
        """What the result cache keys this LM's results by: the served weights (their
        name, size and sha256 where they are here, else the server's name for them), not
        the URL; results without NP's numbers are kept apart."""
        tag = "server" if self.prompt_logprobs else NO_PROMPT_LOGPROBS
        if self.weights is not None:
            return model_identity(self.weights, tag, cache)
        return f"{self.model}|{tag}"

    def fingerprint(self, cache) -> dict:
        """The run record's entry for this LM."""
        known = lm_fingerprint(self.weights, self.backend, cache) if self.weights else {}
        return {"name": self.name, "path": None, "size": None, "sha256": None, **known,
                "backend": self.backend, "device": self.device, "url": self.url,
                "served_model": self.model, "served_sha256": self.served_sha256(cache),
                "prompt_logprobs": self.prompt_logprobs, "prompts_per_request": self.per_request,
                "server_metrics": self.metrics.summary()}  # fmt: skip

    def served_sha256(self, cache) -> str | None:
        """The digest of the weights the server runs, where it can be told here: the
        server names a path on this machine (vLLM's ``root``, llama.cpp's model id) that
        is a GGUF (its sha256) or a folder ``export_hf`` wrote (the GGUF it came from).
        None otherwise: a model known by its name only, whatever its name says."""
        from factscore_local.lm.export_hf import read_stamp
        from factscore_local.runtime.cache import content_sha256

        for where in (self.root, self.model):
            path = Path(where).expanduser() if where else None
            if path is None or not path.is_absolute() or not path.exists():
                continue
            if path.is_file() and path.suffix == ".gguf":
                return content_sha256(path, cache)
            stamp = read_stamp(path) if path.is_dir() else None
            if stamp and isinstance(stamp.get("gguf_sha256"), str):
                return stamp["gguf_sha256"]
        return None

    def close(self) -> None:
        self.client.close()

    # --- tokens and prompts -----------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        return self.vocab.tokenize(text)

    def prompt_ids(self, prompt: str) -> list[int]:
        return self.vocab.prompt_ids(prompt)

    def token_piece(self, token: int) -> bytes | None:
        return self.vocab.piece(token)

    def fits(self, n_tokens: int) -> bool:
        return n_tokens < self.n_ctx

    def chat(self, user: str) -> str:
        return self.vocab.chat(user)

    # --- requests ---------------------------------------------------------------------
    def _payload(self, prompt: str, max_tokens: int, mode: str | None = None,
                 top: int = TOP_LOGPROBS) -> dict:  # fmt: skip
        payload = {"model": self.model, "prompt": prompt, "max_tokens": max_tokens,
                   "temperature": 0.0, "top_p": 1.0, **self._extra}  # fmt: skip
        if top:
            payload["logprobs"] = top
        if mode == "prompt_logprobs":
            payload |= {"prompt_logprobs": 0, "return_token_ids": True}
        elif mode == "echo":
            payload["echo"] = True
        return payload

    def _complete(self, payloads: list[dict]) -> list[dict]:
        """One answer per payload, in order; consecutive payloads that differ only in
        their prompt go as one request of up to ``per_request`` prompts (the answer's
        choices are then split back by their index)."""
        requests = _grouped(payloads, self.per_request)
        with self.metrics.watching():  # the engine's queue, read while it holds them
            answers = self.client.post_many("/completions", [r for r, _ in requests])
        out: list[dict] = []
        for answer, (_, n) in zip(answers, requests, strict=True):
            usage = answer.get("usage") if isinstance(answer, dict) else None
            if isinstance(usage, dict):
                self.stats.prompt_tokens += int(usage.get("prompt_tokens") or 0)
                self.stats.generated_tokens += int(usage.get("completion_tokens") or 0)
            out.extend(_split(answer, n) if n > 1 else [answer])
        return out

    def _choice(self, answer) -> dict:
        choices = answer.get("choices") if isinstance(answer, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self.client.malformed("/completions", "no choices", answer)
        return choices[0]

    def _next_top(self, answer) -> dict[str, float]:
        """The top log-probabilities of the first generated token."""
        top = _top_of(self._choice(answer).get("logprobs"))
        if top is None:
            raise self.client.malformed("/completions", "no top log-probabilities of the next "
                                        "token (does it take 'logprobs'?)", answer)  # fmt: skip
        return top

    def _pieces(self, labels: Sequence[Sequence[str]]) -> list[set[str]]:
        """Each label's first tokens as text, as the top log-probabilities name them."""
        return [{self.vocab.decode([i]) for i in ids} for ids in self.choice_ids(labels)]

    def _labels(self, top: dict[str, float], pieces: list[set[str]]) -> list[float]:
        floor = min(top.values())
        out = []
        for label in pieces:
            found = [top[p] for p in label if p in top]
            if not found:
                extra = self.stats.extra
                extra["label_not_in_top"] = extra.get("label_not_in_top", 0) + 1
            out.append(float(max(found)) if found else float(floor))
        return out

    def _prompt_positions(self, answer, prompt: str, mode: str):
        """(ids, log P(token | before it)) of the prompt's tokens (None where there is
        none: the first), or None when the answer holds no such numbers."""
        choice = self._choice(answer)
        if mode == "prompt_logprobs":
            entries = choice.get("prompt_logprobs")
            if not isinstance(entries, list) or not entries:
                return None
            ids = choice.get("prompt_token_ids") or self.vocab.prompt_ids(prompt)
            if len(ids) != len(entries):
                return None
            values = []
            for token, entry in zip(ids, entries, strict=True):
                value = entry.get(str(token)) if isinstance(entry, dict) else None
                values.append(value.get("logprob") if isinstance(value, dict) else value)
            return list(ids), values
        logprobs = choice.get("logprobs")
        tokens = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
        if not isinstance(tokens, list) or len(tokens) < 2:
            return None
        values = list(tokens[:-1])  # the last is the token generated
        local = self.vocab.prompt_ids(prompt)
        if len(local) == len(values) + 1:  # a BOS the echo leaves out
            values = [None, *values]
        return (local, values) if len(local) == len(values) else None

    def _probe(self) -> str | None:
        """How the server gives a prompt's log-probabilities (see the module docstring)."""
        for mode in ("prompt_logprobs", "echo"):
            try:
                answer = self.client.post("/completions", self._payload(PROBE, 1, mode, top=1))
                positions = self._prompt_positions(answer, PROBE, mode)
            except (ValueError, ServerError):  # refused, or an answer without them
                continue
            values = [v for v in (positions or ([], []))[1][-6:] if isinstance(v, int | float)]
            if len(values) >= 4 and float(np.median(values)) > PROBE_FLOOR:
                return mode
        return None

    # --- the operations ---------------------------------------------------------------
    def generate(self, prompts: list[str], max_new_tokens: int, stop: list[str],
                 on_done=None) -> list[str]:  # fmt: skip
        """Greedy completions, all prompts in flight at once (``on_done`` is not called:
        the server's answers come back together)."""
        payloads = [self._payload(p, max_new_tokens, top=0) | ({"stop": list(stop)} if stop else {})
                    for p in prompts]  # fmt: skip
        out = []
        for answer in self._complete(payloads):
            text = self._choice(answer).get("text")
            if not isinstance(text, str):
                raise self.client.malformed("/completions", "no text", answer)
            out.append(cut_at_stop(text, stop))
        return out

    def choice_logits(self, prompts: list[str], labels: Sequence[Sequence[str]],
                      prefixes: list[str] | None = None) -> np.ndarray:  # fmt: skip
        """Each label's log-probability after each prompt (``prefixes`` are the server's
        business: vLLM and llama.cpp reuse a shared prefix themselves)."""
        if self.read_states:
            raise ServerError(self._no_states_message())
        pieces = self._pieces(labels)
        answers = self._complete([self._payload(p, 1) for p in prompts])
        self.stats.prompts += len(prompts)
        self.last_states = [None] * len(prompts)
        return np.asarray([self._labels(self._next_top(a), pieces) for a in answers], float)

    def true_false_with_statement(
        self,
        prompts: list[str],
        prefixes: list[str],
        spans: list[tuple[int, int]],
        labels: tuple[Sequence[str], Sequence[str]] = (TRUE_WORDS, FALSE_WORDS),
        bases: list[str] | None = None,
    ) -> list[tuple[TrueFalse, list[int], np.ndarray]]:
        """As ``LocalLM``'s, from one request per prompt. Without prompt log-probabilities
        the statement part is empty (the run's plan needs no NP of it)."""
        if self.read_states:
            raise ServerError(self._no_states_message())
        pieces, mode = self._pieces(labels), self.prompt_logprobs
        answers = self._complete([self._payload(p, 1, mode) for p in prompts])
        out = []
        for prompt, span, answer in zip(prompts, spans, answers, strict=True):
            self.stats.prompts += 1
            verdict = TrueFalse(*self._labels(self._next_top(answer), pieces))
            found = self._statement(answer, prompt, span, mode) if mode else None
            if found is None and mode:
                extra = self.stats.extra
                extra["statement_not_found"] = extra.get("statement_not_found", 0) + 1
            out.append((verdict, *(found or ([], np.zeros(0)))))
        self.last_states = [None] * len(prompts)
        return out

    def _statement(self, answer, prompt: str, span: tuple[int, int], mode: str):
        positions = self._prompt_positions(answer, prompt, mode)
        if positions is None:
            raise self.client.malformed("/completions", "no log-probabilities of the "
                                        "prompt's tokens", answer)  # fmt: skip
        ids, values = positions
        a, b = self._token_span(prompt, ids, span)
        if not b > a > 0 or not all(isinstance(values[j], int | float) for j in range(a, b)):
            return None
        return list(ids[a:b]), np.asarray(values[a:b], float)

    def token_logprobs(self, pairs: list[tuple[list[int], list[int]]]) -> list[np.ndarray]:
        """log P(continuation[j] | context, continuation[:j]), read from the prompt's own
        log-probabilities of the text the ids spell."""
        if self.prompt_logprobs is None:
            raise ServerError(self.no_np_message())
        texts = [self.vocab.decode(context + continuation) for context, continuation in pairs]
        mode = self.prompt_logprobs
        answers = self._complete([self._payload(t, 1, mode, top=1) for t in texts])
        out = []
        for (_, continuation), text, answer in zip(pairs, texts, answers, strict=True):
            ids, values = self._prompt_positions(answer, text, mode) or ([], [])
            n = len(continuation)
            if list(ids[-n:]) != list(continuation) or len(values) < n:
                raise ValueError(f"the LM server at {self.url} reads the text of a context "
                                 f"and fact as other tokens than its ids")  # fmt: skip
            out.append(np.asarray(values[-n:], float))
        return out

    def true_false(self, prompts: list[str], prefixes: list[str] | None = None) -> list[TrueFalse]:
        """The True and False log-probabilities after each prompt."""
        scores = self.choice_logits(prompts, (TRUE_WORDS, FALSE_WORDS), prefixes)
        return [TrueFalse(float(t), float(f)) for t, f in scores]


def _grouped(payloads: list[dict], size: int) -> list[tuple[dict, int]]:
    """Requests of up to ``size`` consecutive payloads that differ only in their prompt
    (the prompt a list), each with how many prompts it carries."""
    out: list[tuple[dict, int]] = []
    for payload in payloads:
        if out and size > 1:
            last, n = out[-1]
            same = {k: v for k, v in last.items() if k != "prompt"} == {
                k: v for k, v in payload.items() if k != "prompt"}  # fmt: skip
            if same and n < size:
                prompts = last["prompt"] if n > 1 else [last["prompt"]]
                out[-1] = ({**last, "prompt": [*prompts, payload["prompt"]]}, n + 1)
                continue
        out.append((payload, 1))
    return out


def _split(answer, n: int) -> list:
    """The answers of a request of n prompts, one per prompt, by their choices' index."""
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if not isinstance(choices, list) or len(choices) != n:
        return [answer] * n  # malformed: each prompt's reading reports it
    by_index = sorted(choices, key=lambda c: c.get("index", 0) if isinstance(c, dict) else 0)
    return [{"choices": [choice]} for choice in by_index]


def _top_of(logprobs) -> dict[str, float] | None:
    """The last entry of a completion's top log-probabilities (echo puts the prompt's
    first), in the completions API's shape or the chat API's (llama-server, Ollama)."""
    if not isinstance(logprobs, dict):
        return None
    top = None
    if isinstance(logprobs.get("content"), list) and logprobs["content"]:
        entries = logprobs["content"][-1].get("top_logprobs") or []
        top = {e.get("token"): e.get("logprob") for e in entries if isinstance(e, dict)}
    elif isinstance(logprobs.get("top_logprobs"), list) and logprobs["top_logprobs"]:
        top = logprobs["top_logprobs"][-1]
    if not isinstance(top, dict) or not top:
        return None
    if not all(isinstance(k, str) and isinstance(v, int | float) for k, v in top.items()):
        return None
    return top
