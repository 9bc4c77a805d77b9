"""``fscore build-index``: source -> passages in the store -> BM25 and dense indexes.

The build runs in stages (ingest, bm25, dense), each recorded as done in the store.
Ingest commits every batch of pages together with the source position it reached, in one
transaction, so a build killed at any moment (even ``kill -9``) resumes after the last
committed page: no page is lost or written twice. The BM25 stage writes its index under a
temporary name and renames it when finished; the dense stage commits its vectors in
batches and resumes after the last embedded passage.
"""

from __future__ import annotations

import hashlib
import json
import resource
import shutil
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from factscore_local.extras import check_installed
from factscore_local.index.build_ingest import _ingest
from factscore_local.index.build_ingest import reason_category as reason_category  # re-export
from factscore_local.index.chunking import DEFAULT_MAX_TOKENS
from factscore_local.index.dense import DENSE_INDEX
from factscore_local.index.lucene import BM25_DIR, build_lucene_index, write_collection
from factscore_local.index.manifest import MANIFEST, write_manifest
from factscore_local.index.models import DEFAULT_DENSE
from factscore_local.index.sources import check_source
from factscore_local.index.store import STORE_NAME, Store
from factscore_local.index.tokenizer import DEFAULT_TOKENIZER
from factscore_local.runtime.cores import usable_cores
from factscore_local.runtime.files import file_sha256


class BuildError(Exception):
    """The build cannot start or go on; the message says why and what to do."""


@dataclass
class BuildOptions:
    source: Path
    out: Path
    tokenizer: str = DEFAULT_TOKENIZER
    max_tokens: int = DEFAULT_MAX_TOKENS
    dense: str | None = DEFAULT_DENSE
    # Embed each page's first passage only: a dense search over pages (by their leads) at a
    # fraction of the cost; within a page, dense scores embed the other passages on demand.
    dense_leads: bool = False
    bm25: bool = True
    batch_pages: int = 500
    threads: int = field(default_factory=usable_cores)  # BM25's Lucene threads
    progress: bool = True
    overwrite: bool = False
    dense_batch: int = 256
    device: str = "auto"  # where the dense encoder runs: auto, cpu or cuda
    workers: int = field(default_factory=usable_cores)  # processes cleaning wikitext


def quick_fingerprint(path: Path) -> str:
    """Size plus hashes of the first and last MiB: enough to tell a resumed source apart."""
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as f:
        digest.update(f.read(1 << 20))
        f.seek(max(0, size - (1 << 20)))
        digest.update(f.read(1 << 20))
    return digest.hexdigest()


def peak_rss_mb() -> dict:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"builder": round(own, 1), "largest_child": round(children, 1)}


def build_index(opts: BuildOptions) -> dict:
    source = opts.source.expanduser().resolve()
    out = opts.out.expanduser()
    # These checks raise before anything in --out is created or deleted.
    fmt = check_source(source)
    if opts.bm25:  # its extras before hours of ingest, not after
        check_installed("pyserini", "lucene", "the global BM25 index (or build with --no-bm25)")
    if opts.dense:
        check_installed(
            "sentence_transformers", "dense", "the dense index (or build with --dense none)"
        )
    _prepare_out(out, source, opts.overwrite)
    out.mkdir(parents=True, exist_ok=True)
    store = Store(out / STORE_NAME)
    try:
        settings = {
            "source_fingerprint": quick_fingerprint(source),
            "format": fmt,
            "tokenizer": opts.tokenizer if fmt != "db" else None,
            "max_tokens": opts.max_tokens if fmt != "db" else None,
        }
        previous = store.get_state("settings")
        if previous is not None and previous != settings:
            raise BuildError(
                f"{out} holds a build from another source or settings ({previous}); "
                "pass --overwrite to rebuild it, or choose another --out"
            )
        if previous is None:
            store.set_state("settings", settings)
            store.set_state("source_sha256", file_sha256(source))
            store.set_state("started", time.strftime("%Y-%m-%dT%H:%M:%S"))
            store.conn.commit()
        timings = store.get_state("timings", {})

        if not store.get_state("ingest_done", False):
            t0 = time.perf_counter()
            _ingest(store, source, fmt, opts)
            store.create_lookup_indexes()
            timings["ingest_s"] = timings.get("ingest_s", 0.0) + time.perf_counter() - t0
            store.set_state("timings", timings)
            store.set_state("ingest_done", True)
            store.conn.commit()

        if opts.bm25 and not store.get_state("bm25_done", False):
            t0 = time.perf_counter()
            _build_bm25(store, out, opts)
            timings["bm25_s"] = timings.get("bm25_s", 0.0) + time.perf_counter() - t0
            store.set_state("timings", timings)
            store.set_state("bm25_done", True)
            store.conn.commit()

        dense_key = _dense_key(opts)
        if opts.dense and store.get_state("dense_done") != dense_key:
            t0 = time.perf_counter()
            _build_dense(store, out, opts)
            timings["dense_s"] = timings.get("dense_s", 0.0) + time.perf_counter() - t0
            store.set_state("timings", timings)
            store.set_state("dense_done", dense_key)
            store.conn.commit()

        return write_manifest(out, store, source, opts, peak_rss_mb())
    finally:
        store.close()


