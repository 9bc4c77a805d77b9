"""What an LM's weights are called by the result cache and the run record: their name,
size and content digest (not their mtime: a reinstalled model keeps its results)."""

from __future__ import annotations

from pathlib import Path

from factscore_local.runtime.cache import ResultCache, content_sha256


def _files(path: Path) -> list[Path]:
    return [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())


def model_identity(path: Path, backend: str, cache: ResultCache) -> str:
    """What the cache keys an LM's results by: its name, size and digest, and the backend."""
    size = sum(p.stat().st_size for p in _files(path))
    return f"{path.name}|{size}|sha256:{content_sha256(path, cache)}|{backend}"


def lm_fingerprint(path: Path, backend: str, cache: ResultCache) -> dict:
    """Name, size and sha256 of an LM: a GGUF file, or a directory (its files hashed in
    name order). The digest is computed once per file identity and kept in the cache."""
    size = sum(p.stat().st_size for p in _files(path))
    return {"name": path.name, "path": str(path), "size": size,
            "sha256": content_sha256(path, cache), "backend": backend}  # fmt: skip
