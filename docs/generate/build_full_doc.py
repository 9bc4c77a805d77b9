"""The full-size build's tables: its benchmark page (``docs/benchmarks/build-full.md``) and
the generated block of the full-Wikipedia guide (``docs/guide/full-wikipedia.md``, between
``<!-- build-full -->`` and ``<!-- /build-full -->``), both from the results files.

The guide's block reads ``build-full.json`` (the synthetic DBs of up to 6M pages, BM25 only),
``build-index.json`` (the XML route's speed), ``ray.json`` (the dense encoder on 2 cores) and
``gpu-check.json`` (the dense encoder on a GPU and on 16 CPU cores). ``python -m docs.generate``
rewrites it.
"""

from __future__ import annotations

import math
from pathlib import Path

from scripts.common import RESULTS, ROOT

NAME = "build-full"
GUIDE = ROOT / "docs" / "guide" / "full-wikipedia.md"
FULL_PAGES = 6_700_000  # English Wikipedia's articles, about (FActScore's DB: one row each)
GB = 1e9


def _sizes(figures: dict) -> list[str]:
    """The size prefixes (``100k``, ...), smallest first."""
    found = {k.split("/")[0] for k in figures if k.endswith("/pages")}
    return sorted(found, key=lambda p: figures[f"{p}/pages"])


def _at(figures: dict, size: str):
    """The figures of one size, by their name under it."""
    return lambda name: figures.get(f"{size}/{name}")


