"""The reader API: title lookup with suggestions, dense search, lazy page embeddings."""

from __future__ import annotations

import json
import sqlite3

import pytest

from factscore_local.index.builder import BuildOptions, build_index
from factscore_local.index.reader import KnowledgeSource, UnknownTitleError

PAGES = [
    {
        "title": "Marie Curie",
        "text": [
            "Marie Curie Marie Salomea Skłodowska-Curie was a Polish and naturalised-French "
            "physicist and chemist who conducted pioneering research on radioactivity.",
            "Awards. She was the first woman to win a Nobel Prize and the only person to win "
            "Nobel Prizes in two scientific fields, physics and chemistry.",
        ],
    },
    {
        "title": "Usain Bolt",
        "text": "Usain Bolt Usain St Leo Bolt is a Jamaican retired "
        "sprinter, widely considered to be the greatest sprinter of all time. He holds the world "
        "records in the 100 metres and 200 metres.",
    },
    {
        "title": "Mount Everest",
        "text": "Mount Everest Mount Everest is Earth's highest mountain "
        "above sea level, located in the Mahalangur Himal sub-range of the Himalayas.",
    },
]


@pytest.fixture(scope="module")
def small_source(tmp_path_factory):
    src = tmp_path_factory.mktemp("src") / "pages.jsonl"
    src.write_text("".join(json.dumps(p) + "\n" for p in PAGES))
    return src


def test_lookup_miss_with_suggestions(xml_index):
    ks = KnowledgeSource(xml_index)
    resolution = ks.resolve_title("Abrahm Lincon")
    assert resolution.title is None and resolution.via == "unknown"
    assert resolution.suggestions[0] == "Abraham Lincoln"
    with pytest.raises(UnknownTitleError, match="did you mean: Abraham Lincoln"):
        ks.get_page("Abrahm Lincon")
    with pytest.raises(UnknownTitleError):
        ks.search_page("Nobody Atall Zzyzx", "fact", k=5)


def test_dense_built_at_index_time(small_source, tmp_path):
    out = tmp_path / "dense"
    manifest = build_index(BuildOptions(source=small_source, out=out, bm25=False, progress=False))
    assert manifest["models"]["dense"] == {"spec": "minilm", "dim": 384, "leads_only": False}
    assert manifest["indexes"]["dense"] == "dense.faiss"
    ks = KnowledgeSource(out)
    assert ks.search_dense("fastest runner in the world", k=1)[0].passage.title == "Usain Bolt"
    assert ks.search_dense("tallest peak on the planet", k=1)[0].passage.title == "Mount Everest"
    hits = ks.search_page("Marie Curie", "Marie Curie won two Nobel Prizes", k=2, method="dense")
    assert hits[0].passage.title == "Marie Curie" and len(hits) == 1


def test_dense_leads_embed_each_pages_first_passage_then_all_on_request(small_source, tmp_path):
    from dataclasses import replace

    from factscore_local.index.store import STORE_NAME

    out = tmp_path / "leads"
    opts = BuildOptions(source=small_source, out=out, bm25=False, progress=False,
                        max_tokens=24, dense_leads=True)  # fmt: skip
    manifest = build_index(opts)
    assert manifest["models"]["dense"]["leads_only"] is True

    def counts() -> tuple[int, int]:
        with sqlite3.connect(out / STORE_NAME) as conn:
            embedded = conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
            return embedded, conn.execute("SELECT COUNT(*) FROM passages").fetchone()[0]

    embedded, passages = counts()
    assert embedded == len(PAGES) < passages  # one vector per page: its first passage
    ks = KnowledgeSource(out)
    assert ks.search_dense("fastest runner in the world", k=1)[0].passage.title == "Usain Bolt"
    first = ks.search_dense("who studied radioactivity?", k=3)
    assert all(h.passage.passage_id == ks.get_page(h.passage.title).passages[0].passage_id
               for h in first)  # fmt: skip
    ks.close()
    build_index(replace(opts, dense_leads=False))  # the other scope: every passage
    assert counts() == (passages, passages)


def test_pages_embedded_on_first_use_and_cached(small_source, tmp_path):
    out = tmp_path / "lazy"
    build_index(BuildOptions(source=small_source, out=out, dense=None, bm25=False, progress=False))
    ks = KnowledgeSource(out)
    assert not ks.has_dense
    with pytest.raises(RuntimeError, match="no dense index"):
        ks.search_dense("anything")
    first = ks.search_page("Mount Everest", "highest mountain", k=1, method="dense")
    cache = sqlite3.connect(out / "dense-cache.db")
    n_cached = cache.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
    assert n_cached == len(ks.get_passages("Mount Everest"))
    again = KnowledgeSource(out).search_page(
        "Mount Everest", "highest mountain", k=1, method="dense"
    )
    assert again[0].passage == first[0].passage
    assert abs(again[0].score - first[0].score) < 1e-5
