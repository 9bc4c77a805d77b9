"""Find the real Wikipedia dump excerpt that the demo and tests use.

It is the 206-page MediaWiki export shipped as test data inside the gensim wheel. In the
project's own checkouts it lies in ``../shared/data/wiki-dumps``; elsewhere it is taken from
that wheel (downloaded from PyPI once, with pip, into the user's cache).
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

from factscore_local.runtime.pypi import pip_download

EXCERPT = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
TABLES = "enwiki-table-markup.xml.bz2"
GENSIM = "gensim==4.4.0"


def shared_data_dir() -> Path | None:
    """``shared/data`` beside the project checkout, when there is one."""
    env = os.environ.get("FSCORE_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[1].parent / "shared" / "data")
    return next((c for c in candidates if c.is_dir()), None)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "factscore-local"


def find_dump(name: str = EXCERPT, download: bool = True) -> Path:
    shared = shared_data_dir()
    if shared and (shared / "wiki-dumps" / name).is_file():
        return shared / "wiki-dumps" / name
    cached = cache_dir() / "wiki-dumps" / name
    if cached.is_file():
        return cached
    if not download:
        raise FileNotFoundError(f"{name} is neither in shared/data nor in {cached.parent}")
    wheel_dir = cache_dir() / "wheels"
    wheel_dir.mkdir(parents=True, exist_ok=True)
    pip_download([GENSIM], wheel_dir, binary_only=True)
    wheel = next(wheel_dir.glob("gensim-*.whl"))
    cached.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        for member in (EXCERPT, TABLES):
            data = zf.read(f"gensim/test/test_data/{member}")
            (cached.parent / member).write_bytes(data)
    return cached


def build_demo_index(out: Path, progress: bool = True, dump: Path | None = None) -> dict:
    """Builds (or resumes) the demo's index at ``out`` as ``fscore demo`` does: the dump
    excerpt's pages with BM25, and dense vectors of the pages' leads only (the demo's dense
    search ranks pages; a page's other passages are embedded on first use). Returns the
    index's manifest.

    Example:
        >>> build_demo_index(Path("demo-index"))["counts"]["pages"]  # doctest: +SKIP
        106
    """
    from factscore_local.index.builder import BuildOptions, build_index

    source = find_dump() if dump is None else dump
    return build_index(BuildOptions(source=source, out=Path(out), dense_leads=True,
                                    progress=progress))  # fmt: skip
