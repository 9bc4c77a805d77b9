"""The SQLite store of an index directory.

``documents(title PRIMARY KEY, text)`` is FActScore's own table (passages joined by its
separator), so FActScore's ``DocDB`` can open ``knowledge.db`` as it is. The other tables
serve this project: pages, passage ids (for the global indexes), redirects, bad records,
cached embeddings and the build's checkpoint.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from factscore_local.index.sources import SEPARATOR

STORE_NAME = "knowledge.db"

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (title PRIMARY KEY, text);
CREATE TABLE IF NOT EXISTS pages (
    page_id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,  -- unique through documents' primary key
    title_lower TEXT NOT NULL,
    is_disambiguation INTEGER NOT NULL DEFAULT 0,
    first_passage_id INTEGER NOT NULL,
    n_passages INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS passages (
    passage_id INTEGER PRIMARY KEY,
    page_id INTEGER NOT NULL,
    idx INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS redirects (
    alias TEXT PRIMARY KEY,
    alias_lower TEXT NOT NULL,
    target TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bad_records (
    position INTEGER PRIMARY KEY,
    title TEXT,
    reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS embeddings (
    passage_id INTEGER NOT NULL,
    model TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, passage_id)
);
CREATE TABLE IF NOT EXISTS build_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


# Lookup indexes are built once ingest is done: building an index over sorted keys is far
# cheaper than keeping it up to date through millions of inserts in random title order.
LOOKUP_INDEXES = """
CREATE INDEX IF NOT EXISTS pages_by_title ON pages(title);
CREATE INDEX IF NOT EXISTS pages_by_lower_title ON pages(title_lower);
CREATE INDEX IF NOT EXISTS redirects_by_lower_alias ON redirects(alias_lower);
"""


def connect(path: Path, readonly: bool = False) -> sqlite3.Connection:
    if readonly:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    else:
        conn = sqlite3.connect(path, check_same_thread=False)
        # WAL keeps a killed writer's committed batches and lets readers work alongside.
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        # Checkpoint the WAL less often: each checkpoint rewrites scattered index pages.
        conn.execute("PRAGMA wal_autocheckpoint=16384")
        conn.executescript(SCHEMA)
    return conn


class Store:
    """Writes pages in batches; each batch commits together with the source position."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = connect(path)
        row = self.conn.execute("SELECT COALESCE(MAX(passage_id), -1) FROM passages").fetchone()
        self.next_passage_id = int(row[0]) + 1

    # --- checkpoint -------------------------------------------------------------
    def get_state(self, key: str, default=None):
        row = self.conn.execute("SELECT value FROM build_state WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def set_state(self, key: str, value) -> None:
        self.conn.execute(
            "INSERT INTO build_state(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, json.dumps(value)),
        )

    # --- writes (call inside a batch, then commit_batch) -------------------------
    def add_page(self, title: str, passages: list[str], is_disambiguation: bool) -> bool:
        """False (nothing written) when the title is already stored."""
        cur = self.conn.execute(
            "INSERT INTO documents(title, text) VALUES (?, ?) ON CONFLICT(title) DO NOTHING",
            (title, SEPARATOR.join(passages)),
        )
        if cur.rowcount == 0:
            return False
        first = self.next_passage_id
        cur = self.conn.execute(
            "INSERT INTO pages(title, title_lower, is_disambiguation, first_passage_id, "
            "n_passages) VALUES (?, ?, ?, ?, ?)",
            (title, title.lower(), int(is_disambiguation), first, len(passages)),
        )
        page_id = cur.lastrowid
        self.conn.executemany(
            "INSERT INTO passages(passage_id, page_id, idx) VALUES (?, ?, ?)",
            [(first + i, page_id, i) for i in range(len(passages))],
        )
        self.next_passage_id += len(passages)
        return True

    def add_redirect(self, alias: str, target: str) -> bool:
        cur = self.conn.execute(
            "INSERT INTO redirects(alias, alias_lower, target) VALUES (?, ?, ?) "
            "ON CONFLICT(alias) DO NOTHING",
            (alias, alias.lower(), target),
        )
        return cur.rowcount > 0

    def add_bad(self, position: int, title: str, reason: str) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO bad_records(position, title, reason) VALUES (?, ?, ?)",
            (position, title, reason),
        )

    def commit_batch(self, next_position: int, counts: dict) -> None:
        self.set_state("next_position", next_position)
        self.set_state("counts", counts)
        self.conn.commit()

    # --- reads used by later stages ---------------------------------------------
    def count(self, table: str) -> int:
        return int(self.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

    def iter_passages(self, after_id: int = -1, batch: int = 2000, leads_only: bool = False):
        """(passage_id, title, passage_text) in id order, page by page; with ``leads_only``,
        each page's first passage alone."""
        cur = self.conn.execute(
            "SELECT p.title, p.first_passage_id, d.text FROM pages p "
            "JOIN documents d ON d.title = p.title "
            "WHERE p.first_passage_id + p.n_passages - 1 > ? ORDER BY p.page_id",
            (after_id,),
        )
        while True:
            rows = cur.fetchmany(batch)
            if not rows:
                return
            for title, first, text in rows:
                for i, passage in enumerate(text.split(SEPARATOR)):
                    if first + i > after_id:
                        yield first + i, title, passage
                    if leads_only:
                        break

    def count_leads(self) -> int:
        """Pages with at least one passage (what a leads-only dense stage embeds)."""
        return self.conn.execute("SELECT COUNT(*) FROM pages WHERE n_passages > 0").fetchone()[0]

    def create_lookup_indexes(self) -> None:
        self.conn.executescript(LOOKUP_INDEXES)
        self.conn.commit()

    def close(self) -> None:
        self.conn.commit()
        self.conn.close()
