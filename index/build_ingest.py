"""Ingest stage of an index build: read the source records and store pages and passages.

Streams the source in batches through the passage preparer into the store, counting pages,
redirects, duplicates, skipped and bad records; the position reached is committed with every
batch so that an interrupted build resumes where it stopped.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm import tqdm

from factscore_local.index.prepare import Preparer
from factscore_local.index.sources import Record, read_source
from factscore_local.index.store import Store

if TYPE_CHECKING:  # annotation only: builder imports this module
    from factscore_local.index.builder import BuildOptions


def reason_category(reason: str) -> str:
    """'line 12: invalid JSON (Expecting value)' -> 'invalid JSON'."""
    reason = re.sub(r"^line \d+: ", "", reason)
    reason = re.sub(r" after \d+ (pages|rows).*$", "", reason)
    return re.sub(r"\s*\(.*\)$", "", reason).strip()


def _empty_counts() -> dict:
    return {
        "pages": 0,
        "redirects": 0,
        "passages": 0,
        "disambiguation_pages": 0,
        "duplicates": 0,
        "skipped": {},
        "bad": {},
        "source_truncated": False,
    }


def _ingest(store: Store, source: Path, fmt: str, opts: BuildOptions) -> None:
    preparer = Preparer(opts.tokenizer, opts.max_tokens, opts.workers) if fmt != "db" else None
    start = int(store.get_state("next_position", 0))
    counts = store.get_state("counts") or _empty_counts()
    total = _count_db_rows(source) if fmt == "db" else None
    bar = tqdm(
        total=total,
        initial=start,
        unit=" records",
        desc="ingest",
        disable=not opts.progress,
        dynamic_ncols=True,
        mininterval=1.0,
    )
    if start:
        bar.write(f"resuming after {start} source records already stored")
    batch: list[Record] = []
    try:
        for record in read_source(source, fmt, start=start):
            batch.append(record)
            if record.extra.get("fatal"):
                break
            if len(batch) >= opts.batch_pages:
                _write_batch(store, batch, preparer, counts)
                bar.update(len(batch))
                bar.set_postfix(pages=counts["pages"], passages=counts["passages"], refresh=False)
                batch = []
        if batch:
            _write_batch(store, batch, preparer, counts)
            bar.update(len(batch))
    finally:
        bar.close()
        if preparer is not None:
            preparer.close()


def _count_db_rows(path: Path) -> int | None:
    import sqlite3

    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return int(conn.execute("SELECT MAX(rowid) FROM documents").fetchone()[0] or 0)
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return None


def _write_batch(store: Store, batch: list[Record], preparer, counts: dict) -> None:
    todo = [r for r in batch if r.kind == "page" and r.passages is None]
    prepared = preparer.prepare([(r.title, r.wikitext, r.sections) for r in todo]) if todo else []
    result_of = {id(r): p for r, p in zip(todo, prepared, strict=True)}
    for record in batch:
        if record.kind == "page":
            if record.passages is not None:
                passages, is_dab, error = record.passages, record.is_disambiguation, ""
            else:
                result = result_of[id(record)]
                passages, is_dab, error = result.passages, result.is_disambiguation, result.error
            if error or not passages:
                _bad(store, counts, record, error or "no passages")
            elif store.add_page(record.title, passages, is_dab):
                counts["pages"] += 1
                counts["passages"] += len(passages)
                counts["disambiguation_pages"] += int(is_dab)
            else:
                counts["duplicates"] += 1
                _bad(store, counts, record, "duplicate title (first one kept)")
        elif record.kind == "redirect":
            if store.add_redirect(record.title, record.redirect_target):
                counts["redirects"] += 1
            else:
                counts["duplicates"] += 1
                _bad(store, counts, record, "duplicate redirect title (first one kept)")
        elif record.kind == "skip":
            category = reason_category(record.reason)
            counts["skipped"][category] = counts["skipped"].get(category, 0) + 1
        else:
            _bad(store, counts, record, record.reason)
            if record.extra.get("fatal"):
                counts["source_truncated"] = True
                print(f"warning: {record.reason}; the pages before it are kept", file=sys.stderr)
    store.commit_batch(batch[-1].position + 1, counts)


def _bad(store: Store, counts: dict, record: Record, reason: str) -> None:
    store.add_bad(record.position, record.title, reason)
    category = reason_category(reason)
    counts["bad"][category] = counts["bad"].get(category, 0) + 1
