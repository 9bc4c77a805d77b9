"""A SQLite cache of model results, keyed by everything that changes them.

Keys hash the kind of result, the model's identity (file name, size and sha256 of its
content, so that a reinstalled or copied model keeps its results) and the exact input
(prompt text, or fact plus passages). A killed run resumes from it without recomputing;
two runs may share one file (WAL mode, short transactions).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

EXPORT_FORMAT = "factscore-local cache export 1"


def key_of(*parts: object) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(json.dumps(part, sort_keys=True, ensure_ascii=False).encode())
        digest.update(b"\x00")
    return digest.hexdigest()


def content_sha256(path: Path, cache: ResultCache) -> str:
    """sha256 of a file, or of a directory's files in name order, computed once per
    (path, size, mtime) of its files and kept in the cache (~3 s for a 1.1 GB GGUF)."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    identity = [(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files]
    key = key_of("sha256", identity)
    digest = cache.get(key)
    if digest is None:
        from factscore_local.runtime.files import file_sha256

        if path.is_file():
            digest = file_sha256(path)
        else:
            whole = hashlib.sha256()
            for p in files:
                whole.update(p.relative_to(path).as_posix().encode())
                whole.update(file_sha256(p).encode())
            digest = whole.hexdigest()
        cache.put_many("sha256", {key: digest})
    return digest


OPEN_SECONDS = 120.0  # how long an open waits for other processes opening the same file


def _open(path: Path) -> sqlite3.Connection:
    """The cache file's connection, in WAL mode, its table made. Processes that open a new
    file at the same moment (Ray workers starting) can see "database is locked" while one
    of them switches it to WAL, which SQLite reports without waiting: retried here."""
    deadline = time.monotonic() + OPEN_SECONDS
    while True:
        conn = sqlite3.connect(path, timeout=60, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, kind TEXT, value TEXT)"
            )
            conn.commit()
            return conn
        except sqlite3.OperationalError as exc:
            conn.close()
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(random.uniform(0.05, 0.5))


