"""Global BM25 over all passages with pyserini (Lucene), offline.

pyserini 0.25 runs on the system's Java 17. Two quirks are handled here: it needs
``JAVA_HOME`` (found from ``java`` on the PATH when unset) and its import fails unless
``OPENAI_API_KEY`` is set to something (no call is ever made).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from factscore_local.extras import require
from factscore_local.index.chunking import strip_markers
from factscore_local.runtime.offline import enforce_offline

BM25_DIR = "bm25"


def prepare_java_env(env: dict | None = None) -> dict:
    env = os.environ if env is None else env
    env.setdefault("OPENAI_API_KEY", "unused-offline")
    if "JAVA_HOME" not in env:
        java = shutil.which("java")
        if java is None:
            raise RuntimeError(
                "the BM25 index needs Java 11+ (pyserini/Lucene); install a JRE "
                "(e.g. apt-get install openjdk-17-jre-headless) or build with --no-bm25"
            )
        env["JAVA_HOME"] = str(Path(java).resolve().parents[1])
    return env


def lucene_document(passage_id: int, title: str, passage: str) -> str:
    # The title is indexed with the passage: global queries name the entity.
    return json.dumps({"id": str(passage_id), "contents": f"{title}\n{strip_markers(passage)}"})


def write_collection(
    rows: Iterable[tuple[int, str, str]], folder: Path, n_files: int, per_file: int
) -> int:
    """Spread passages over files so that each Lucene indexing thread reads its own."""
    folder.mkdir(parents=True, exist_ok=True)
    handles = [(folder / f"part-{i:03d}.jsonl").open("w", encoding="utf-8") for i in range(n_files)]
    n = 0
    try:
        for passage_id, title, passage in rows:
            handles[(n // per_file) % n_files].write(lucene_document(passage_id, title, passage))
            handles[(n // per_file) % n_files].write("\n")
            n += 1
    finally:
        for h in handles:
            h.close()
    return n


_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the kernel SIGKILL the child when its parent dies (Linux).

    Without it a JVM indexing for minutes outlives a builder killed with ``kill -9``. The
    signal fires when the thread that started the child exits, so the child must be started
    from a thread that lives as long as the build (the builder's main thread does).
    """
    if not sys.platform.startswith("linux"):
        return None
    # Looked up here, in the parent: the child only makes the call, between fork and exec.
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return preexec


def run_tied(cmd: list[str], **kwargs) -> int:
    """Runs ``cmd`` to its end and returns its exit status; the child does not outlive us.

    A builder killed outright takes the child with it (see ``_die_with_parent``); one that
    fails or is interrupted while waiting (Ctrl-C, an exception) ends the child first.
    """
    proc = subprocess.Popen(cmd, preexec_fn=_die_with_parent(), **kwargs)
    try:
        return proc.wait()
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def build_lucene_index(collection: Path, index_dir: Path, threads: int, log_path: Path) -> None:
    """Runs pyserini's indexer in a subprocess (its JVM stays out of this process)."""
    tmp = index_dir.with_name(index_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    cmd = [
        sys.executable,
        "-m",
        "pyserini.index.lucene",
        "-collection",
        "JsonCollection",
        "-generator",
        "DefaultLuceneDocumentGenerator",
        "-input",
        str(collection),
        "-index",
        str(tmp),
        "-threads",
        str(threads),
    ]
    env = prepare_java_env(dict(os.environ))
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        returncode = run_tied(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    if returncode != 0:
        raise RuntimeError(f"Lucene indexing failed (exit {returncode}); see {log_path}")
    shutil.rmtree(index_dir, ignore_errors=True)
    tmp.rename(index_dir)  # only a finished index ever has the final name


class LuceneIndex:
    """BM25 top-k over the whole knowledge source."""

    def __init__(self, index_dir: Path) -> None:
        prepare_java_env()
        enforce_offline()
        lucene = require("pyserini.search.lucene", "lucene", "the global BM25 index")

        self.searcher = lucene.LuceneSearcher(str(index_dir))

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        hits = self.searcher.search(query, k=k)
        return [(int(h.docid), float(h.score)) for h in hits]

    def close(self) -> None:
        self.searcher.close()
