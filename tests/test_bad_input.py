"""Bad input: a clear message, counted in the manifest, and the rest of the build kept."""

from __future__ import annotations

import bz2
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from factscore_local.index.builder import BuildOptions, build_index
from factscore_local.index.sources import SourceError
from tests.conftest import EXCERPT, require

PAGE = """  <page>
    <title>{title}</title>
    <ns>0</ns>
    <id>{id}</id>
    <revision><id>1</id><text xml:space="preserve">{text}</text></revision>
  </page>
"""


def mediawiki(pages: str) -> str:
    return (
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">\n'
        f"{pages}</mediawiki>\n"
    )


def build(source: Path, out: Path) -> dict:
    return build_index(BuildOptions(source=source, out=out, dense=None, bm25=False, progress=False))


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "factscore_local.cli", *args], capture_output=True, text=True
    )


def test_truncated_bz2_keeps_pages_read(tmp_path):
    data = require(EXCERPT).read_bytes()
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(data[: len(data) * 6 // 10])
    manifest = build(cut, tmp_path / "out")
    counts = manifest["counts"]
    assert counts["source_truncated"] is True
    assert manifest["complete"] is False
    assert 10 < counts["pages"] < 106
    assert counts["bad"] == {"truncated or corrupt source": 1}
    assert "truncated" in manifest["bad_examples"][0]["reason"]
    # What was read is whole: every stored page has passages.
    conn = sqlite3.connect(tmp_path / "out" / "knowledge.db")
    assert conn.execute("SELECT COUNT(*) FROM pages WHERE n_passages = 0").fetchone()[0] == 0


def test_truncated_bz2_message_on_cli(tmp_path):
    data = require(EXCERPT).read_bytes()
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(data[: len(data) // 2])
    proc = cli(
        "build-index",
        "--source",
        str(cut),
        "--out",
        str(tmp_path / "o"),
        "--dense",
        "none",
        "--no-bm25",
        "--quiet",
    )
    assert proc.returncode == 0
    assert "truncated" in proc.stderr


def test_malformed_page_skipped(tmp_path):
    pages = (
        PAGE.format(title="Good One", id=1, text="'''Good One''' is a good page.")
        + "  <page><ns>0</ns><id>2</id><revision><text>no title here</text></revision></page>\n"
        + PAGE.format(title="Good Two", id=3, text="'''Good Two''' is another page.")
    )
    src = tmp_path / "dump.xml"
    src.write_text(mediawiki(pages))
    manifest = build(src, tmp_path / "out")
    assert manifest["counts"]["pages"] == 2
    assert manifest["counts"]["bad"] == {"page without a title": 1}


def test_invalid_json_line(tmp_path):
    src = tmp_path / "pages.jsonl"
    src.write_text(
        json.dumps({"title": "A", "text": "Alpha text."})
        + "\n"
        + '{"title": "B", "text": "unterminated\n'
        + json.dumps({"title": "C", "text": ["Gamma lead.", "History. Old."]})
        + "\n"
    )
    manifest = build(src, tmp_path / "out")
    assert manifest["counts"]["pages"] == 2
    assert manifest["counts"]["bad"] == {"invalid JSON": 1}
    assert manifest["bad_examples"][0]["reason"].startswith("line 2: invalid JSON")


def test_empty_text(tmp_path):
    src = tmp_path / "pages.jsonl"
    src.write_text(
        json.dumps({"title": "Empty", "text": "   "})
        + "\n"
        + json.dumps({"title": "Empty list", "text": ["", " "]})
        + "\n"
        + json.dumps({"title": "Full", "text": "Some words."})
        + "\n"
    )
    manifest = build(src, tmp_path / "out")
    assert manifest["counts"]["pages"] == 1
    assert manifest["counts"]["bad"] == {"empty text": 2}
    xml = tmp_path / "dump.xml"
    xml.write_text(
        mediawiki(
            PAGE.format(title="Blank", id=1, text="")
            + PAGE.format(title="Real", id=2, text="Real text.")
        )
    )
    manifest = build(xml, tmp_path / "out-xml")
    assert manifest["counts"]["pages"] == 1
    assert manifest["counts"]["bad"] == {"empty text": 1}


def test_duplicate_titles_keep_the_first(tmp_path):
    src = tmp_path / "pages.jsonl"
    src.write_text(
        json.dumps({"title": "Twin", "text": "First version."})
        + "\n"
        + json.dumps({"title": "Twin", "text": "Second version."})
        + "\n"
    )
    manifest = build(src, tmp_path / "out")
    assert manifest["counts"]["pages"] == 1
    assert manifest["counts"]["duplicates"] == 1
    conn = sqlite3.connect(tmp_path / "out" / "knowledge.db")
    text = conn.execute("SELECT text FROM documents WHERE title='Twin'").fetchone()[0]
    assert "First version." in text


@pytest.mark.parametrize(
    "content", [b"\x89PNG\r\n\x1a\n0000", b"\x1f\x8b\x08\x00gzip", b"just some plain text\n"]
)
def test_wrong_file_type(tmp_path, content):
    src = tmp_path / "mystery.bin"
    src.write_bytes(content)
    with pytest.raises(SourceError, match="not a supported source"):
        build(src, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    proc = cli("build-index", "--source", str(src), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert "not a supported source" in proc.stderr


def test_bz2_without_mediawiki(tmp_path):
    src = tmp_path / "other.bz2"
    src.write_bytes(bz2.compress(b"hello world"))
    with pytest.raises(SourceError, match="does not hold a MediaWiki"):
        build(src, tmp_path / "out")


def test_sqlite_without_documents_table(tmp_path):
    src = tmp_path / "other.db"
    conn = sqlite3.connect(src)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(SourceError, match="no 'documents' table"):
        build(src, tmp_path / "out")


def test_missing_source(tmp_path):
    proc = cli(
        "build-index", "--source", str(tmp_path / "nope.xml.bz2"), "--out", str(tmp_path / "o")
    )
    assert proc.returncode == 2
    assert "source not found" in proc.stderr
