"""Turn page records into passages: clean wikitext, tokenize, cut windows.

This is the costly part of an XML or JSONL build, so it runs in a pool of worker
processes, each with its own tokenizer. Work goes out in bounded batches and comes back
in order, so memory stays flat and the builder commits pages in source order.
"""

from __future__ import annotations

import multiprocessing
from dataclasses import dataclass

from factscore_local.index.chunking import chunk_pages
from factscore_local.index.tokenizer import PassageTokenizer, load_tokenizer


@dataclass
class Prepared:
    passages: list[str] | None
    is_disambiguation: bool = False
    error: str = ""  # why the page has no passages


# (title, wikitext or None, sections or None)
Item = tuple[str, str | None, list[str] | None]

_tokenizer: PassageTokenizer | None = None
_max_tokens = 256


def _init(tokenizer_spec: str, max_tokens: int) -> None:
    global _tokenizer, _max_tokens
    _tokenizer = load_tokenizer(tokenizer_spec)
    _max_tokens = max_tokens


def prepare_items(items: list[Item]) -> list[Prepared]:
    from factscore_local.index.wikitext import clean_page

    results: list[Prepared] = []
    to_chunk: list[list[str]] = []
    slots: list[int] = []
    for title, wikitext, sections in items:
        prepared = Prepared(None)
        if wikitext is not None:
            try:
                page = clean_page(title, wikitext)
            except Exception as exc:  # the cleaner is defensive; this is a last resort
                prepared.error = f"cannot clean wikitext: {exc}"
                results.append(prepared)
                continue
            prepared.is_disambiguation = page.is_disambiguation
            sections = page.sections
            if sections[0].strip() == title and not any(s.strip() for s in sections[1:]):
                prepared.error = "no text left after cleaning"
                results.append(prepared)
                continue
        slots.append(len(results))
        to_chunk.append(sections or [])
        results.append(prepared)
    for slot, passages in zip(slots, chunk_pages(to_chunk, _tokenizer, _max_tokens), strict=True):
        results[slot].passages = passages
        if not passages:
            results[slot].error = "no passages"
    return results


class Preparer:
    """Prepares items in-process (workers=1) or in a pool of spawned processes."""

    def __init__(self, tokenizer_spec: str, max_tokens: int, workers: int) -> None:
        self.workers = max(1, workers)
        self.pool = None
        if self.workers > 1:
            # spawn, not fork: this process may already run tokenizer threads.
            self.pool = multiprocessing.get_context("spawn").Pool(
                self.workers, initializer=_init, initargs=(tokenizer_spec, max_tokens)
            )
        else:
            _init(tokenizer_spec, max_tokens)

    def prepare(self, items: list[Item]) -> list[Prepared]:
        if not items:
            return []
        if self.pool is None:
            return prepare_items(items)
        size = -(-len(items) // (self.workers * 2))
        pieces = [items[i : i + size] for i in range(0, len(items), size)]
        return [p for part in self.pool.map(prepare_items, pieces) for p in part]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool = None
