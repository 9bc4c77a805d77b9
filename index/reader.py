"""Read an index directory: pages, passages, title lookup, BM25 and dense search.

This is the API the estimator uses::

    ks = KnowledgeSource("my-index")
    ks.resolve_title("abraham lincoln")          # -> Resolution(title="Abraham Lincoln", ...)
    ks.search_page("Abraham Lincoln", "born in Kentucky", k=5)          # FActScore's BM25
    ks.search_page("Abraham Lincoln", "born in Kentucky", k=5, method="dense")
    ks.search("president assassinated 1865", k=10)                      # global BM25
"""

from __future__ import annotations

import difflib
import threading
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from factscore_local.index.chunking import strip_markers
from factscore_local.index.manifest import read_manifest
from factscore_local.index.sources import SEPARATOR
from factscore_local.index.store import STORE_NAME, connect


def normalize_title(title: str) -> str:
    """NFKC (full-width letters, non-breaking spaces...), underscores as spaces, and runs of
    whitespace of any kind collapsed to one space, ends stripped."""
    return " ".join(unicodedata.normalize("NFKC", title).replace("_", " ").split())


class UnknownTitleError(KeyError):
    """A title that is neither a page, a redirect nor a case variant of one."""

    def __init__(self, title: str, suggestions: list[str]) -> None:
        self.title = title
        self.suggestions = suggestions
        hint = f"; did you mean: {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"no page titled {title!r} in the knowledge source{hint}")

    def __str__(self) -> str:
        return self.args[0]


@dataclass(frozen=True)
class Passage:
    passage_id: int
    title: str
    idx: int  # position within its page
    text: str  # as stored, with FActScore's <s>/</s> section markers

    @property
    def clean_text(self) -> str:
        return strip_markers(self.text).strip()


@dataclass(frozen=True)
class Hit:
    passage: Passage
    score: float
    rank: int


@dataclass
class Resolution:
    query: str
    title: str | None  # the page's title, None when unknown
    # "exact", "normalized" (exact once Unicode and whitespace are normalised), "redirect",
    # "case-insensitive" or "unknown"
    via: str
    suggestions: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Page:
    title: str
    passages: list[Passage]
    is_disambiguation: bool