# --- the output directory -------------------------------------------------------------

# What a build (and the reader, for dense-cache.db) writes at the top of an index directory.
# Only these are deleted by --overwrite. eval-cache.db is kept: its keys hold the exact
# prompts, passages included, so its entries stay valid whatever the index.
_STORE_FILES = tuple(STORE_NAME + suffix for suffix in ("", "-wal", "-shm", "-journal"))
_BUILD_ENTRIES = (
    MANIFEST,
    MANIFEST + ".tmp",
    BM25_DIR,
    BM25_DIR + ".tmp",
    "bm25-collection.tmp",
    DENSE_INDEX,
    DENSE_INDEX + ".tmp",
    *("dense-cache.db" + suffix for suffix in ("", "-wal", "-shm", "-journal")),
)
_LOG = Path("logs") / "bm25.log"


def _store_tables(db: Path) -> set[str] | None:
    """The tables of a SQLite file, None when it is not one. Opened without writing to it."""
    # Without a -wal file, immutable=1 reads the file as it is and creates nothing beside
    # it; with one (a build killed mid-way), the committed state is partly in the WAL.
    wal = db.with_name(db.name + "-wal").exists()
    mode = "mode=ro" if wal else "immutable=1"
    try:
        conn = sqlite3.connect(f"file:{db}?{mode}", uri=True)
        try:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return {r[0] for r in rows}


def is_index_dir(out: Path) -> bool:
    """Whether ``out`` holds an index (finished or interrupted) that build-index made."""
    try:
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = None
    ours = isinstance(manifest, dict) and "format_version" in manifest
    if ours and manifest.get("store") == STORE_NAME:
        return True
    db = out / STORE_NAME
    tables = _store_tables(db) if db.is_file() else None
    if tables is not None and "build_state" in tables:
        return True
    # A build killed while it created its store leaves only the store's files, with no
    # tables yet: nothing of value, and nobody else's.
    only_store = all(p.name in _STORE_FILES for p in out.iterdir())
    return only_store and (not db.exists() or db.stat().st_size == 0 or tables == set())


def _prepare_out(out: Path, source: Path, overwrite: bool) -> None:
    """Refuses an --out that is not ours to fill; with --overwrite, deletes our build in it.

    A missing or empty directory is built into; an index of ours is resumed (or deleted
    first with --overwrite); anything else (a file, a directory holding other things) is
    refused with everything left in place.
    """
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_dir():
        raise BuildError(f"--out {out} exists and is not a directory; choose another --out")
    try:
        entries = sorted(p.name for p in out.iterdir())
    except OSError as exc:
        raise BuildError(f"cannot read --out {out}: {exc}") from exc
    if not entries:
        return
    if not is_index_dir(out):
        shown = ", ".join(entries[:5]) + (f", and {len(entries) - 5} more" * (len(entries) > 5))
        why = (
            f"{out} is not empty and is not an index made by build-index "
            f"(no {MANIFEST} or {STORE_NAME} of a build in it; it holds: {shown})"
        )
        if overwrite:
            raise BuildError(
                f"--overwrite refused: {why}. Nothing was deleted; choose a new or empty --out."
            )
        raise BuildError(f"{why}. Nothing was written; choose a new or empty --out.")
    if not overwrite:
        return  # resume, or refuse later if it was built from another source
    if source.is_relative_to(out.resolve()):
        raise BuildError(
            f"--overwrite refused: the source {source} lies inside {out}, which it would delete"
        )
    kept = _remove_build(out)
    if kept:
        print(
            f"--overwrite: deleted the previous build in {out}; kept what build-index did not "
            f"make: {', '.join(kept)}",
            file=sys.stderr,
        )


