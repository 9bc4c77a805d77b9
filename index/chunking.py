"""Cut a page into passages of at most N tokens, exactly as FActScore builds its DB.

FActScore tokenizes every section with ``<s>``/``</s>`` around it, concatenates the pages'
sections and cuts the stream into consecutive windows of N ids (its greedy packing reduces
to that); windows holding only markers are dropped; each window is decoded, so the markers
stay in the text as literal ``<s>`` and ``</s>``.
"""

from __future__ import annotations

from index.tokenizer import PassageTokenizer, clean_up_tokenization

BOS, EOS = -1, -2  # section markers; they count as one token each, as in FActScore
MARKER_TEXT = {BOS: "<s>", EOS: "</s>"}
DEFAULT_MAX_TOKENS = 256


def chunk_page(
    sections: list[str], tokenizer: PassageTokenizer, max_tokens: int = DEFAULT_MAX_TOKENS
) -> list[str]:
    return chunk_pages([sections], tokenizer, max_tokens)[0]


def chunk_pages(
    pages: list[list[str]], tokenizer: PassageTokenizer, max_tokens: int = DEFAULT_MAX_TOKENS
) -> list[list[str]]:
    """Passages of several pages; sections are tokenized in one batch for speed."""
    if max_tokens < 3:
        raise ValueError("max_tokens must be at least 3")
    flat_sections = [s for sections in pages for s in sections]
    encoded = tokenizer.encode(flat_sections)
    out: list[list[str]] = []
    cursor = 0
    for sections in pages:
        page_encoded = encoded[cursor : cursor + len(sections)]
        cursor += len(sections)
        out.append(_page_passages(sections, page_encoded, tokenizer, max_tokens))
    return out


def _page_passages(sections, encoded, tokenizer, max_tokens) -> list[str]:
    # A stream of token ids with markers, and for each plain token where it came from
    # (section, token index), so windows can be decoded either way.
    stream: list[int] = []
    origin: list[tuple[int, int]] = []
    for s_idx, enc in enumerate(encoded):
        stream.append(BOS)
        origin.append((s_idx, -1))
        for t_idx, tok in enumerate(enc.ids):
            stream.append(tok)
            origin.append((s_idx, t_idx))
        stream.append(EOS)
        origin.append((s_idx, -1))
    passages = []
    for start in range(0, len(stream), max_tokens):
        window = stream[start : start + max_tokens]
        if all(t < 0 for t in window):
            continue
        passages.append(
            _decode_window(window, origin[start : start + max_tokens], sections, encoded, tokenizer)
        )
    return passages


def _decode_window(window, origin, sections, encoded, tokenizer) -> str:
    parts: list[str] = []
    run: list[int] = []  # positions in the window of the current run of plain tokens

    def flush() -> None:
        if not run:
            return
        if tokenizer.byte_level:
            parts.append(tokenizer.decode_ids([window[i] for i in run]))
        else:
            s_idx, first = origin[run[0]]
            _, last = origin[run[-1]]
            offsets = encoded[s_idx].offsets
            parts.append(sections[s_idx][offsets[first][0] : offsets[last][1]])
        run.clear()

    for pos, tok in enumerate(window):
        if tok < 0:
            flush()
            parts.append(MARKER_TEXT[tok])
        else:
            run.append(pos)
    flush()
    text = "".join(parts)
    return clean_up_tokenization(text) if tokenizer.byte_level else text


def strip_markers(passage: str) -> str:
    """Passage text for BM25, embeddings and prompts: FActScore removes the markers there."""
    return passage.replace("<s>", "").replace("</s>", "")
