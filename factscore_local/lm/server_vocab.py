"""The tokenizer of a served model, for what the estimator counts and checks in tokens
(evidence budgets, label words, NP's stopwords, a statement's token span).

Chosen in this order, the most robust first:

1. **The served weights, found here.** The model's name on the server is a GGUF file or a
   Hugging Face directory on this machine (llama.cpp's and vLLM's servers report the path
   they were started with), an embedded model's name (``qwen2.5-coder-1.5b-instruct-q4_k_m``,
   or a GGUF file of that name), or a Hugging Face repository in the local cache. Its
   tokenizer and chat template are then the in-process backends' own (a GGUF's vocabulary
   through llama.cpp, ``vocab_only``; a directory's through transformers): the same
   prompts, token counts and evidence blocks as a run in process, and no request per
   passage.
2. **The server's tokenizer endpoint**: ``/tokenize`` and ``/detokenize`` (vLLM, SGLang,
   llama.cpp's ``llama-server``) or ``/extras/tokenize`` (llama-cpp-python's server). Token
   counts are then the server's own, one request per new text (memoised); the chat
   template is not known, so verification prompts need ``--verify-format plain``.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

from factscore_local.lm.chat import render_chat
from factscore_local.lm.server_client import ServerClient, ServerError

MEMO = 50_000  # texts whose ids the endpoint vocabulary keeps


def local_weights(model: str) -> Path | None:
    """The local file or directory of a served model's weights, where its name tells."""
    from factscore_local.lm.names import served_name
    from factscore_local.model_store import EMBEDDED_MODELS, installed_path

    path = Path(model).expanduser()
    if (path.is_file() and path.suffix == ".gguf") or (path / "config.json").is_file():
        return path
    name = served_name(model)
    return installed_path(name) if name in EMBEDDED_MODELS else None


def load_vocab(client: ServerClient, model: str, weights: Path | None):
    """The tokenizer to use for ``model`` (see the module docstring)."""
    if weights is not None:
        return GGUFVocab(weights) if weights.is_file() else HFVocab(str(weights))
    if "/" in model and not Path(model).exists():  # a Hub id: its files may be cached here
        try:
            return HFVocab(model)
        except Exception:  # not cached (or transformers missing): ask the server
            pass
    return EndpointVocab(client, model)


class GGUFVocab:
    """A GGUF's vocabulary and chat template, read as ``LlamaCppLM`` reads them (llama.cpp
    loads the vocabulary alone: no weights, no context)."""

    def __init__(self, path: Path) -> None:
        from factscore_local.extras import require

        self._lib = require("llama_cpp", "llama", "the tokenizer of a served GGUF")
        from llama_cpp._internals import LlamaModel

        params = self._lib.llama_model_default_params()
        params.vocab_only = True
        self.model = LlamaModel(path_model=str(path), params=params, verbose=False)
        meta = self.model.metadata()
        self.template = meta.get("tokenizer.chat_template")
        self.add_bos = meta.get("tokenizer.ggml.add_bos_token", "false") == "true"

    def tokenize(self, text: str) -> list[int]:
        return self.model.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def prompt_ids(self, text: str) -> list[int]:
        return self.model.tokenize(text.encode("utf-8"), add_bos=self.add_bos, special=True)

    def decode(self, ids: list[int]) -> str:
        return self.model.detokenize(ids).decode("utf-8", "ignore")

    def piece(self, token: int) -> bytes:
        size = 64
        while True:
            buffer = ctypes.create_string_buffer(size)
            n = self._lib.llama_token_to_piece(self.model.vocab, token, buffer, size, 0, True)
            if n >= 0:
                return buffer.raw[:n]
            size = -n

    def chat(self, user: str) -> str:
        bos = self.decode([self.model.token_bos()])
        eos = self.decode([self.model.token_eos()])
        return render_chat(self.template, user, bos=bos, eos=eos)


