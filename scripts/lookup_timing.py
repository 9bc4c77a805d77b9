"""Time what the estimator does against an index, per topic: resolve the title, then retrieve
passages for each fact within the topic's page (``KnowledgeSource.search_page``, FActScore's
per-page BM25), and a global Lucene BM25 query (topic-free lookups).

The topics are the 98 labeled dev topics, looked up twice: under their own titles (the first
copy in a replicated synthetic DB) and under the title of the last full copy (``"Title (c)"``,
the pages written last), so a lookup at the end of a large store is timed too. The queries are
ChatGPT's human atomic facts, ``f"{topic} {fact}"`` as the estimator forms them. The first
copy's topics are then timed once more (``first_copy_warm``), their pages now in memory: a
store larger than the machine's memory makes the first lookups read from disk.

    python -m scripts.lookup_timing --index IDX --last-copy 15000 [--facts 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from factscore_local.index.reader import KnowledgeSource
from scripts.common import add_data_option, data_root, labeled_bios


def topic_facts(root: Path, per_topic: int) -> list[tuple[str, list[str]]]:
    """(topic, up to ``per_topic`` of ChatGPT's human facts) for the labeled dev topics."""
    out = []
    for bio in labeled_bios(root, ("ChatGPT",))["ChatGPT"]:
        facts = [
            f["text"]
            for sentence in bio.annotations or []
            for f in sentence.get("human-atomic-facts") or []
        ]
        out.append((bio.topic, facts[:per_topic] or [bio.topic]))
    return out


def _ms(values: list[float]) -> dict:
    values = sorted(values)
    return {
        "n": len(values),
        "median_ms": round(statistics.median(values) * 1000, 3),
        "mean_ms": round(statistics.fmean(values) * 1000, 3),
        "p95_ms": round(values[int(0.95 * (len(values) - 1))] * 1000, 3),
    }


def time_lookups(index: Path, topics: list[tuple[str, list[str]]], suffix: str) -> dict:
    """Timings of title lookups and per-page retrieval over ``index``, topics named with
    ``suffix`` appended (``""`` for the originals)."""
    ks = KnowledgeSource(index, device="cpu")
    resolve, first, later, found = [], [], [], 0
    try:
        for topic, facts in topics:
            title = f"{topic}{suffix}"
            t0 = time.perf_counter()
            resolution = ks.resolve_title(title)
            resolve.append(time.perf_counter() - t0)
            if resolution.title is None:
                continue
            found += 1
            for i, fact in enumerate(facts):
                t0 = time.perf_counter()
                ks.search_page(resolution.title, f"{topic} {fact}", k=5)
                (first if i == 0 else later).append(time.perf_counter() - t0)
    finally:
        ks.close()
    return {
        "found": found,
        "resolve": _ms(resolve),
        "first_retrieval": _ms(first),  # reads the page and builds its BM25
        "later_retrieval": _ms(later),  # the page's BM25 is cached
    }


def time_global(index: Path, topics: list[tuple[str, list[str]]]) -> dict:
    """Timings of one global Lucene BM25 query (k=10) per topic, after one warm-up query."""
    ks = KnowledgeSource(index, device="cpu")
    times = []
    try:
        if not ks.has_bm25:
            return {}
        ks.search("warm up the searcher", k=10)
        for topic, facts in topics:
            t0 = time.perf_counter()
            ks.search(f"{topic} {facts[0]}", k=10)
            times.append(time.perf_counter() - t0)
    finally:
        ks.close()
    return _ms(times)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m scripts.lookup_timing")
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--last-copy", type=int, default=0, help="the last full copy's number")
    ap.add_argument("--facts", type=int, default=5, help="facts retrieved per topic")
    add_data_option(ap)
    args = ap.parse_args()
    topics = topic_facts(data_root(args.data), args.facts)
    out = {"topics": len(topics), "first_copy": time_lookups(args.index, topics, "")}
    if args.last_copy:
        out["last_copy"] = time_lookups(args.index, topics, f" ({args.last_copy})")
    # the same topics again: their pages are in memory now (what a cold read cost shows)
    out["first_copy_warm"] = time_lookups(args.index, topics, "")
    out["global_bm25"] = time_global(args.index, topics)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
