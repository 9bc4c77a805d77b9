"""The benchmarks as a package: where they find the labeled data, one AUC, the results files
and the checker's OK/FAIL on figures recomputed from the real dev files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from docs.generate import pages as docs
from docs.generate import readme_blocks
from factscore_local.pipeline.records.labeled import human_facts
from scripts import caches, check, common, replay
from tests.conftest import SHARED, require

LABELED = SHARED / "factscore" / "labeled-dev"
# Counted on InstructGPT's dev file by `python -m scripts.bench_fragments --subjects
# InstructGPT` (no model): its facts and the ones the fragment filter flags.
INSTRUCTGPT_FRAGMENTS = {
    "model-atomic-facts/n": 2717,
    "model-atomic-facts/no verb": 1,
    "human-atomic-facts/n": 2587,
    "human-atomic-facts/no verb": 1,
}


def fragments_record(figures: dict) -> dict:
    argv = ["--subjects", "InstructGPT", "--show", "0"]
    return {
        "name": "fragments-instructgpt",
        "module": "scripts.bench_fragments",
        "command": common.command_line("scripts.bench_fragments", argv),
        "commit": "test",
        "date": "2026-11-27",
        "machine": common.machine(),
        "replay": {"argv": argv, "cached": False},
        "figures": figures,
    }


# --- locating the data -----------------------------------------------------------------
def test_data_root_error_names_the_option_and_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(common.DATA_ENV, raising=False)
    with pytest.raises(common.DataNotFound) as info:
        common.data_root(tmp_path)
    message = str(info.value)
    assert "--data" in message and common.DATA_ENV in message and str(tmp_path) in message


def test_data_root_reads_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(common.DATA_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(common.DataNotFound, match=r"\$FSCORE_DATA"):
        common.data_root(None)
    monkeypatch.setenv(common.DATA_ENV, str(require(SHARED)))
    assert common.data_root(None) == SHARED


def test_data_root_accepts_the_labeled_folder_itself(monkeypatch):
    monkeypatch.delenv(common.DATA_ENV, raising=False)
    assert common.data_root(require(LABELED)) == SHARED


def test_labeled_bios_reads_each_file_once():
    bios = common.labeled_bios(require(SHARED))
    assert [len(bios[s]) for s in common.SUBJECTS] == [98, 98, 98]
    again = common.labeled_bios(SHARED, ("ChatGPT",), responding=True)["ChatGPT"]
    assert again[0] is bios["ChatGPT"][0]  # the same parsed objects: read once
    assert all(b.annotations for b in again)


# --- one AUC ---------------------------------------------------------------------------
def test_auc_matches_sklearn_on_real_labels():
    from sklearn.metrics import roc_auc_score

    facts = [f for b in common.labeled_bios(require(SHARED))["ChatGPT"]
             for f in human_facts(b.annotations)]  # fmt: skip
    lengths = np.asarray([len(f.text.split()) for f in facts], float)  # many ties
    supported = np.asarray([f.label == "S" for f in facts])
    assert common.auc(lengths, supported) == pytest.approx(roc_auc_score(supported, lengths))
    assert np.isnan(common.auc(lengths[supported], supported[supported]))


# --- the checker -----------------------------------------------------------------------
def test_compare_ok_and_fail():
    verdicts = check.compare({"er": 3.3, "f1": 81.7, "kept": True, "gone": 1},
                             {"er": 3.3, "f1": 81.6, "kept": True})  # fmt: skip
    assert [v.ok for v in verdicts] == [True, False, True, False]
    assert verdicts[1].line() == "FAIL f1: recorded 81.7, got 81.6"
    assert check.compare({"f1": 81.7}, {"f1": 81.6}, tolerance=0.1)[0].ok
    assert check.same(float("nan"), float("nan")) and not check.same(1, True)


def test_a_record_keeps_the_commit_its_run_started_at(monkeypatch):
    """The stopwatch takes the commit when the run starts: a run that writes a shipped
    file, or whose checkout moves on while it runs, is recorded at the code it ran."""
    monkeypatch.setattr(common, "git_commit", lambda: "abc123")
    watch = common.Stopwatch()
    monkeypatch.setattr(common, "git_commit", lambda: "def456+dirty")
    record = common.results_record("t", "scripts.x", [], {}, {"f": 1}, watch)
    assert record["commit"] == "abc123"
    assert common.results_record("t", "scripts.x", [], {}, {}, watch, "0ff1ce")["commit"] == (
        "0ff1ce"
    )
    assert common.results_record("t", "scripts.x", [], {}, {})["commit"] == "def456+dirty"


def test_replay_spec_fills_scratch_paths():
    argv = ["--index", "dev-index", "--cache=x.db", "--seed-cache", "a.jsonl.gz",
            "--out", "o.json", "--rows", "r", "--results", "t", "--topics", "98"]  # fmt: skip
    spec = replay.replay_spec(argv)
    assert spec == {"argv": ["--index", "{index}", "--cache", "{tmp}/cache.db", "--seed-cache",
                             "a.jsonl.gz", "--out", "{tmp}/out.json", "--topics", "98"],
                    "cached": True}  # fmt: skip
    assert replay.replay_spec(["--index", "dev-index"]) is False  # nothing to replay from
    # a head the run shipped, or parts it exported, are written to scratch or not at all
    spec = replay.replay_spec(["--seed-cache", "a.jsonl.gz", "--ship", "data/heads/m.npz",
                               "--export", "scripts/cache/p"])  # fmt: skip
    assert spec["argv"] == ["--seed-cache", "a.jsonl.gz", "--ship", "{tmp}/head.npz"]
    old = {"replay": {"argv": ["--seed-cache", "a.jsonl.gz", "--ship", "data/heads/m.npz"]}}
    assert check.replay_argv(old, Path("ix"), Path("/t")) == [
        "--seed-cache", "a.jsonl.gz", "--ship", "/t/head.npz"]  # fmt: skip


def test_replay_fills_the_demo_index(tmp_path, capsys, monkeypatch):
    """A run given the demo's index replays with ``{demo_index}``, which the checker fills
    with the demo index it builds once as ``fscore demo`` does (the build faked here) and
    then reuses; a record that names no demo index builds none."""
    import subprocess

    from factscore_local.index import demo_data

    spec = replay.replay_spec(["--demo-index", "demo-index", "--seed-cache", "a.jsonl.gz"])
    assert spec["argv"] == ["--demo-index", "{demo_index}", "--seed-cache", "a.jsonl.gz"]
    old = {"name": "old", "replay": {"argv": ["--demo-index", "demo-index"]}}  # placeholder-less
    assert check.needs_demo_index(old)
    assert check.replay_argv(old, Path("ix"), Path("/t"), Path("demo")) == ["--demo-index", "demo"]
    with pytest.raises(ValueError, match="needs the demo index"):
        check.replay_argv(old, Path("ix"), Path("/t"))
    assert not check.needs_demo_index({"replay": {"argv": ["--index", "{index}"]}})

    built = []

    def fake_build(out, progress=True, dump=None):
        built.append(Path(out))
        Path(out).mkdir(parents=True)
        (Path(out) / "manifest.json").write_text(json.dumps({"complete": True}))
        return {}

    monkeypatch.setattr(demo_data, "build_demo_index", fake_build)
    commands = []

    def fake_run(command, **kwargs):
        commands.append(command)
        out = Path(command[command.index("--results-out") + 1])
        record = {**fragments_record({"n": 1}), "computed": 0}
        out.write_text(json.dumps(record))
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(check.subprocess, "run", fake_run)
    record = {**fragments_record({"n": 1})}
    record["replay"] = {"argv": ["--demo-index", "{demo_index}", "--index", "{index}"],
                        "cached": True}  # fmt: skip
    demo = tmp_path / "demo-index"
    for _ in range(2):
        assert check.check(record, tmp_path / "dev", tmp_path, demo=demo)
    assert built == [demo]  # built once, then found
    assert all(c[c.index("--demo-index") + 1] == str(demo) for c in commands)
    assert "OK fragments-instructgpt: 2 of 2 figures" in capsys.readouterr().out
    plain = fragments_record({"n": 1})
    assert check.check(plain, tmp_path / "dev", tmp_path, demo=tmp_path / "unused")
    assert built == [demo] and not (tmp_path / "unused").exists()


def test_check_reruns_a_benchmark_ok_then_fail(tmp_path, capsys, monkeypatch):
    """A real rerun (no model): the fragment counts of InstructGPT's dev file reproduce the
    recorded ones; a figure recorded wrong fails."""
    data = require(SHARED)
    # The wrong record's rerun is the right one's (same command): run it once.
    reruns: list = []
    real = check.replay

    def replay_once(*args):
        if not reruns:
            reruns.append(real(*args))
        return reruns[0]

    monkeypatch.setattr(check, "replay", replay_once)
    assert check.check(fragments_record(INSTRUCTGPT_FRAGMENTS), tmp_path, data)
    out = capsys.readouterr().out
    assert "OK fragments-instructgpt: 4 of 4 figures reproduced" in out
    wrong = {**INSTRUCTGPT_FRAGMENTS, "model-atomic-facts/no verb": 2}
    assert not check.check(fragments_record(wrong), tmp_path, data)
    out = capsys.readouterr().out
    assert "FAIL model-atomic-facts/no verb: recorded 2, got 1" in out
    assert "FAIL fragments-instructgpt: 3 of 4" in out


# --- the results files -----------------------------------------------------------------
RESULTS = sorted(common.RESULTS.glob("*.json"))


def test_a_record_says_how_much_of_the_cpu_its_host_took():
    """machine.cpu_steal_share: the hypervisor's share of the CPU time while the benchmark
    ran (a busy host slows a virtual machine's run without any change of the code)."""
    watch = common.Stopwatch()
    sum(i * i for i in range(200_000))
    record = common.results_record("x", "scripts.x", [], {}, {"n": 1}, watch)
    share = record["machine"]["cpu_steal_share"]
    if common.cpu_times() is None:
        assert share is None
    else:
        assert share is None or 0.0 <= share <= 1.0
    assert (
        common.results_record("x", "scripts.x", [], {}, {"n": 1})["machine"]["cpu_steal_share"]
        is None
    )


def test_results_files_exist():
    names = {p.stem for p in RESULTS}
    assert {"tables-98", "fragments-98"} <= names


@pytest.mark.parametrize("path", RESULTS, ids=[p.stem for p in RESULTS])
def test_every_results_file_says_what_ran_where(path: Path):
    record = common.read_results(path)
    assert record["name"] == path.stem
    assert record["command"].startswith(("python -m scripts.", "fscore ", "bash scripts/"))
    assert record["commit"] and record["date"][:4].isdigit()
    assert record["machine"].get("cores") and record["machine"].get("cpu")
    assert record["figures"] and all(isinstance(k, str) for k in record["figures"])
    if record.get("replay"):
        assert record["replay"]["argv"] and "module" in record
    json.dumps(record)  # plain data


def test_docs_pages_are_generated(tmp_path):
    written = {p.name for p in docs.write_docs(tmp_path)}
    assert {f"{p.stem}.md" for p in RESULTS} | {"index.md", "headline.md"} <= written
    headline = (tmp_path / "headline.md").read_text()
    assert "| ChatGPT |" in headline and "F1, paper" in headline


# The README's tables and its probe (issue 65): each is replayed, from the committed caches.
FIGURES_OF_RECORD = readme_blocks.FIGURES_OF_RECORD


@pytest.mark.parametrize("name", FIGURES_OF_RECORD)
def test_the_figures_of_record_replay_from_the_committed_caches(name):
    record = common.read_results(common.RESULTS / f"{name}.json")
    assert record["replay"] and record["replay"]["cached"], record.get("recorded_because")
    argv = record["replay"]["argv"]
    seeds = [argv[i + 1] for i, arg in enumerate(argv) if arg in ("--seed-cache", "--resume-cache")]
    assert seeds and all((common.ROOT / seed).is_file() for seed in seeds)


@pytest.mark.slow
def test_tables_replay_on_a_slice(db_index):
    """The tables replayed from the committed caches on a 10-topic slice: the same figures,
    and no model result computed."""
    record = common.read_results(common.RESULTS / "tables-10.json")
    assert record["replay"]["cached"]
    assert check.check(record, db_index, require(SHARED))


def test_the_raw_text_calibration_wins_only_on_both_halves_for_every_subject():
    """The raw-text calibration wins only with a lower ER on both halves for every subject
    (what ``fscore ship-rule --raw-text`` then asks of a record: tests/test_ship.py)."""
    from scripts.bench_raw_text import calibration_wins

    base = {h: {s: {"er": 5.0, "f1": None} for s in common.SUBJECTS} for h in ("0", "1")}
    better = {h: {s: {"er": 2.0, "f1": None} for s in common.SUBJECTS} for h in ("0", "1")}
    assert calibration_wins(base, better)
    better["1"][common.SUBJECTS[-1]]["er"] = 5.0  # a tie on one half of one subject
    assert not calibration_wins(base, better)


def test_a_raw_text_run_is_set_beside_its_baseline_per_subject():
    """``bench_raw_text --baseline raw-text-98``: each subject's ER change against the
    recorded one, and whether none got worse by more than 0.5 point."""
    from scripts.bench_raw_text import baseline_change

    recorded = common.read_results(common.RESULTS / "raw-text-98.json")["figures"]
    figures = {f"raw text/{s}/er": recorded[f"raw text/{s}/er"] for s in common.SUBJECTS}
    same = baseline_change(figures, "raw-text-98")
    assert [same[f"raw text minus raw-text-98/{s}/er"] for s in common.SUBJECTS] == [0, 0, 0]
    assert same["raw text minus raw-text-98/worse by at most 0.5 on every subject"] == 1
    figures[f"raw text/{common.SUBJECTS[1]}/er"] += 0.6  # one subject worse by 0.6
    worse = baseline_change(figures, "raw-text-98")
    assert worse[f"raw text minus raw-text-98/{common.SUBJECTS[1]}/er"] == 0.6
    assert worse["raw text minus raw-text-98/worse by at most 0.5 on every subject"] == 0


def test_a_raw_text_record_says_where_its_generations_came_from():
    from scripts.bench_raw_text import generations_source

    assert generations_source(False, []).startswith("from the seeded caches")
    assert generations_source(True, []).startswith("made by this run")
    resumed = generations_source(True, [Path("a.jsonl.gz"), Path("b.jsonl.gz")])
    assert "2 --resume-cache file(s)" in resumed and "interrupted run" in resumed


def test_fact_recall_samples_found_and_missed_facts_of_each_subject():
    """The recall's samples: per subject, found facts with the own fact that pairs with
    them and missed ones without, the same draw for the same seed."""
    from scripts.bench_fact_recall import SAMPLE, pairing, samples

    facts = ["Ann Lee was born in Ohio.", "Ann Lee is a painter."]
    assert pairing("Ann Lee is a painter.", facts, "Ann Lee", 0.7) == facts[1]
    assert pairing("Ann Lee won an Oscar.", facts, "Ann Lee", 0.7) is None
    rows = [{"subject": s, "topic": "Ann Lee", "human_fact": f"fact {i}",
             "own_fact": facts[0] if i % 2 else None}
            for s in common.SUBJECTS for i in range(3 * SAMPLE)]  # fmt: skip
    drawn = samples(rows)
    assert drawn == samples(rows) and len(drawn) == 2 * SAMPLE * len(common.SUBJECTS)
    for subject in common.SUBJECTS:
        mine = [d for d in drawn if d["subject"] == subject]
        assert sum(d["own_fact"] is not None for d in mine) == SAMPLE


def test_the_stance_pass_exports_each_chunk_once(tmp_path):
    """bench_stance_head --export (caches.export_part): after each chunk, the results not in
    an earlier part go to the next part; a chunk that computed nothing new writes none."""
    from factscore_local.runtime.cache import ResultCache, read_export

    cache, prefix = tmp_path / "c.db", tmp_path / "stance-1.5b"
    store = ResultCache(cache)
    store.put_many("choice", {"a": [1.0, 2.0], "b": [0.5, 0.1]})
    store.close()
    assert caches.export_part(cache, prefix) == tmp_path / "stance-1.5b-part1.jsonl.gz"
    assert caches.export_part(cache, prefix) is None  # nothing new
    store = ResultCache(cache)
    store.put_many("choice", {"c": [3.0, 1.0]})
    store.close()
    caches.export_part(cache, prefix)
    parts = sorted(tmp_path.glob("stance-1.5b-part*.jsonl.gz"))
    assert [p.name for p in parts] == ["stance-1.5b-part1.jsonl.gz", "stance-1.5b-part2.jsonl.gz"]
    assert [[k for k, _, _ in read_export(p)] for p in parts] == [["a", "b"], ["c"]]


def test_every_replayable_record_takes_the_checkers_options(capsys):
    """The checker replays a record with ``--data`` and ``--results-out`` added: every module
    with a replayable record accepts both (``bench_heads`` once did not, so its records
    could not be checked)."""
    import importlib

    modules = set()
    for path in sorted(common.RESULTS.glob("*.json")):
        record = json.loads(path.read_text("utf-8"))
        if record.get("replay"):
            modules.add(record["module"])
    assert "scripts.bench_heads" in modules
    for module in sorted(modules):
        with pytest.raises(SystemExit):
            importlib.import_module(module).main(["--help"])
        shown = capsys.readouterr().out
        assert "--results-out" in shown and "--data" in shown, module


def test_the_speed_benchmark_resumes_from_its_journal(db_index, tmp_path, monkeypatch):
    """A stopped speed run started again times only the paths its journal lacks, and the
    journal is read only for the same commit, arguments and bios."""
    from scripts import bench_speed

    timed = []

    def fake_time(path, round_, *_):
        timed.append(path)
        return {"path": path, "round": round_, "seconds": 10.0 + len(timed), "facts": 5,
                "server": f"{path} server" if path == "server" else None}  # fmt: skip

    monkeypatch.setattr(bench_speed, "BENCH_OUT", tmp_path)
    monkeypatch.setattr(bench_speed, "time_path", fake_time)
    argv = ["--index", str(db_index), "--topics", "1", "--rounds", "1", "--paths",
            "batched", "server"]  # fmt: skip
    journal = tmp_path / "speed.journal.jsonl"
    journal.write_text(json.dumps({"key": "another run", "path": "batched", "round": 0}) + "\n")
    assert bench_speed.main(argv) == 0 and timed == ["batched", "server"]
    entries = [json.loads(line) for line in journal.read_text().splitlines()][1:]
    assert [(e["path"], e["seconds"]) for e in entries] == [("batched", 11.0), ("server", 12.0)]
    journal.write_text("\n".join(json.dumps(e) for e in entries[:1]) + "\n")  # stopped there
    assert bench_speed.main(argv) == 0 and timed == ["batched", "server", "server"]
    assert bench_speed.main([*argv[:-1]]) == 0 and timed[-1] == "batched"  # other arguments