class ResultCache:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._memory: dict[str, object] = {}
        self.hits = 0
        self.misses = 0
        self.conn = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = _open(path)

    def get(self, key: str):
        with self._lock:
            if key in self._memory:
                self.hits += 1
                return self._memory[key]
            if self.conn is not None:
                row = self.conn.execute("SELECT value FROM results WHERE key=?", (key,)).fetchone()
                if row:
                    self.hits += 1
                    value = json.loads(row[0])
                    self._memory[key] = value
                    return value
            self.misses += 1
            return None

    def has(self, key: str) -> bool:
        """Whether a result is stored under key (not counted as a hit or a miss)."""
        with self._lock:
            if key in self._memory:
                return True
            if self.conn is None:
                return False
            row = self.conn.execute("SELECT 1 FROM results WHERE key=?", (key,)).fetchone()
            return row is not None

    def put_many(self, kind: str, items: dict[str, object]) -> None:
        if not items:
            return
        with self._lock:
            self._memory.update(items)
            if self.conn is not None:
                self.conn.executemany(
                    "INSERT OR REPLACE INTO results(key, kind, value) VALUES (?, ?, ?)",
                    [(k, kind, json.dumps(v)) for k, v in items.items()],
                )
                self.conn.commit()

    def export(
        self, out: Path, kinds: Sequence[str] | None = None, exclude: Sequence[Path] = ()
    ) -> int:
        """Writes the stored results (of ``kinds``, default all but the machine-local file
        digests) to a gzipped JSONL file, one [key, kind, value] per line after a header,
        leaving out those already in the exported files ``exclude`` (a continuation file).
        Returns the number of results written. Keys are hashes: the file holds no prompt."""
        if self.conn is None:
            raise ValueError("a memory-only cache has nothing to export")
        known = {key for path in exclude for key, _, _ in read_export(path)}
        rows = [
            row
            for row in self.conn.execute("SELECT key, kind, value FROM results ORDER BY key")
            if (row[1] in kinds if kinds else row[1] != "sha256") and row[0] not in known
        ]
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(out.name + ".partial")
        # No name and no time in the gzip header: the same results give the same bytes.
        with partial.open("wb") as f, gzip.GzipFile("", "wb", fileobj=f, mtime=0) as raw:
            raw.write((json.dumps({"format": EXPORT_FORMAT, "results": len(rows)}) + "\n").encode())
            for key, kind, value in rows:
                raw.write(f'["{key}", "{kind}", {value}]\n'.encode())
        partial.replace(out)
        return len(rows)

    def import_file(self, path: Path, skip_kinds: Sequence[str] = ()) -> tuple[int, int]:
        """Adds the results of an exported file that are not stored yet (stored ones win),
        leaving out those of ``skip_kinds`` (e.g. "generate", so that a run makes its own
        generations and reuses the rest). Returns (added, already present). A file cut
        short or not an export is refused before anything is added."""
        if self.conn is None:
            raise ValueError("importing needs a cache file (--cache)")
        rows = [row for row in read_export(path) if row[1] not in skip_kinds]
        with self._lock:
            before = self.conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
            self.conn.executemany(
                "INSERT OR IGNORE INTO results(key, kind, value) VALUES (?, ?, ?)",
                [(key, kind, json.dumps(value)) for key, kind, value in rows],
            )
            self.conn.commit()
            after = self.conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        return after - before, len(rows) - (after - before)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def read_export(path: Path) -> list:
    """The [key, kind, value] rows of an exported file; a file cut short or not an export
    raises ValueError."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            header = json.loads(f.readline())
            rows = [json.loads(line) for line in f]
    except (OSError, EOFError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable cache export ({exc})") from exc
    if not isinstance(header, dict) or header.get("format") != EXPORT_FORMAT:
        raise ValueError(f"{path}: not a cache export of this format ({EXPORT_FORMAT})")
    if header.get("results") != len(rows) or any(len(r) != 3 for r in rows):
        raise ValueError(f"{path}: holds {len(rows)} results, its header says "
                         f"{header.get('results')}: cut short or damaged")  # fmt: skip
    return rows


def cached_batch(
    cache: ResultCache,
    kind: str,
    keys: Sequence[str],
    inputs: Sequence,
    compute: Callable[[list], Iterable],
    slice_size: int,
    order: Callable[[object], object] | None = None,
    progress=None,
) -> list:
    """Values for inputs, from the cache where present; the missing ones are computed in
    slices of ``slice_size`` (sorted by ``order`` of their input, so neighbours share prompt
    prefixes) and each slice is stored as soon as it is done: a killed run loses one slice at
    most. Inputs with the same key are computed once."""
    found, todo = _missing(cache, kind, keys, inputs, order, progress)
    for start in range(0, len(todo), slice_size):
        part = todo[start : start + slice_size]
        values = list(compute([inputs[i] for i in part]))
        new = dict(zip([keys[i] for i in part], values, strict=True))
        cache.put_many(kind, new)
        found.update(new)
        if progress is not None:
            progress.done(kind, len(part))
    return [found[key] for key in keys]


def _missing(cache, kind, keys, inputs, order, progress) -> tuple[dict, list[int]]:
    """The cached values by key, and the positions of the inputs to compute (one per
    missing key, sorted by ``order`` of their input); counted on ``progress``."""
    found = {key: cache.get(key) for key in keys}
    todo = list({key: i for i, key in enumerate(keys) if found[key] is None}.values())
    if progress is not None:  # a factscore_local.runtime.progress.Progress
        progress.expect(kind, len(found))
        progress.done(kind, len(found) - len(todo), computed=False)
    if order is not None:
        todo.sort(key=lambda i: order(inputs[i]))
    return found, todo


def cached_stream(
    cache: ResultCache,
    kind: str,
    keys: Sequence[str],
    inputs: Sequence,
    compute: Callable[[list, Callable[[int, object], None]], object],
    store_every: int,
    order: Callable[[object], object] | None = None,
    progress=None,
) -> list:
    """``cached_batch`` for a compute that takes every missing input at once and reports
    each value as it is ready (``compute(inputs, on_done)``, ``on_done(j, value)`` for input
    ``j``, in any order): no slice waits for its slowest input, and values are stored every
    ``store_every`` of them (and when compute ends or fails), so a killed run loses fewer."""
    found, todo = _missing(cache, kind, keys, inputs, order, progress)
    fresh: dict[str, object] = {}

    def store() -> None:
        cache.put_many(kind, fresh)
        found.update(fresh)
        if progress is not None:
            progress.done(kind, len(fresh))
        fresh.clear()

    def done(j: int, value) -> None:
        fresh[keys[todo[j]]] = value
        if len(fresh) >= store_every:
            store()

    try:
        if todo:
            compute([inputs[i] for i in todo], done)
    finally:
        store()
    return [found[key] for key in keys]
