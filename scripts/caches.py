"""The benchmarks' model-result caches: the ``--cache``/``--seed-cache`` options, seeding a
cache from the committed exports, exporting a run's new results as the next part, and
counting what a run computed."""

from __future__ import annotations

import argparse
from pathlib import Path

from scripts.common import log


def add_cache_options(ap: argparse.ArgumentParser, default: Path | None) -> None:
    """Adds ``--cache FILE`` and ``--seed-cache FILE`` (repeatable) to a parser."""
    ap.add_argument("--cache", type=Path, default=default, help="the model results' cache")
    ap.add_argument(
        "--seed-cache",
        type=Path,
        action="append",
        default=[],
        help="import these `fscore cache export` files into --cache first (e.g. "
        "scripts/cache/*.jsonl.gz: the committed results of an earlier run)",
    )


def seed_cache(cache: Path | None, exports: list[Path], tag: str, skip_kinds=()) -> None:
    """Imports exported model results into the cache file (stored ones win), those of
    ``skip_kinds`` left out."""
    if not exports:
        return
    if cache is None:
        raise SystemExit("--seed-cache needs --cache FILE")
    from factscore_local.studies import seed_cache as import_exports

    for export, added, present in import_exports(cache, exports, skip_kinds):
        log(tag, f"seeded {cache} from {export}: {added} results added, {present} there")


def export_part(
    cache: Path, prefix: Path, kinds=None, exclude=(), tag: str = "export"
) -> Path | None:
    """Exports the cache's results (of ``kinds``) that no earlier ``PREFIX-partN.jsonl.gz``
    (nor a file of ``exclude``) holds, as the next part; None when there are none."""
    from factscore_local.studies import export_results

    parts = sorted(prefix.parent.glob(f"{prefix.name}-part*.jsonl.gz"))
    out = prefix.parent / f"{prefix.name}-part{len(parts) + 1}.jsonl.gz"
    n = export_results(cache, out, kinds, exclude=[p for p in (*parts, *exclude) if p != out])
    if n == 0:
        out.unlink()
        return None
    log(tag, f"exported {n} results to {out}")
    return out


def model_results(cache: Path | None) -> int:
    """How many model results a cache file holds (not the file digests it also keeps): the
    difference before and after a run is what the run computed."""
    import sqlite3
    from contextlib import closing

    if cache is None or not cache.exists():
        return 0
    with closing(sqlite3.connect(cache)) as conn:
        query = "SELECT COUNT(*) FROM results WHERE kind != 'sha256'"
        return conn.execute(query).fetchone()[0]