def _remove_build(out: Path) -> list[str]:
    """Deletes the builder's own entries; returns the names of the others, left in place."""

    def remove(path: Path) -> None:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()

    # The store goes last: until it is gone, an interrupted deletion is still recognised
    # as our index and can be run again.
    for name in _BUILD_ENTRIES:
        remove(out / name)
    remove(out / _LOG)
    logs = out / _LOG.parent
    if logs.is_dir() and not logs.is_symlink() and not any(logs.iterdir()):
        logs.rmdir()
    for name in _STORE_FILES:
        remove(out / name)
    return sorted(p.name for p in out.iterdir())


# --- BM25 ---------------------------------------------------------------------------


def _build_bm25(store: Store, out: Path, opts: BuildOptions) -> None:
    collection = out / "bm25-collection.tmp"
    shutil.rmtree(collection, ignore_errors=True)
    n_passages = store.count("passages")
    threads = max(1, opts.threads)
    per_file = max(1000, n_passages // (threads * 4) + 1)
    if opts.progress:
        print(f"bm25: writing {n_passages} passages for Lucene", file=sys.stderr)
    write_collection(store.iter_passages(), collection, n_files=threads * 4, per_file=per_file)
    if opts.progress:
        print(f"bm25: indexing with Lucene ({threads} threads)", file=sys.stderr)
    build_lucene_index(collection, out / BM25_DIR, threads, out / "logs" / "bm25.log")
    shutil.rmtree(collection, ignore_errors=True)


# --- dense --------------------------------------------------------------------------


def _dense_key(opts: BuildOptions) -> str | None:
    """What the dense stage holds once done: the model, and ``+leads`` for leads only."""
    if not opts.dense:
        return None
    return f"{opts.dense}+leads" if opts.dense_leads else opts.dense


def _build_dense(store: Store, out: Path, opts: BuildOptions) -> None:
    from factscore_local.index.dense import (
        Embedder,
        build_faiss_index,
        dense_resume,
        passage_input,
        store_vectors,
    )

    embedder = Embedder(opts.dense, device=opts.device)
    model_key = opts.dense
    if store.get_state("dense_scope", opts.dense) != _dense_key(opts):
        # vectors of a build with the other scope (all passages, or leads) start over
        store.conn.execute("DELETE FROM embeddings WHERE model=?", (model_key,))
        store.set_state("dense_scope", _dense_key(opts))
        store.conn.commit()
    done_up_to, bar = dense_resume(store, model_key, opts.progress, leads=opts.dense_leads)
    ids: list[int] = []
    texts: list[str] = []

    def flush() -> None:
        vectors = embedder.encode(texts, batch_size=64)
        store_vectors(store.conn, model_key, ids, vectors)
        store.conn.commit()
        bar.update(len(ids))
        ids.clear()
        texts.clear()

    try:
        passages = store.iter_passages(after_id=done_up_to, leads_only=opts.dense_leads)
        for passage_id, title, passage in passages:
            ids.append(passage_id)
            texts.append(passage_input(title, passage))
            if len(ids) >= opts.dense_batch:
                flush()
        if ids:
            flush()
    finally:
        bar.close()
    build_faiss_index(store.conn, model_key, embedder.dim, out / DENSE_INDEX)
    store.set_state(
        "dense_model", {"spec": model_key, "dim": embedder.dim, "leads_only": opts.dense_leads}
    )