def _hms(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


def page_tables(figures: dict) -> str:
    """The benchmark page's tables: per size, each stage's cost, then the lookups' cost."""
    from docs.generate.markdown import md_table

    build, lookups = [], []
    for p in _sizes(figures):
        f = _at(figures, p)
        build.append([f("pages"), f("passages"), f("text_gb"),
                      *(f(f"{s}/wall_s") for s in ("make_db", "ingest", "bm25")),
                      f("ingest/max_rss_mb"), f("bm25/max_rss_mb"), f("bm25/tree_rss_peak_mb"),
                      f("bm25/disk_peak_gb"), f("disk/source_db_gb"), f("disk/store_gb"),
                      f("disk/bm25_index_gb")])  # fmt: skip
        # the first timing, right after the build, where the size was timed again later
        c = "after_build/" if f("after_build/first_copy/resolve_median_ms") else ""
        lookups.append([f("pages"), f(f"{c}first_copy/resolve_median_ms"),
                        f(f"{c}last_copy/resolve_median_ms"),
                        f(f"{c}first_copy/first_retrieval_median_ms"),
                        f(f"{c}last_copy/first_retrieval_median_ms"),
                        f(f"{c}first_copy/later_retrieval_median_ms"),
                        f("first_copy_warm/resolve_median_ms"),
                        f("first_copy_warm/first_retrieval_median_ms"),
                        f(f"{c}global_bm25_median_ms")])  # fmt: skip
    build_head = ["pages", "passages", "text GB", "make DB s", "ingest s", "bm25 s",
                  "ingest RSS MB", "bm25 RSS MB (JVM)", "bm25 tree RSS MB",
                  "peak disk GB (index folder + source)", "source DB GB", "store GB",
                  "BM25 index GB"]  # fmt: skip
    lookup_head = ["pages", "resolve ms, first copy", "resolve ms, last copy",
                   "first retrieval ms, first copy", "first retrieval ms, last copy",
                   "later retrieval ms", "resolve ms, warm", "first retrieval ms, warm",
                   "global BM25 ms"]  # fmt: skip
    return "\n\n".join([
        "### Build, per stage (each stage its own process)", md_table(build_head, build),
        "### Per topic over each index (medians over the 98 dev topics)",
        md_table(lookup_head, lookups),
        "Right after each build; the warm columns time the first copy's topics again, their "
        "pages now in memory (at the largest size they were timed once more, later).",
    ])  # fmt: skip


def _read(name: str) -> dict:
    """A record's figures ({} where it is not recorded)."""
    from docs.generate.markdown import read_record

    return (read_record(name) or {}).get("figures", {})


def guide_block(record: dict) -> str:
    """The guide's generated block: what a full build costs on 2 cores (measured), and
    what the dense stage and the XML route would cost, from the other results files."""
    from docs.generate.markdown import md_table

    figures = record["figures"]
    sizes = _sizes(figures)
    rows = []
    for p in sizes:  # six short columns: the table fits the page's column at 1280 px
        f = _at(figures, p)
        peak_rss = max(f(f"{s}/max_rss_mb") for s in ("ingest", "bm25"))
        rows.append([f"{f('pages'):,}", f"{f('disk/source_db_gb'):.1f} GB",
                     _hms(f("ingest/wall_s") + f("bm25/wall_s")), f"{peak_rss:,.0f} MB",
                     f"{f('bm25/disk_peak_gb'):.1f} GB",
                     f"{f('disk/store_gb') + f('disk/bm25_index_gb'):.1f} GB"])  # fmt: skip
    head = ["pages", "source DB", "ingest + BM25", "peak memory", "peak disk", "index"]
    big, small = sizes[-1], sizes[0]
    g = _at(figures, big)
    scale = FULL_PAGES / g("pages")
    full_passages = g("passages") * scale
    build_s = (g("ingest/wall_s") + g("bm25/wall_s")) * scale
    lines = [
        f"<!-- generated by `python -m docs.generate` from scripts/results/{NAME}.json, "
        "build-index.json, ray.json and gpu-check.json; do not edit -->",
        md_table(head, rows),
        f"Measured on {record['machine'].get('cores')} cores ({record['date'][:10]}), "
        "`--dense none`, synthetic FActScore-format DBs of real passages at FActScore's "
        "average page size (each stage's time and memory, the passage counts: "
        f"[details](../benchmarks/{NAME}.md)). Peak memory is the larger stage's process "
        "(BM25's is a JVM); peak disk counts the source DB and the index being built, "
        "Lucene's temporary copy of the passages included. Scaled by pages to "
        f"{FULL_PAGES / 1e6:.1f}M pages (about {full_passages / 1e6:.0f}M passages at the "
        f"synthetic pages' {g('passages') / g('pages'):.2f} a page): ingest "
        f"and BM25 about {_hms(build_s)}, peak disk about "
        f"{g('peak_bytes_per_page') * FULL_PAGES / GB:.0f} GB (the source DB included), an "
        f"index of about {(g('disk/store_gb') + g('disk/bm25_index_gb')) * scale:.0f} GB.",
    ]
    lines.append(_lookups(record, small, big))
    dense, gpu, xml = _read("ray"), _read("gpu-check"), _read("build-index")
    rate2 = dense.get("dense/single/passages_per_s")
    rate_gpu, rate16 = (
        gpu.get("encode/gpu_passages_per_s"),
        gpu.get("encode/gpu_host_cpu_passages_per_s"),
    )
    if rate2 and rate_gpu and rate16:
        lines.append(
            f"Embedding every one of those passages (`--dense minilm`) would take "
            f"{full_passages / rate2 / 86400:.0f} days on 2 cores ({rate2:.0f} passages/s), "
            f"{full_passages / rate16 / 3600:.0f} h on 16 CPU cores ({rate16:.0f} passages/s) "
            f"and {full_passages / rate_gpu / 3600:.1f} h on an H200 GPU ({rate_gpu:,.0f} "
            "passages/s); embedding each page's lead only (`--dense-leads`) takes "
            f"{FULL_PAGES / rate2 / 86400:.1f} days on 2 cores."
        )
    if xml.get("xml/ingest_s"):
        xml_rate = xml["xml/passages"] / xml["xml/ingest_s"]
        without_source = (g("bm25/disk_peak_gb") - g("disk/source_db_gb")) * scale
        lines.append(
            "**From a MediaWiki dump** instead of FActScore's DB, ingest cleans the wikitext: "
            f"{xml_rate:,.0f} passages/s on 2 cores (2 workers, `build-index.json`), so about "
            f"{full_passages / xml_rate / 3600:.0f} h of ingest for the same passages, where "
            f"the DB's takes {_hms(g('ingest/wall_s') * scale)}, then BM25 as from the DB "
            f"(about {_hms(g('bm25/wall_s') * scale)}). Its disk at the peak: the dump "
            f"itself (read compressed, never unpacked) and about {without_source:.0f} GB "
            "more (the DB route's peak without its source DB)."
        )
    return "\n\n".join(lines) + "\n"


def _lookups(record: dict, small: str, big: str) -> str:
    """What the estimator's per-topic calls cost at the smallest and the largest size."""
    figures, g = record["figures"], _at(record["figures"], big)

    # the first timing at each size, right after its build (a later one may find it cached)
    cold = "after_build/" if g("after_build/first_copy/resolve_median_ms") else ""
    resolve = [figures[f"{small}/first_copy/resolve_median_ms"],
               g(f"{cold}first_copy/resolve_median_ms")]  # fmt: skip
    first = [figures[f"{small}/first_copy/first_retrieval_median_ms"],
             g(f"{cold}first_copy/first_retrieval_median_ms")]  # fmt: skip
    text = (
        f"Per topic, what the estimator does stays under {math.ceil(max(resolve + first))} ms "
        f"as the index grows: from {figures[f'{small}/pages']:,} to {g('pages'):,} pages, a "
        f"title resolves in {resolve[0]:.2f} / {resolve[1]:.2f} ms and its first per-page "
        f"retrieval (reading the page) takes {first[0]:.2f} / {first[1]:.2f} ms (medians over "
        "the 98 dev topics)"
    )
    memory = record.get("data", {}).get("memory_gb")
    warm = g("first_copy_warm/resolve_median_ms")
    if memory and warm and resolve[1] > 2 * warm:  # the first calls read from disk
        text += (
            f". At {g('pages'):,} pages the source DB and the store ({g('disk/source_db_gb'):.0f}"
            f" and {g('disk/store_gb'):.0f} GB) outgrow this machine's {memory:.0f} GB of "
            "memory, so the first calls read from disk; the same calls again, cached, take "
            f"{warm:.2f} / {g('first_copy_warm/first_retrieval_median_ms'):.2f} ms"
        )
    if g("eval/s_per_fact"):
        text += (
            f". Scoring a fact with the LM over that index takes {g('eval/s_per_fact'):.1f} s "
            "on the same shared cores "
            f"({g('eval/facts')} facts of {g('eval/bios')} labeled bios, retrieve-lm)"
        )
    return text + (
        ". A global BM25 query (topic-free lookups only) grows with the posting lists: "
        f"{figures[f'{small}/global_bm25_median_ms']:.0f} / {g('global_bm25_median_ms'):.0f} ms."
    )


def splice_guide(guide: Path = GUIDE) -> bool:
    """Writes the generated block into the guide (when both exist); True when it changed."""
    from docs.generate.markdown import splice_blocks
    from scripts.common import read_results

    path = RESULTS / f"{NAME}.json"
    if not (path.exists() and guide.exists()):
        return False
    return splice_blocks(guide, {NAME: guide_block(read_results(path))})
