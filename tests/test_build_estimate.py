"""The dense stage's time is estimated before a build; over the limit, and with --dense not
given, the build goes without a global dense index (index/estimate.py).

A fake-large estimate comes from a tiny limit ($FSCORE_DENSE_MAX_HOURS) and a given encoder
speed ($FSCORE_DENSE_RATE), so nothing big is built and no model is loaded.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from factscore_local.index import estimate
from factscore_local.index.sources import SEPARATOR

ROOT = Path(__file__).resolve().parents[1]


def _db(path: Path, pages: int, passages_per_page: int) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE documents (title PRIMARY KEY, text)")
    text = SEPARATOR.join(f"<s>Passage {i} of the page.</s>" for i in range(passages_per_page))
    conn.executemany(
        "INSERT INTO documents VALUES (?, ?)", [(f"Page {i}", text) for i in range(pages)]
    )
    conn.commit()
    conn.close()
    return path


@pytest.fixture
def fake_large(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any source is "too big": a limit of 0.36 s at 1 passage/s."""
    monkeypatch.setenv(estimate.MAX_HOURS_ENV, "0.0001")
    monkeypatch.setenv(estimate.RATE_ENV, "1")


def test_db_estimate_counts_pages_and_passages(tmp_path: Path) -> None:
    est = estimate.estimate_passages(_db(tmp_path / "s.db", 2500, 3), "db")
    assert est.pages == 2500
    assert est.passages == 7500  # every sampled row has 3 passages


def test_jsonl_estimate_scales_the_sample_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    line = json.dumps({"title": "T", "text": ["x" * estimate.CHARS_PER_PASSAGE] * 2})
    path.write_text("\n".join([line] * 3000) + "\n")
    est = estimate.estimate_passages(path, "jsonl")
    assert est.pages == pytest.approx(3000, rel=0.01)
    assert est.passages == pytest.approx(6000, rel=0.01)


def test_default_dense_becomes_none_over_the_limit(tmp_path: Path, fake_large: None) -> None:
    said: list[str] = []
    src = _db(tmp_path / "s.db", 10, 2)
    assert estimate.plan_dense(src, "db", "minilm", explicit=False, echo=said.append) is None
    text = " ".join(said)
    assert "about 20 passages" in text and "1 passages/s" in text
    assert "--dense none" in text and "pass --dense minilm" in text
    assert "--dense-leads" in text and estimate.MAX_HOURS_ENV in text


def test_explicit_dense_is_kept_with_a_warning(tmp_path: Path, fake_large: None) -> None:
    said: list[str] = []
    src = _db(tmp_path / "s.db", 10, 2)
    assert estimate.plan_dense(src, "db", "minilm", explicit=True, echo=said.append) == "minilm"
    assert "embedding anyway" in said[-1]


def test_under_the_limit_nothing_changes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(estimate.RATE_ENV, "1000")  # 20,000 passages: 20 s, under 2 h
    said: list[str] = []
    src = _db(tmp_path / "s.db", 10_000, 2)
    assert estimate.plan_dense(src, "db", "minilm", explicit=False, echo=said.append) == "minilm"
    assert len(said) == 1 and "about 20,000 passages" in said[0]


def test_small_sources_are_not_measured(tmp_path: Path, monkeypatch) -> None:
    def fail(*args, **kwargs):
        raise AssertionError("a source this small needs no measurement")

    monkeypatch.delenv(estimate.RATE_ENV, raising=False)
    monkeypatch.delenv(estimate.MAX_HOURS_ENV, raising=False)
    monkeypatch.setattr(estimate, "measure_rate", fail)
    src = _db(tmp_path / "s.db", 100, 3)
    assert estimate.plan_dense(src, "db", "minilm", explicit=False, echo=fail) == "minilm"


def test_leads_estimate_pages(tmp_path: Path, fake_large: None) -> None:
    said: list[str] = []
    src = _db(tmp_path / "s.db", 10, 4)
    estimate.plan_dense(src, "db", "minilm", explicit=False, leads=True, echo=said.append)
    assert "about 10 leads" in said[0]


def test_none_is_not_estimated(tmp_path: Path, fake_large: None) -> None:
    src = tmp_path / "missing.db"  # not even read
    assert estimate.dense_for_build(src, "none", explicit=True) == "none"
    assert estimate.dense_for_build(src, None, explicit=False) is None


def test_cli_builds_without_dense_when_too_slow(tmp_path: Path, fake_large: None) -> None:
    src, out = _db(tmp_path / "s.db", 20, 2), tmp_path / "idx"
    cmd = [sys.executable, "-m", "factscore_local.cli", "build-index", "--source", str(src),
           "--out", str(out), "--no-bm25", "--quiet"]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "over the 0.0001 h limit" in done.stderr and "pass --dense minilm" in done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert not manifest["indexes"].get("dense")
    assert "dense_s" not in manifest["timings"]
