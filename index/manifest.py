"""``manifest.json``: what an index directory was built from, with what, and how it went."""

from __future__ import annotations

import json
import platform
import time
from importlib import metadata
from pathlib import Path

MANIFEST = "manifest.json"
_PACKAGES = (
    "factscore-local",
    "pyserini",
    "transformers",
    "tokenizers",
    "sentence-transformers",
    "faiss-cpu",
    "torch",
    "mwparserfromhell",
    "rank-bm25",
)


def _versions() -> dict:
    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def write_manifest(out: Path, store, source: Path, opts, rss: dict) -> dict:
    from factscore_local.index.dense import DENSE_INDEX
    from factscore_local.index.lucene import BM25_DIR

    counts = store.get_state("counts") or {}
    settings = store.get_state("settings") or {}
    bad_examples = [
        {"position": p, "title": t, "reason": r}
        for p, t, r in store.conn.execute(
            "SELECT position, title, reason FROM bad_records ORDER BY position LIMIT 20"
        )
    ]
    dense_state = store.get_state("dense_model")
    timings = store.get_state("timings", {})
    manifest = {
        "format_version": 1,
        "store": "knowledge.db",
        "source": {
            "path": str(source),
            "format": settings.get("format"),
            "size_bytes": source.stat().st_size,
            "sha256": store.get_state("source_sha256"),
        },
        "tokenizer": settings.get("tokenizer"),
        "max_tokens": settings.get("max_tokens"),
        "models": {"dense": dense_state},
        "indexes": {
            "bm25": BM25_DIR if store.get_state("bm25_done", False) else None,
            "dense": DENSE_INDEX if store.get_state("dense_done") else None,
        },
        "counts": counts,
        "bad_examples": bad_examples,
        "complete": not counts.get("source_truncated", False),
        "versions": _versions(),
        "timings": {k: round(v, 2) for k, v in timings.items()},
        "peak_rss_mb": rss,
        "started": store.get_state("started"),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    tmp = out / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(out / MANIFEST)
    return manifest


def read_manifest(out: Path) -> dict:
    path = out / MANIFEST
    if not path.exists():
        raise FileNotFoundError(f"{out} is not an index directory (no {MANIFEST}); run build-index")
    return json.loads(path.read_text(encoding="utf-8"))