class KnowledgeSource:
    """A built index: titles, pages' passages, BM25 and dense search.

    Args:
        path: the folder ``fscore build-index`` wrote.
        device: where the dense encoder and FAISS run (``auto``, ``cpu``, ``cuda``).
    """

    def __init__(self, path: str | Path, device: str = "auto") -> None:
        self.path = Path(path)
        self.device = device
        self.manifest = read_manifest(self.path)
        self.conn = connect(self.path / STORE_NAME, readonly=True)
        self._lock = threading.Lock()
        self._lucene = None
        self._faiss = None
        self._embedders: dict[str, object] = {}
        self._page_bm25 = lru_cache(maxsize=256)(self._build_page_bm25)

    # --- titles ---------------------------------------------------------------------
    def resolve_title(self, title: str, n_suggestions: int = 5) -> Resolution:
        # Each step is an indexed lookup. The stored keys are the titles as the source spells
        # them (and their lower case), so the query is tried as given first, then normalised.
        query = title.strip().replace("_", " ")
        normal = normalize_title(title)
        if self._page_row(query):
            return Resolution(title, query, "exact")
        target = self._redirect(query, exact=True)
        if target:
            return Resolution(title, target, "redirect")
        if normal != query:
            if self._page_row(normal):
                return Resolution(title, normal, "normalized")
            target = self._redirect(normal, exact=True)
            if target:
                return Resolution(title, target, "redirect")
        lowers = list(dict.fromkeys((query.lower(), normal.lower())))
        for lower in lowers:
            row = self.conn.execute(
                "SELECT title FROM pages WHERE title_lower=? ORDER BY page_id LIMIT 1", (lower,)
            ).fetchone()
            if row:
                return Resolution(title, row[0], "case-insensitive")
        for lower in lowers:
            target = self._redirect(lower, exact=False)
            if target:
                return Resolution(title, target, "redirect")
        return Resolution(title, None, "unknown", self.suggest(normal, n_suggestions))

    def _redirect(self, alias: str, exact: bool) -> str | None:
        sql = "SELECT target FROM redirects WHERE " + ("alias=?" if exact else "alias_lower=?")
        row = self.conn.execute(sql, (alias if exact else alias.lower(),)).fetchone()
        if not row:
            return None
        # The target may itself differ in case or spacing or be a section link; resolve it
        # to a page.
        target = row[0].split("#")[0].strip()
        if self._page_row(target):
            return target
        for lower in dict.fromkeys((target.lower(), normalize_title(target).lower())):
            found = self.conn.execute(
                "SELECT title FROM pages WHERE title_lower=? LIMIT 1", (lower,)
            ).fetchone()
            if found:
                return found[0]
        return None

    def suggest(self, title: str, n: int = 5) -> list[str]:
        """Near misses: titles sharing a prefix or a word, ranked by string similarity."""
        title = normalize_title(title)
        low = title.lower()
        candidates: set[str] = set()
        probes = {low[:3], low[:1]} | {w[:4] for w in low.split() if len(w) >= 3}
        for probe in probes:
            if not probe:
                continue
            for table, col, out in (
                ("pages", "title_lower", "title"),
                ("redirects", "alias_lower", "alias"),
            ):
                rows = self.conn.execute(
                    f"SELECT {out} FROM {table} WHERE {col} >= ? AND {col} < ? LIMIT 2000",
                    (probe, probe + "\uffff"),
                )
                candidates.update(r[0] for r in rows)
        if self.has_bm25:
            for hit in self.search(title, k=20):
                candidates.add(hit.passage.title)
        scored = sorted(
            candidates,
            key=lambda c: -difflib.SequenceMatcher(None, low, c.lower()).ratio(),
        )
        return [c for c in scored if difflib.SequenceMatcher(None, low, c.lower()).ratio() > 0.5][
            :n
        ]

    def titles(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT title FROM pages ORDER BY page_id")]

    # --- pages and passages ---------------------------------------------------------------
    def _page_row(self, title: str):
        return self.conn.execute(
            "SELECT p.title, p.first_passage_id, p.is_disambiguation, d.text FROM pages p "
            "JOIN documents d ON d.title = p.title WHERE p.title=?",
            (title,),
        ).fetchone()

    def get_page(self, title: str) -> Page:
        """The page for a title (redirects and case variants resolved)."""
        resolution = self.resolve_title(title)
        if resolution.title is None:
            raise UnknownTitleError(title, resolution.suggestions)
        name, first, is_dab, text = self._page_row(resolution.title)
        passages = [Passage(first + i, name, i, psg) for i, psg in enumerate(text.split(SEPARATOR))]
        return Page(name, passages, bool(is_dab))

    def get_passages(self, title: str) -> list[Passage]:
        return self.get_page(title).passages

    def passage(self, passage_id: int) -> Passage:
        row = self.conn.execute(
            "SELECT pg.title, ps.idx, d.text FROM passages ps "
            "JOIN pages pg ON pg.page_id = ps.page_id JOIN documents d ON d.title = pg.title "
            "WHERE ps.passage_id=?",
            (passage_id,),
        ).fetchone()
        if row is None:
            raise KeyError(f"no passage {passage_id}")
        title, idx, text = row
        return Passage(passage_id, title, idx, text.split(SEPARATOR)[idx])

    # --- retrieval within one page ---------------------------------------------------------
    def _build_page_bm25(self, title: str):
        from rank_bm25 import BM25Okapi

        passages = self.get_passages(title)
        # FActScore's tokenisation: markers removed, whitespace split, case kept.
        return passages, BM25Okapi([strip_markers(p.text).split() for p in passages])

    def search_page(self, title: str, query: str, k: int = 5, method: str = "bm25") -> list[Hit]:
        """Top-k passages of one page, as FActScore retrieves them (query = topic + fact)."""
        if method == "bm25":
            passages, bm25 = self._page_bm25(self.resolve_or_raise(title))
            scores = bm25.get_scores(query.split())
        elif method == "dense":
            passages = self.get_passages(title)
            scores = self._dense_scores(query, passages)
        else:
            raise ValueError(f"unknown retrieval method {method!r} (bm25 or dense)")
        # Same ordering call as FActScore, so ties break the same way.
        order = np.argsort(-np.asarray(scores))[:k]
        return [Hit(passages[i], float(scores[i]), r) for r, i in enumerate(order)]

    def resolve_or_raise(self, title: str) -> str:
        resolution = self.resolve_title(title)
        if resolution.title is None:
            raise UnknownTitleError(title, resolution.suggestions)
        return resolution.title

    # --- global retrieval ----------------------------------------------------------------
    @property
    def has_bm25(self) -> bool:
        return bool(self.manifest.get("indexes", {}).get("bm25"))

    @property
    def has_dense(self) -> bool:
        return bool(self.manifest.get("indexes", {}).get("dense"))

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Global BM25 (Lucene) over every passage."""
        if not self.has_bm25:
            raise RuntimeError(f"{self.path} has no BM25 index (built with --no-bm25)")
        with self._lock:
            if self._lucene is None:
                from factscore_local.index.lucene import LuceneIndex

                self._lucene = LuceneIndex(self.path / self.manifest["indexes"]["bm25"])
        hits = self._lucene.search(query, k)
        return [Hit(self.passage(pid), score, r) for r, (pid, score) in enumerate(hits)]

    def search_dense(self, query: str, k: int = 10) -> list[Hit]:
        """Global dense search over the passages embedded at build time."""
        if not self.has_dense:
            raise RuntimeError(f"{self.path} has no dense index (built with --dense none)")
        with self._lock:
            if self._faiss is None:
                from factscore_local.index.dense import load_faiss_index

                self._faiss = load_faiss_index(
                    self.path / self.manifest["indexes"]["dense"], device=self.device
                )
        vector = self._embedder().encode([query])
        scores, ids = self._faiss.search(vector, k)
        return [
            Hit(self.passage(int(pid)), float(s), r)
            for r, (s, pid) in enumerate(zip(scores[0], ids[0], strict=True))
            if pid >= 0
        ]

    # --- dense helpers -----------------------------------------------------------------
    def dense_spec(self) -> str:
        model = self.manifest.get("models", {}).get("dense") or {}
        return model.get("spec") or "minilm"

    def _embedder(self, spec: str | None = None):
        from factscore_local.index.dense import Embedder

        spec = spec or self.dense_spec()
        if spec not in self._embedders:
            self._embedders[spec] = Embedder(spec, device=self.device)
        return self._embedders[spec]

    def _dense_scores(self, query: str, passages: list[Passage]) -> np.ndarray:
        """Embeds the page's passages on first use and caches them in a side store."""
        from factscore_local.index.dense import load_vectors, passage_input, store_vectors

        embedder = self._embedder()
        spec = embedder.spec
        ids = [p.passage_id for p in passages]
        cache = self._vector_cache()
        found = load_vectors(self.conn, spec, ids)
        found.update(load_vectors(cache, spec, [i for i in ids if i not in found]))
        missing = [p for p in passages if p.passage_id not in found]
        if missing:
            vectors = embedder.encode([passage_input(p.title, p.text) for p in missing])
            with self._lock:
                store_vectors(cache, spec, [p.passage_id for p in missing], vectors)
                cache.commit()
            found.update({p.passage_id: v for p, v in zip(missing, vectors, strict=True)})
        matrix = np.stack([found[i] for i in ids])
        return matrix @ embedder.encode([query])[0]

    def _vector_cache(self):
        # The store is opened read-only; vectors embedded on demand go to a side file.
        if not hasattr(self, "_cache_conn"):
            import sqlite3

            from factscore_local.index.store import SCHEMA

            self._cache_conn = sqlite3.connect(
                self.path / "dense-cache.db", check_same_thread=False
            )
            self._cache_conn.execute("PRAGMA journal_mode=WAL")
            self._cache_conn.executescript(SCHEMA)
        return self._cache_conn

    def close(self) -> None:
        if self._lucene is not None:
            self._lucene.close()
        self.conn.close()
