"""Cut a page into passages of at most N tokens, exactly as FActScore builds its DB.

FActScore tokenizes every section with ``<s>``/``</s>`` around it, concatenates the pages'
sections and cuts the stream into consecutive windows of N ids (its greedy packing reduces
to that); windows holding only markers are dropped; each window is decoded, so the markers
stay in the text as literal ``<s>`` and ``</s>``.
"""

from __future__ import annotations

from factscore_local.index.tokenizer import Encoded, PassageTokenizer, clean_up_tokenization

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
    """Passages of several pages; tokenizing and decoding run in batches for speed."""
    if max_tokens < 3:
        raise ValueError("max_tokens must be at least 3")
    flat_sections = [s for sections in pages for s in sections]
    encoded = tokenizer.encode(flat_sections)
    windows_of_pages: list[list[list[tuple]]] = []
    cursor = 0
    for sections in pages:
        page_encoded = encoded[cursor : cursor + len(sections)]
        cursor += len(sections)
        windows_of_pages.append(_page_windows(page_encoded, max_tokens))
    # Every run of plain tokens of every window, decoded in one call.
    runs = [
        part
        for windows in windows_of_pages
        for window in windows
        for part in window
        if not isinstance(part, int)
    ]
    if tokenizer.byte_level:
        texts = iter(tokenizer.decode_many([[t for t, _, _ in run] for run in runs]))
    out: list[list[str]] = []
    cursor = 0
    for sections, windows in zip(pages, windows_of_pages, strict=True):
        passages = []
        for window in windows:
            parts = []
            for part in window:
                if isinstance(part, int):
                    parts.append(MARKER_TEXT[part])
                elif tokenizer.byte_level:
                    parts.append(next(texts))
                else:
                    parts.append(_slice_text(part, sections, encoded))
            text = "".join(parts)
            passages.append(clean_up_tokenization(text) if tokenizer.byte_level else text)
        out.append(passages)
    return out


def _page_windows(encoded: list[Encoded], max_tokens: int) -> list[list]:
    """Windows of the page's token stream, each a list of markers (ints) and runs of plain
    tokens (lists of (id, section, token index))."""
    stream: list = []
    for s_idx, enc in enumerate(encoded):
        stream.append(BOS)
        stream.extend((tok, s_idx, t_idx) for t_idx, tok in enumerate(enc.ids))
        stream.append(EOS)
    windows = []
    for start in range(0, len(stream), max_tokens):
        chunk = stream[start : start + max_tokens]
        if all(isinstance(t, int) for t in chunk):
            continue  # markers only: not a passage
        window: list = []
        run: list = []
        for item in chunk:
            if isinstance(item, int):
                if run:
                    window.append(run)
                    run = []
                window.append(item)
            else:
                run.append(item)
        if run:
            window.append(run)
        windows.append(window)
    return windows


def _slice_text(run: list[tuple], sections: list[str], encoded: list[Encoded]) -> str:
    # Runs never cross a section boundary: markers separate sections.
    _, s_idx, first = run[0]
    _, _, last = run[-1]
    offsets = encoded[s_idx].offsets
    return sections[s_idx][offsets[first][0] : offsets[last][1]]


def strip_markers(passage: str) -> str:
    """Passage text for BM25, embeddings and prompts: FActScore removes the markers there."""
    return passage.replace("<s>", "").replace("</s>", "")
