"""The suites (scripts/suites/*.toml, run by ``python -m scripts.suite``) restate the records'
commands as conditions × slices: every cell's command is its record's (options in any order,
scratch paths as the checker sets them), every record with a status is one of the three, and
the suites replay exactly what ``python -m scripts.check`` replays."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from docs.generate import readme_blocks
from scripts import common, suite

CELLS = [(s, c) for s in suite.suites() for c in s.cells]
RECORDS = {p.stem: json.loads(p.read_text("utf-8")) for p in sorted(common.RESULTS.glob("*.json"))}


def test_there_are_a_few_suites_and_each_record_is_in_one_at_most():
    assert {"paper-tables", "raw-text", "probes", "heads", "operations"} <= {
        s.name for s in suite.suites()
    }
    twice = [r for r, n in Counter(c.record for _, c in CELLS).items() if n > 1]
    assert twice == []


@pytest.mark.parametrize("cell", CELLS, ids=[f"{s.name}/{c.record}" for s, c in CELLS])
def test_a_cells_command_is_its_records(cell):
    spec, c = cell
    record = RECORDS[c.record]
    module, argv = suite.module_argv(spec.command(c))
    assert module == record["module"]
    assert suite.same_run(argv) == suite.same_run(suite.recorded_argv(record))


def test_the_suites_replay_what_the_checker_replays():
    replayed = {name for name, r in RECORDS.items() if r.get("replay")}
    assert replayed <= {c.record for _, c in CELLS}


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_every_record_says_what_it_is_now(name):
    record = RECORDS[name]
    assert record.get("status", "current") in common.STATUSES
    if "status" in record:
        assert record.get("status_because")


def test_the_figures_of_record_are_current():
    """The README's tables and the probe it cites are figures of record."""
    for name in readme_blocks.FIGURES_OF_RECORD:
        assert RECORDS[name]["status"] == "current"


def test_a_suite_file_naming_an_unknown_slice_fails(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('title = "X"\ntemplate = "python -m m {condition} {slice}"\n'
                    '[conditions]\nc = ""\n[slices]\ns = ""\n'
                    '[[cells]]\ncondition = "c"\nslice = "t"\nrecord = "r"\n')  # fmt: skip
    with pytest.raises(ValueError, match="no slice 't'"):
        suite.load(path)


def test_list_and_dry_run_print_the_cells(capsys):
    assert suite.main(["list", "heads"]) == 0
    assert "heads-98-0.5b [current, replayed]" in capsys.readouterr().out
    assert suite.main(["dry-run", "paper-tables", "--cell", "tables-10"]) == 0
    out = capsys.readouterr().out
    assert "python -m scripts.reproduce_tables --index" in out and "--topics 10" in out
    assert out.count("--seed-cache") == 4


def test_a_cell_reads_several_seed_sets_in_order(tmp_path, monkeypatch):
    for name in ("a1.gz", "a2.gz", "b.gz"):
        (tmp_path / name).write_bytes(b"")
    monkeypatch.setattr(suite, "ROOT", tmp_path)
    path = tmp_path / "x.toml"
    path.write_text('title = "X"\ntemplate = "python -m m {seeds}"\n[conditions]\nc = ""\n'
                    '[slices]\ns = ""\n[seeds]\na = ["a*.gz"]\nb = ["b.gz"]\n'
                    '[[cells]]\ncondition = "c"\nslice = "s"\nrecord = "r"\n'
                    'seeds = ["b", "a"]\nresume = "a"\n')  # fmt: skip
    spec = suite.load(path)
    assert spec.command(spec.cells[0]) == (
        "python -m m --seed-cache b.gz --seed-cache a1.gz --seed-cache a2.gz "
        "--resume-cache a1.gz --resume-cache a2.gz"
    )
    path.write_text(path.read_text().replace('["b", "a"]', '["b", "c"]'))
    with pytest.raises(ValueError, match="no seeds 'c'"):
        suite.load(path)


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_a_records_code_is_in_the_tree_or_named_in_git_history(name):
    """A record's module is in the tree, or its ``code`` names the commit and path where git
    keeps the code that ran it (a module, or a section of one, that left the tree; such a
    record is not replayed)."""
    record = RECORDS[name]
    module = record.get("module", "")
    if record.get("code"):
        assert set(record["code"]) == common.CODE_KEYS and not record.get("replay")
        assert common.code_left(record).startswith(f"git show {record['code']['left_at']}:")
    elif module.startswith("scripts."):
        path = common.ROOT / module.replace(".", "/")
        assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), module


def test_a_cell_whose_code_left_is_archived_listed_and_never_run(capsys, monkeypatch):
    archived = [(s, c) for s, c in CELLS if RECORDS[c.record].get("code")]
    assert archived and any(c.record == "airgap" for _, c in archived)
    assert suite.main(["list", "operations"]) == 0
    assert "airgap [current, archived]" in capsys.readouterr().out

    def no_run(*args, **kwargs):
        raise AssertionError(f"ran {args}")

    monkeypatch.setattr(suite.subprocess, "run", no_run)
    spec, cell = next((s, c) for s, c in archived if c.record == "airgap")
    assert suite.run_cell(spec, cell, common.BENCH_OUT / "dev-index", None)
    out = capsys.readouterr().out
    assert "archived airgap" in out and "git show " in out
