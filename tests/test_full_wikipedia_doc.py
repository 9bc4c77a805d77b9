"""The full-Wikipedia guide's disk-and-time block is generated from the results files
(docs/generate/build_full_doc.py), and the committed guide holds the block as generated."""

from __future__ import annotations

import json
from pathlib import Path

from docs.generate import build_full_doc
from scripts.common import RESULTS


def _figures(resolve_big: float) -> dict:
    out = {}
    for p, pages in (("100k", 100_000), ("6000k", 6_000_000)):
        scale = pages / 100_000
        out |= {f"{p}/pages": pages, f"{p}/passages": int(2.7 * pages),
                f"{p}/text_gb": 0.3 * scale, f"{p}/ingest/wall_s": 7.0 * scale,
                f"{p}/bm25/wall_s": 30.0 * scale, f"{p}/ingest/max_rss_mb": 50.0,
                f"{p}/bm25/max_rss_mb": 700.0, f"{p}/bm25/disk_peak_gb": 1.1 * scale,
                f"{p}/disk/source_db_gb": 0.4 * scale, f"{p}/disk/store_gb": 0.4 * scale,
                f"{p}/disk/bm25_index_gb": 0.05 * scale,
                f"{p}/peak_bytes_per_page": 11_000,
                f"{p}/first_copy/resolve_median_ms": 0.02 if p == "100k" else resolve_big,
                f"{p}/first_copy/first_retrieval_median_ms": 0.3,
                f"{p}/first_copy_warm/resolve_median_ms": 0.02,
                f"{p}/first_copy_warm/first_retrieval_median_ms": 0.25,
                f"{p}/global_bm25_median_ms": 12.0}  # fmt: skip
    return out


def test_block_reads_every_size_and_the_lookups() -> None:
    record = {"figures": _figures(1.4), "machine": {"cores": 2}, "date": "2026-12-01",
              "data": {"memory_gb": 20.0}}  # fmt: skip
    block = build_full_doc.guide_block(record)
    # six columns (it fits the page at 1280 px): pages, source, ingest + BM25, memory, disk,
    # index; passage counts and the stages apart are on the benchmark page
    assert "| pages | source DB | ingest + BM25 | peak memory | peak disk | index |" in block
    assert "| 100,000 | 0.4 GB | 37 s | 700 MB | 1.1 GB | 0.5 GB |" in block
    assert "| 6,000,000 | 24.0 GB | 37.0 min | 700 MB | 66.0 GB | 27.0 GB |" in block
    # the dump route: its BM25, and its peak disk beside the dump (the DB route's less the DB)
    assert "then BM25 as from the DB (about 33.5 min)" in block
    assert "the dump itself (read compressed, never unpacked) and about 47 GB more" in block
    assert "stays under 2 ms as the index grows: from 100,000 to 6,000,000 pages" in block
    assert "resolves in 0.02 / 1.40 ms" in block
    # the first calls were much slower than the warm pass: reads from disk, said so
    assert "read from disk; the same calls again, cached, take 0.02 / 0.25 ms" in block
    cached = build_full_doc.guide_block({**record, "figures": _figures(0.03)})
    assert "cached" not in cached and "resolves in 0.02 / 0.03 ms" in cached


def test_page_tables_have_one_row_per_size() -> None:
    tables = build_full_doc.page_tables(_figures(1.4))
    assert tables.count("| 100,000 |") == 2 and tables.count("| 6,000,000 |") == 2


def test_guide_holds_the_generated_block(tmp_path: Path) -> None:
    guide = tmp_path / "guide.md"
    text = build_full_doc.GUIDE.read_text("utf-8")
    guide.write_text(text, "utf-8")
    changed = build_full_doc.splice_guide(guide)
    if (RESULTS / f"{build_full_doc.NAME}.json").exists():
        assert not changed, (
            "docs/guide/full-wikipedia.md's build-full block is stale: "
            "run `python -m docs.generate`"
        )
    record = json.loads((RESULTS / f"{build_full_doc.NAME}.json").read_text())
    assert record["replay"] is False  # hours of build: recorded, not re-run
