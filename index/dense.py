"""Dense passage embeddings (sentence-transformers) and their FAISS index.

Vectors are cached in the store's ``embeddings`` table, keyed by (model, passage id), so a
killed build resumes where it stopped and pages not embedded at build time are embedded
on first use and kept. The global index is a flat inner-product FAISS index over unit
vectors (cosine), with passage ids as FAISS ids.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from factscore_local.extras import require
from factscore_local.index.chunking import strip_markers

DENSE_INDEX = "dense.faiss"


def passage_input(title: str, passage: str) -> str:
    # As FActScore feeds its GTR retriever: the title, a space, the passage without markers.
    return f"{title} {strip_markers(passage)}"


class Embedder:
    """A sentence-transformers encoder of passages and queries (unit vectors).

    Args:
        spec: ``minilm`` (the embedded default) or a local sentence-transformers directory.
        device: ``auto``, ``cpu`` or ``cuda``.
    """

    def __init__(self, spec: str, device: str = "auto") -> None:
        from factscore_local.index.models import load_sentence_transformer

        self.spec = spec
        self.model = load_sentence_transformer(spec, device=device)
        self.device = str(self.model.device)
        dim_of = (
            getattr(self.model, "get_embedding_dimension", None)
            or self.model.get_sentence_embedding_dimension
        )
        self.dim = int(dim_of())

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        vecs = self.model.encode(
            texts,
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vecs, dtype=np.float32)


def store_vectors(
    conn: sqlite3.Connection, model: str, ids: Iterable[int], vectors: np.ndarray
) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO embeddings(passage_id, model, vector) VALUES (?, ?, ?)",
        [
            (int(i), model, v.astype(np.float32).tobytes())
            for i, v in zip(ids, vectors, strict=True)
        ],
    )


def load_vectors(conn: sqlite3.Connection, model: str, ids: list[int]) -> dict[int, np.ndarray]:
    out: dict[int, np.ndarray] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            f"SELECT passage_id, vector FROM embeddings WHERE model=? AND passage_id IN ({marks})",
            (model, *chunk),
        )
        for pid, blob in rows:
            out[int(pid)] = np.frombuffer(blob, dtype=np.float32)
    return out


def last_embedded_id(conn: sqlite3.Connection, model: str) -> int:
    row = conn.execute(
        "SELECT COALESCE(MAX(passage_id), -1) FROM embeddings WHERE model=?", (model,)
    ).fetchone()
    return int(row[0])


def dense_resume(store, model: str, progress: bool, desc: str = "dense", leads: bool = False):
    """Where a dense build resumes: the last passage id embedded with ``model`` (-1: none)
    and a progress bar over the passages to embed (every one, or each page's lead), started
    at those already embedded."""
    from tqdm import tqdm

    already = store.conn.execute(
        "SELECT COUNT(*) FROM embeddings WHERE model=?", (model,)
    ).fetchone()[0]
    total = store.count_leads() if leads else store.count("passages")
    bar = tqdm(total=total, initial=int(already), unit=" passages",
               desc=desc, disable=not progress, dynamic_ncols=True, mininterval=1.0)  # fmt: skip
    return last_embedded_id(store.conn, model), bar


def build_faiss_index(conn: sqlite3.Connection, model: str, dim: int, path: Path) -> int:
    faiss = require("faiss", "dense", "dense retrieval (FAISS)")

    index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
    cur = conn.execute(
        "SELECT passage_id, vector FROM embeddings WHERE model=? ORDER BY passage_id", (model,)
    )
    n = 0
    while True:
        rows = cur.fetchmany(10000)
        if not rows:
            break
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        vecs = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
        index.add_with_ids(vecs, ids)
        n += len(rows)
    tmp = path.with_name(path.name + ".tmp")
    faiss.write_index(index, str(tmp))
    tmp.replace(path)
    return n


def load_faiss_index(path: Path, device: str = "cpu"):
    """Read a FAISS index; on a GPU device, search it there when faiss-gpu is installed
    (with faiss-cpu it says so once and searches on the CPU)."""
    faiss = require("faiss", "dense", "dense retrieval (FAISS)")

    from factscore_local.runtime.device import is_gpu, resolve_device

    index = faiss.read_index(str(path))
    if not is_gpu(resolve_device(device)):
        return index
    if not hasattr(faiss, "StandardGpuResources") or faiss.get_num_gpus() < 1:
        print("faiss: no GPU build installed (faiss-cpu); searching on the CPU", file=sys.stderr)
        return index
    card = int(device.split(":")[1]) if ":" in device else 0
    return faiss.index_cpu_to_gpu(faiss.StandardGpuResources(), card, index)
