"""A build killed with SIGKILL resumes and ends with the same store as an uninterrupted one."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from factscore_local.index.builder import BuildOptions, build_index
from tests.conftest import EXCERPT, require

TABLES = ("documents", "pages", "passages", "redirects", "bad_records")


def dump_tables(db: Path) -> dict:
    conn = sqlite3.connect(db)
    out = {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in TABLES}
    conn.close()
    return out


def committed_position(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(db, timeout=0.1)
        row = conn.execute("SELECT value FROM build_state WHERE key='next_position'").fetchone()
        conn.close()
    except sqlite3.OperationalError:
        return 0
    return int(json.loads(row[0])) if row else 0


def run_build(out: Path, extra: list[str] = ()) -> subprocess.Popen:
    cmd = [
        sys.executable,
        "-m",
        "factscore_local.cli",
        "build-index",
        "--source",
        str(require(EXCERPT)),
        "--out",
        str(out),
        "--dense",
        "none",
        "--no-bm25",
        "--batch-pages",
        "10",
        "--quiet",
        *extra,
    ]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_kill_and_resume(tmp_path):
    reference = tmp_path / "reference"
    build_index(
        BuildOptions(source=require(EXCERPT), out=reference, dense=None, bm25=False, progress=False)
    )
    interrupted = tmp_path / "interrupted"
    db = interrupted / "knowledge.db"
    proc = run_build(interrupted)
    deadline = time.time() + 120
    while committed_position(db) < 30 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "the build finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = committed_position(db)
    assert 30 <= killed_at < 206
    assert not (interrupted / "manifest.json").exists()

    proc = run_build(interrupted)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert dump_tables(db) == dump_tables(reference / "knowledge.db")
    manifest = json.loads((interrupted / "manifest.json").read_text())
    reference_manifest = json.loads((reference / "manifest.json").read_text())
    assert manifest["counts"] == reference_manifest["counts"]


def test_resume_refuses_another_source(tmp_path, xml_index):
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"title": "X", "text": "Some text."}) + "\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "factscore_local.cli",
            "build-index",
            "--source",
            str(other),
            "--out",
            str(xml_index),
            "--quiet",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "another source" in proc.stderr and "--overwrite" in proc.stderr
