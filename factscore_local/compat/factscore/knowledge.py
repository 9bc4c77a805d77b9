"""Knowledge sources of the FActScore API: FActScore's ``.db`` / ``.jsonl`` files, indexed.

FActScore keeps a knowledge source as a SQLite file of pages (``documents(title, text)``)
built from a JSONL of ``{"title", "text"}``. This project reads from an index directory
(``fscore build-index``), which the builder makes from either file. The index is written
once under the scorer's ``cache_dir`` and reused (the build resumes, or finds itself done)
whenever the same name is registered again.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from factscore_local.index.builder import BuildError, BuildOptions, build_index
from factscore_local.index.manifest import MANIFEST

# Where FactScorer keeps the indexes it builds, under its cache_dir.
INDEX_FOLDER = "indexes"


def _has_documents(db: Path) -> bool:
    """Whether a file is FActScore's SQLite DB with its ``documents`` table (read only)."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            row = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='documents'"
            ).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return row is not None


def source_file(name: str, db_path: Path, data_path: Path) -> Path:
    """The file an index of knowledge source ``name`` is built from.

    As FActScore does, the ``.db`` is used when it holds pages, else the ``.jsonl``.

    Args:
        name: The knowledge source's name (for the error message).
        db_path: FActScore's SQLite DB of the source.
        data_path: The JSONL of ``{"title", "text"}`` it is made from.

    Returns:
        ``db_path`` or ``data_path``.

    Raises:
        FileNotFoundError: Neither file can be used.
    """
    if db_path.is_file() and _has_documents(db_path):
        return db_path
    if data_path.is_file():
        return data_path
    raise FileNotFoundError(
        f"knowledge source {name!r}: neither {db_path} (FActScore's .db with a 'documents' "
        f"table) nor {data_path} (JSONL of {{'title', 'text'}}) exists; pass db_path= or "
        "data_path=, or index= for an index built with 'fscore build-index'"
    )


def ensure_index(
    name: str, source: Path, cache_dir: Path, device: str = "auto", global_bm25: bool = False
) -> Path:
    """Builds (or resumes, or reopens) the index of a knowledge source under ``cache_dir``.

    Args:
        name: The knowledge source's name; the index is ``cache_dir/indexes/<name>``.
        source: FActScore's ``.db`` or a JSONL of ``{"title", "text"}``.
        cache_dir: The scorer's cache folder.
        device: Where a dense encoder would run (none is built here: pages are embedded
            on first use when dense retrieval is asked for).
        global_bm25: Also build the Lucene index over all passages (needed only for
            evidence taken from the whole index, not for a topic's page).

    Returns:
        The index directory.

    Raises:
        ValueError: The folder holds an index of another source, or the source is unusable.
    """
    out = cache_dir / INDEX_FOLDER / name
    done = (out / MANIFEST).is_file()
    try:
        build_index(
            BuildOptions(
                source=source,
                out=out,
                dense=None,
                bm25=global_bm25,
                device=device,
                progress=not done,
            )
        )
    except BuildError as exc:
        raise ValueError(
            f"cannot build knowledge source {name!r} from {source} in {out}: {exc}"
        ) from exc
    return out


def check_index(path: Path) -> Path:
    """An index directory given by the user, checked to be one.

    Args:
        path: A folder written by ``fscore build-index``.

    Returns:
        The same path.

    Raises:
        FileNotFoundError: It holds no index.
    """
    if not (path / MANIFEST).is_file():
        raise FileNotFoundError(
            f"{path} is not an index directory (no {MANIFEST}); build one with "
            "'fscore build-index' or register FActScore's .db / .jsonl instead"
        )
    return path
