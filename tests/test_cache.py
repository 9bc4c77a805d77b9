"""The SQLite result cache: persistence, sharing between instances, key sensitivity."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from factscore_local.runtime.cache import ResultCache, key_of


def test_results_survive_a_new_instance(tmp_path):
    path = tmp_path / "sub" / "cache.db"
    first = ResultCache(path)
    key = key_of("tf", "model-a", "prompt 1")
    first.put_many("true_false", {key: [1.5, -0.25]})
    # No close(): a killed run never gets to close its connection.
    del first
    second = ResultCache(path)
    assert second.get(key) == [1.5, -0.25]
    assert second.hits == 1 and second.misses == 0
    assert second.get(key_of("tf", "model-a", "prompt 2")) is None
    assert second.misses == 1
    second.close()


def test_each_put_is_committed_at_once(tmp_path):
    path = tmp_path / "cache.db"
    cache = ResultCache(path)
    cache.put_many("generate", {"k1": "text one", "k2": {"nested": [1, 2]}})
    # Another connection sees the rows while the first is still open.
    conn = sqlite3.connect(path)
    rows = dict(conn.execute("SELECT key, kind FROM results").fetchall())
    conn.close()
    assert rows == {"k1": "generate", "k2": "generate"}
    cache.close()


def test_two_instances_share_one_file(tmp_path):
    path = tmp_path / "cache.db"
    a, b = ResultCache(path), ResultCache(path)
    a.put_many("np", {"from-a": 0.25})
    b.put_many("np", {"from-b": 0.75})
    assert a.get("from-b") == 0.75
    assert b.get("from-a") == 0.25
    # Overwriting by key, then a third instance sees the last value written.
    b.put_many("np", {"from-a": 0.5})
    c = ResultCache(path)
    assert c.get("from-a") == 0.5 and c.get("from-b") == 0.75
    for cache in (a, b, c):
        cache.close()


def test_memory_only_cache():
    cache = ResultCache(None)
    assert cache.get("x") is None
    cache.put_many("generate", {"x": "y"})
    assert cache.get("x") == "y"
    cache.put_many("generate", {})  # a no-op
    cache.close()


def test_key_of_sensitivity():
    base = key_of("tf", "model.gguf|100|1700000000|llama.cpp", "Is it true?")
    assert base == key_of("tf", "model.gguf|100|1700000000|llama.cpp", "Is it true?")
    assert len(base) == 64
    variants = [
        key_of("gen", "model.gguf|100|1700000000|llama.cpp", "Is it true?"),
        key_of("tf", "model.gguf|101|1700000000|llama.cpp", "Is it true?"),
        key_of("tf", "other.gguf|100|1700000000|llama.cpp", "Is it true?"),
        key_of("tf", "model.gguf|100|1700000000|transformers", "Is it true?"),
        key_of("tf", "model.gguf|100|1700000000|llama.cpp", "Is it true? "),
        key_of("tf", "model.gguf|100|1700000000|llama.cpp", "Is it false?"),
    ]
    assert base not in variants and len(set(variants)) == len(variants)


def test_key_of_does_not_merge_parts():
    # Part boundaries matter: ("ab", "c") is not ("a", "bc").
    assert key_of("ab", "c") != key_of("a", "bc")
    assert key_of("gen", "m", "p", 128, ["\n"]) != key_of("gen", "m", "p", 256, ["\n"])
    assert key_of("gen", "m", "p", 128, ["\n"]) != key_of("gen", "m", "p", 128, ["\n\n"])
    assert key_of(0, "topic", "atom") != key_of(1, "topic", "atom")
    assert key_of({"a": 1, "b": 2}) == key_of({"b": 2, "a": 1})


def _cache_with_results(path) -> ResultCache:
    cache = ResultCache(path)
    cache.put_many("true_false", {key_of("judge", "m", "p1"): [1.25, -0.5, 0.75]})
    cache.put_many("generate", {key_of("gen", "m", "p2"): "He was born in 1950."})
    cache.put_many("sha256", {key_of("sha256", "local path"): "abc"})  # machine-local
    return cache


def test_export_and_import_carry_results_but_not_local_digests(tmp_path):
    source = _cache_with_results(tmp_path / "a.db")
    assert source.export(tmp_path / "x.jsonl.gz") == 2
    # The same results give the same bytes (no timestamp in the gzip header).
    source.export(tmp_path / "y.jsonl.gz")
    assert (tmp_path / "x.jsonl.gz").read_bytes() == (tmp_path / "y.jsonl.gz").read_bytes()
    assert source.export(tmp_path / "z.jsonl.gz", ["generate"]) == 1
    target = ResultCache(tmp_path / "b.db")
    target.put_many("generate", {key_of("gen", "m", "p2"): "kept"})  # stored ones win
    assert target.import_file(tmp_path / "x.jsonl.gz") == (1, 1)
    assert target.get(key_of("judge", "m", "p1")) == [1.25, -0.5, 0.75]
    assert target.get(key_of("gen", "m", "p2")) == "kept"
    assert target.get(key_of("sha256", "local path")) is None
    assert target.import_file(tmp_path / "x.jsonl.gz") == (0, 2)


def test_a_continuation_export_holds_only_new_results(tmp_path):
    """--exclude: a later export leaves out what an earlier one holds; importing both
    gives the whole cache."""
    source = _cache_with_results(tmp_path / "a.db")
    first = tmp_path / "first.jsonl.gz"
    assert source.export(first) == 2
    source.put_many("true_false", {key_of("judge", "m", "p3"): [0.5, 0.25, 0.0]})
    later = tmp_path / "later.jsonl.gz"
    assert source.export(later, exclude=[first]) == 1
    target = ResultCache(tmp_path / "b.db")
    assert target.import_file(first) == (2, 0) and target.import_file(later) == (1, 0)
    assert target.get(key_of("judge", "m", "p3")) == [0.5, 0.25, 0.0]


def test_a_damaged_export_adds_nothing(tmp_path):
    import gzip

    import pytest

    source = _cache_with_results(tmp_path / "a.db")
    good = tmp_path / "x.jsonl.gz"
    source.export(good)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(good.read_bytes()[:-12])  # a copy that stopped early
    with gzip.open(good, "rt") as f:
        lines = f.read().splitlines()
    short = tmp_path / "short.jsonl.gz"
    with gzip.open(short, "wt") as f:  # a line lost, the header intact
        f.write("\n".join(lines[:-1]) + "\n")
    other = tmp_path / "other.jsonl.gz"
    with gzip.open(other, "wt") as f:
        f.write('{"title": "not an export"}\n')
    target = ResultCache(tmp_path / "b.db")
    for path, message in ((cut, "not a readable"), (short, "cut short"), (other, "format")):
        with pytest.raises(ValueError, match=message):
            target.import_file(path)
    assert target.conn.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 0


def _open_and_write(path: str, barrier, results) -> None:
    barrier.wait()  # every process opens the new file at the same moment
    try:
        ResultCache(Path(path)).put_many("k", {f"key-{os.getpid()}": 1})
        results.put("ok")
    except Exception as exc:  # noqa: BLE001 - the test reports whatever went wrong
        results.put(repr(exc))


def test_processes_opening_a_new_cache_at_once_all_get_it(tmp_path):
    """Ray workers start together on one new cache file: SQLite answers 'database is
    locked' at once to some of them while another switches the file to WAL (7 of 120
    opens failed before the open retried); every open must succeed."""
    import multiprocessing as mp

    outcomes = []
    for i in range(20):
        barrier, results = mp.Barrier(4), mp.Queue()
        path = str(tmp_path / f"c{i}.db")
        procs = [mp.Process(target=_open_and_write, args=(path, barrier, results))
                 for _ in range(4)]  # fmt: skip
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=120)
        outcomes += [results.get(timeout=10) for _ in procs]
        assert len(ResultCache(Path(path)).conn.execute("SELECT key FROM results").fetchall()) == 4
    assert outcomes == ["ok"] * 80
