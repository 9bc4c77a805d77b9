"""An index build touches only what is its own: --out, rejected sources, the Lucene child.

Also title lookup through Unicode and whitespace variants (full-width letters, non-breaking
and doubled spaces).
"""

from __future__ import annotations

import bz2
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from factscore_local.index.builder import BuildError, BuildOptions, build_index, is_index_dir
from factscore_local.index.lucene import run_tied
from factscore_local.index.reader import KnowledgeSource, normalize_title
from factscore_local.index.sources import SourceError
from tests.conftest import DEV_DB, require


def build(source: Path, out: Path, overwrite: bool = False, bm25: bool = False) -> dict:
    return build_index(
        BuildOptions(
            source=source,
            out=out,
            dense=None,
            bm25=bm25,
            progress=False,
            overwrite=overwrite,
        )
    )


def build_cmd(source: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "factscore_local.cli",
        "build-index",
        "--source",
        str(source),
        "--out",
        str(out),
        "--dense",
        "none",
        "--quiet",
        *extra,
    ]


def cli_build(source: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(build_cmd(source, out, *extra), capture_output=True, text=True)


def snapshot(folder: Path) -> dict:
    """Every entry under ``folder`` with its kind, size, modification time and content hash."""
    if not folder.exists():
        return {}
    state = {}
    for path in sorted(folder.rglob("*")):
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
        state[str(path.relative_to(folder))] = (path.is_dir(), st.st_size, st.st_mtime_ns, digest)
    return state


def page_titles(index: Path) -> set[str]:
    conn = sqlite3.connect(index / "knowledge.db")
    try:
        return {r[0] for r in conn.execute("SELECT title FROM pages")}
    finally:
        conn.close()


@pytest.fixture
def precious_dir(tmp_path) -> Path:
    """A directory of a user's files, not an index."""
    d = tmp_path / "d"
    (d / "sub").mkdir(parents=True)
    (d / "notes.txt").write_text("precious\n")
    (d / "sub" / "data.csv").write_text("a,b\n1,2\n")
    return d


@pytest.fixture
def small_jsonl(tmp_path) -> Path:
    src = tmp_path / "pages.jsonl"
    src.write_text(
        json.dumps({"title": "Solo Page", "text": "Solo Page is the only page of this source."})
        + "\n"
    )
    return src


# --- --overwrite and a directory that is not an index -----------------------------------


def test_overwrite_refuses_a_directory_that_is_not_an_index(precious_dir, small_jsonl):
    before = snapshot(precious_dir)
    with pytest.raises(BuildError, match="not an index made by build-index") as err:
        build(small_jsonl, precious_dir, overwrite=True)
    assert str(precious_dir) in str(err.value) and "Nothing was deleted" in str(err.value)
    assert "notes.txt" in str(err.value)
    assert snapshot(precious_dir) == before

    proc = cli_build(small_jsonl, precious_dir, "--no-bm25", "--overwrite")
    assert proc.returncode == 2
    assert "--overwrite refused" in proc.stderr and str(precious_dir) in proc.stderr
    assert snapshot(precious_dir) == before
    assert (precious_dir / "notes.txt").read_text() == "precious\n"


def test_no_build_into_a_directory_that_is_not_an_index(precious_dir, small_jsonl):
    before = snapshot(precious_dir)
    with pytest.raises(BuildError, match="is not empty and is not an index") as err:
        build(small_jsonl, precious_dir)
    assert "Nothing was written" in str(err.value)
    assert snapshot(precious_dir) == before


def test_a_foreign_knowledge_db_is_not_taken_for_an_index(tmp_path, small_jsonl):
    # A user's own FActScore DB that happens to be called knowledge.db: not ours to delete.
    d = tmp_path / "d"
    d.mkdir()
    shutil.copyfile(require(DEV_DB), d / "knowledge.db")
    before = snapshot(d)
    assert not is_index_dir(d)
    with pytest.raises(BuildError, match="--overwrite refused"):
        build(small_jsonl, d, overwrite=True)
    assert snapshot(d) == before


def test_out_that_is_a_file_is_refused(tmp_path, small_jsonl):
    out = tmp_path / "out"
    out.write_text("a file\n")
    with pytest.raises(BuildError, match="not a directory"):
        build(small_jsonl, out, overwrite=True)
    assert out.read_text() == "a file\n"


def test_empty_directory_is_built_into(tmp_path, small_jsonl):
    out = tmp_path / "empty"
    out.mkdir()
    assert build(small_jsonl, out)["counts"]["pages"] == 1


def test_overwrite_replaces_our_index_and_keeps_other_files(tmp_path, small_jsonl):
    dev_db = require(DEV_DB)
    out = tmp_path / "idx"
    build(small_jsonl, out, bm25=True)  # a full build: store, manifest, bm25/, logs/
    assert (out / "bm25").is_dir() and (out / "logs" / "bm25.log").is_file()
    (out / "notes.txt").write_text("mine\n")
    (out / "dense-cache.db").write_bytes(b"")  # vectors keyed by the old passage ids

    proc = cli_build(dev_db, out, "--no-bm25")
    assert proc.returncode == 2 and "another source" in proc.stderr

    manifest = build(dev_db, out, overwrite=True)
    assert manifest["source"]["path"] == str(dev_db.resolve())
    assert manifest["indexes"]["bm25"] is None
    titles = page_titles(out)
    assert "Solo Page" not in titles and len(titles) == manifest["counts"]["pages"] > 50
    assert not (out / "bm25").exists() and not (out / "logs").exists()
    assert not (out / "dense-cache.db").exists()
    assert (out / "notes.txt").read_text() == "mine\n"
    assert KnowledgeSource(out).resolve_title("solo page").title is None


def test_overwrite_of_an_interrupted_build(tmp_path, small_jsonl):
    # A build killed before it wrote manifest.json is still ours (its store says so).
    out = tmp_path / "idx"
    build(small_jsonl, out)
    (out / "manifest.json").unlink()
    assert is_index_dir(out)
    build(require(DEV_DB), out, overwrite=True)
    assert "Solo Page" not in page_titles(out)


def test_overwrite_refuses_to_delete_its_own_source(tmp_path, small_jsonl):
    out = tmp_path / "idx"
    build(small_jsonl, out)
    inner = out / "pages.jsonl"
    shutil.copyfile(small_jsonl, inner)
    before = snapshot(out)
    with pytest.raises(BuildError, match="lies inside"):
        build(inner, out, overwrite=True)
    assert snapshot(out) == before


# --- a source rejected before the build starts ---------------------------------------------


def _sqlite_without_documents(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()


REJECTED = {
    "sqlite-without-documents": (_sqlite_without_documents, "no 'documents' table"),
    "sqlite-header-then-garbage": (
        lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\x07" * 4000),
        "not a readable SQLite database",
    ),
    "png": (lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n0000"), "not a supported source"),
    "bz2-not-mediawiki": (
        lambda p: p.write_bytes(bz2.compress(b"hello world")),
        "does not hold a MediaWiki",
    ),
}


@pytest.mark.parametrize("kind", sorted(REJECTED))
def test_rejected_source_leaves_out_as_it_was(tmp_path, kind):
    make, message = REJECTED[kind]
    bad = tmp_path / "bad.src"
    make(bad)

    missing = tmp_path / "missing"
    with pytest.raises(SourceError, match=message):
        build(bad, missing)
    assert not missing.exists()

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SourceError, match=message):
        build(bad, empty)
    assert list(empty.iterdir()) == []
    # The directory is still free for a correct build (it was refused as "another source").
    assert build(require(DEV_DB), empty)["counts"]["pages"] > 50

    # Nor does --overwrite delete an index for a source it then rejects.
    before = snapshot(empty)
    proc = cli_build(bad, empty, "--no-bm25", "--overwrite")
    assert proc.returncode == 2 and message in proc.stderr
    assert snapshot(empty) == before


# --- title lookup: Unicode and whitespace --------------------------------------------------


def test_normalize_title():
    assert normalize_title("ＡＬＢＥＲＴ ＥＩＮＳＴＥＩＮ") == "ALBERT EINSTEIN"
    assert normalize_title("\u00a0Albert\u00a0\u00a0Einstein\u3000") == "Albert Einstein"
    assert normalize_title(" Albert_Einstein\t") == "Albert Einstein"


@pytest.mark.parametrize(
    ("query", "via"),
    [
        ("Albert Einstein", "exact"),
        ("Albert_Einstein", "exact"),
        ("albert einstein", "case-insensitive"),
        ("ＡＬＢＥＲＴ ＥＩＮＳＴＥＩＮ", "case-insensitive"),
        ("Ａｌｂｅｒｔ\u3000Ｅｉｎｓｔｅｉｎ", "normalized"),
        ("Albert\u00a0Einstein", "normalized"),
        ("Albert  Einstein", "normalized"),
        ("  Albert \u2002 Einstein\n", "normalized"),
        ("albert\u00a0\u00a0einstein", "case-insensitive"),
    ],
)
def test_title_variants_resolve(xml_index, query, via):
    resolution = KnowledgeSource(xml_index).resolve_title(query)
    assert (resolution.title, resolution.via) == ("Albert Einstein", via)


def test_redirect_through_normalisation(xml_index):
    ks = KnowledgeSource(xml_index)
    assert (ks.resolve_title("AynRand").title, ks.resolve_title("AynRand").via) == (
        "Ayn Rand",
        "redirect",
    )
    for query in ("ＡｙｎＲａｎｄ", "\u00a0AynRand ", "ａｙｎｒａｎｄ"):
        resolution = ks.resolve_title(query)
        assert (resolution.title, resolution.via) == ("Ayn Rand", "redirect"), query
    assert ks.get_page("Ａｂｒａｈａｍ\u00a0Ｌｉｎｃｏｌｎ").title == "Abraham Lincoln"


def test_full_width_miss_still_gets_suggestions(xml_index):
    ks = KnowledgeSource(xml_index)
    resolution = ks.resolve_title("ＡＢＲＡＨＭ ＬＩＮＣＯＮ")
    assert resolution.title is None and resolution.via == "unknown"
    assert resolution.suggestions[0] == "Abraham Lincoln"
    assert ks.suggest("Ａｌｂｅｒｔ\u00a0Ｅｉｎｓｔｅｎ")[0] == "Albert Einstein"


# --- the Lucene child ----------------------------------------------------------------------


def _is_gone(proc: psutil.Process) -> bool:
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _replicated_dev_db(path: Path, copies: int) -> Path:
    """The dev DB's real pages, ``copies`` times under suffixed titles: enough passages that
    Lucene indexes for seconds, so a child that outlives its builder would be seen working."""
    dev = sqlite3.connect(f"file:{require(DEV_DB)}?mode=ro", uri=True)
    rows = dev.execute("SELECT title, text FROM documents ORDER BY rowid").fetchall()
    dev.close()
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE documents (title PRIMARY KEY, text)")
    conn.executemany(
        "INSERT INTO documents VALUES (?, ?)",
        [(f"{t} ({i})" if i else t, text) for i in range(copies) for t, text in rows],
    )
    conn.commit()
    conn.close()
    return path


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_lucene_child_dies_with_a_killed_builder(tmp_path):
    source = _replicated_dev_db(tmp_path / "dev-x30.db", copies=30)
    out = tmp_path / "idx"
    build(source, out)  # ingest done here, so the run below goes straight to BM25
    log = out / "logs" / "bm25.log"
    builder = subprocess.Popen(
        build_cmd(source, out, "--bm25-threads", "1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    child = None
    try:
        parent = psutil.Process(builder.pid)
        deadline = time.time() + 120
        # Wait for the indexer child, then for its JVM to be indexing, so that the kill
        # lands while Java is at work.
        while time.time() < deadline and builder.poll() is None:
            if child is None:
                child = next(
                    (
                        c
                        for c in parent.children(recursive=True)
                        if "pyserini.index.lucene" in " ".join(c.cmdline())
                    ),
                    None,
                )
            elif log.exists() and "Starting to index" in log.read_text(errors="replace"):
                break
            time.sleep(0.02)
        assert builder.poll() is None, "the build ended before its Lucene child could be seen"
        assert child is not None and child.is_running(), "no running Lucene child"
        os.kill(builder.pid, signal.SIGKILL)
        builder.wait()
        deadline = time.time() + 5
        while time.time() < deadline and not _is_gone(child):
            time.sleep(0.05)
        assert _is_gone(child), "the Lucene child outlived the builder"
        # Killed mid-way, not left to finish on its own.
        assert "Indexing Complete" not in log.read_text(errors="replace")
        assert not (out / "bm25").exists()  # only a finished index gets the final name
    finally:
        if builder.poll() is None:
            builder.kill()
            builder.wait()
        if child is not None and not _is_gone(child):
            child.kill()
    # The next run builds the BM25 index.
    manifest = build(source, out, bm25=True)
    assert manifest["indexes"]["bm25"] == "bm25"
    hits = KnowledgeSource(out).search("Anna May Wong actress", k=1)
    assert hits[0].passage.title.startswith("Anna May Wong")


def test_child_ended_when_the_wait_fails(tmp_path):
    # An exception while the builder waits (here raised by an alarm) ends the child first.
    seen: list[psutil.Process] = []

    def interrupt(signum, frame):
        # Only the sleeper: the test process may have other children (a resource tracker).
        seen.extend(
            c for c in psutil.Process().children() if "time.sleep(60)" in " ".join(c.cmdline())
        )
        raise RuntimeError("interrupted")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(RuntimeError, match="interrupted"):
            run_tied([sys.executable, "-c", "import time; time.sleep(60)"])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert len(seen) == 1
    assert _is_gone(seen[0])
