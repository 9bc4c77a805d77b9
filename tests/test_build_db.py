"""Importing FActScore's own DB format keeps every passage exactly as it is."""

from __future__ import annotations

import json
import sqlite3

from factscore_local.index.reader import KnowledgeSource
from factscore_local.index.sources import SEPARATOR
from tests.conftest import DEV_DB, require


def test_every_passage_identical(db_index):
    src = sqlite3.connect(require(DEV_DB))
    ks = KnowledgeSource(db_index)
    rows = src.execute("SELECT title, text FROM documents").fetchall()
    assert len(rows) == 98
    for title, text in rows:
        expected = text.split(SEPARATOR)
        assert [p.text for p in ks.get_passages(title)] == expected
    manifest = json.loads((db_index / "manifest.json").read_text())
    assert manifest["counts"]["pages"] == 98
    assert manifest["counts"]["passages"] == sum(len(t.split(SEPARATOR)) for _, t in rows)


def test_documents_table_readable_as_factscore_does(db_index):
    """FActScore's DocDB runs exactly this query on its .db file."""
    src = sqlite3.connect(require(DEV_DB))
    ours = sqlite3.connect(db_index / "knowledge.db")
    for title, text in src.execute("SELECT title, text FROM documents"):
        got = ours.execute("SELECT text FROM documents WHERE title = ?", (title,)).fetchall()
        assert got == [(text,)]


def test_passage_ids_round_trip(db_index):
    ks = KnowledgeSource(db_index)
    page = ks.get_page("Doug Sheehan")
    for p in page.passages:
        assert ks.passage(p.passage_id) == p


def test_global_bm25_on_dev_db(db_index):
    ks = KnowledgeSource(db_index)
    hits = ks.search("Knots Landing Ben Gibson actor", k=3)
    assert hits[0].passage.title == "Doug Sheehan"