class HFVocab:
    """A Hugging Face tokenizer (a directory, or a repository in the local cache), as
    ``HFCausalLM`` uses it."""

    def __init__(self, source: str) -> None:
        from factscore_local.runtime.offline import enforce_offline

        enforce_offline()
        from transformers import AutoTokenizer

        self.tok = AutoTokenizer.from_pretrained(source, local_files_only=True)

    def tokenize(self, text: str) -> list[int]:
        return self.tok(text, add_special_tokens=False)["input_ids"]

    def prompt_ids(self, text: str) -> list[int]:
        return self.tok(text)["input_ids"]

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids)

    def piece(self, token: int) -> bytes | None:
        return None  # spans are then found by tokenizing the prompt cut at each end

    def chat(self, user: str) -> str:
        if not getattr(self.tok, "chat_template", None):
            return user
        return self.tok.apply_chat_template(
            [{"role": "user", "content": user}], tokenize=False, add_generation_prompt=True
        )


class EndpointVocab:
    """The server's own tokenizer, over HTTP (vLLM, SGLang and llama-server at
    ``/tokenize``; llama-cpp-python's server at ``/extras/tokenize``)."""

    def __init__(self, client: ServerClient, model: str) -> None:
        self.client, self.model = client, model
        self._ids: dict[tuple[str, bool], list[int]] = {}
        self._path = None
        for path in ("/tokenize", "/extras/tokenize"):  # the first the server answers
            try:
                found = self._ask(path, "a", False) is not None
            except ValueError:  # it has the path, for something else
                found = False
            if found:
                self._path = path
                break
        if self._path is None:
            raise ServerError(f"the model {model!r} of the LM server at {client.base} is not "
                              "on this machine and the server has no tokenizer endpoint: "
                              "serve a local GGUF or model directory (or an embedded model), "
                              "or name it with --lm-model")  # fmt: skip
        # llama-cpp-python's endpoint adds the BOS its model wants, and cannot be told not to
        try:
            self._bos = self._ask(self._path, "", False) or []
        except ValueError:  # an empty text refused: no BOS to strip, then
            self._bos = []

    def _ask(self, path: str, text: str, special: bool) -> list[int] | None:
        payload = {"model": self.model, "prompt": text, "add_special_tokens": special,
                   "content": text, "add_special": special, "input": text}  # fmt: skip
        answer = self.client.post(path, payload, root=True, optional=True)
        if answer is None:
            return None
        tokens = answer.get("tokens") if isinstance(answer, dict) else None
        if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
            raise self.client.malformed(path, "no list of token ids", answer)
        return tokens

    def _tokens(self, text: str, special: bool) -> list[int]:
        key = (text, special)
        if key not in self._ids:
            if len(self._ids) >= MEMO:
                self._ids.pop(next(iter(self._ids)))
            ids = self._ask(self._path, text, special) or []
            if self._bos and ids[: len(self._bos)] == self._bos and not special:
                ids = ids[len(self._bos) :]
            self._ids[key] = ids
        return self._ids[key]

    def tokenize(self, text: str) -> list[int]:
        return self._tokens(text, False)

    def prompt_ids(self, text: str) -> list[int]:
        return self._tokens(text, True)

    def decode(self, ids: list[int]) -> str:
        path = self._path.replace("tokenize", "detokenize")
        answer = self.client.post(path, {"model": self.model, "tokens": ids}, root=True)
        for key in ("prompt", "content", "text"):  # vLLM, llama-server, llama-cpp-python
            if isinstance(answer, dict) and isinstance(answer.get(key), str):
                return answer[key]
        raise self.client.malformed(path, "no text", answer)

    def piece(self, token: int) -> bytes | None:
        return None

    def chat(self, user: str) -> str:
        raise ServerError(f"the chat template of {self.model!r} (served at {self.client.base}) "
                          "is not known here: its weights are not on this machine. Use "
                          "--verify-format plain, or serve local weights (see the docs: LM "
                          "servers)")  # fmt: skip
