"""A long eval through faults (issue 49): killed again and again, beside a second process
on the same cache, and on Ray with a worker killed; the rows must equal an uninterrupted
run's.

    python -m scripts.soak --index dev-index --bios 24 --kills 6 --seed 0 --ray --results soak

Labeled dev bios (the ChatGPT file, drawn with the seed) are scored by ``fscore eval`` with
the 0.5B model and their human atomic facts (``--use-atomic-facts``), four ways:

1. **reference**: one uninterrupted run, with a cache of its own;
2. **killed**: a run on a shared cache, killed with SIGKILL ``--kills`` times (each time a
   random 0 to 3 s after the shared cache has stored a new model result, so that kills
   land mid-work), then run to its end;
3. **beside it**: a second process on the same cache, started after the first kill and
   running beside the killed run's later starts, scoring the same bios in the reverse
   order. Each of the two takes one thread (``--threads 1``), so with the machine's
   turn-taking on both hold a core slot and write the cache at once;
4. **Ray** (``--ray``): two workers, worker 0 killed once the first rows are in.

Checks: each run's rows equal the reference's, every bio once; the shared cache passes
SQLite's integrity check. ``tests/test_soak.py`` runs it on a small slice.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from scripts.caches import model_results
from scripts.common import (
    LABELED,
    Stopwatch,
    add_data_option,
    data_root,
    log,
    results_record,
    write_results,
)

SUBJECT_FILE = "ChatGPT.jsonl"
# Short blocks of evidence: the soak is about faults, and the prefill of long blocks is most
# of a run's time on 2 cores.
EVIDENCE_BUDGET = 256


def pick_bios(data: Path, n: int, seed: int, sentences: int | None, out: Path) -> Path:
    """n labeled bios that respond, drawn with the seed (optionally cut to their first
    sentences), written as an input file."""
    lines = (data / LABELED / SUBJECT_FILE).read_text("utf-8").splitlines()
    usable = [x for x in lines if json.loads(x).get("annotations")]
    picked = random.Random(seed).sample(usable, n)
    if sentences:
        cut = []
        for line in picked:
            record = json.loads(line)
            record["annotations"] = record["annotations"][:sentences]
            cut.append(json.dumps(record, ensure_ascii=False))
        picked = cut
    out.write_text("\n".join(picked) + "\n", "utf-8")
    return out


def eval_command(index: Path, bios: Path, cache: Path, out: Path,
                 threads: int | None = None) -> list[str]:  # fmt: skip
    from factscore_local.model_store import SMALL_LM

    # Bio by bio (--batch-bios 1), as the soak was recorded: each bio's results reach the
    # cache before the next bio starts, so a kill lands on a run with work left even on a
    # slice of two bios (scheduled together, their few facts are one stored slice).
    return [sys.executable, "-m", "factscore_local.cli", "eval", "--index", str(index),
            "--input", str(bios), "--use-atomic-facts", "--lm", SMALL_LM, "--no-validate",
            "--batch-bios", "1",
            "--evidence-budget", str(EVIDENCE_BUDGET), "--cache", str(cache), "--out", str(out),
            "--quiet", *(["--threads", str(threads)] if threads else [])]  # fmt: skip


def stored(cache: Path) -> int:
    """Model results in a cache file (0 while it cannot be read: still being created)."""
    try:
        return model_results(cache)
    except sqlite3.Error:
        return 0


def rows_of(path: Path) -> dict[str, list[dict]]:
    """A run's rows by topic, without where the input came from (file and line): the
    second process reads the bios in another order, from another file."""
    out: dict[str, list[dict]] = {}
    for line in path.read_text("utf-8").splitlines():
        row = json.loads(line)
        out.setdefault(row["topic"], []).append(
            {k: v for k, v in row.items() if k not in ("source", "line")}
        )
    return out


def reference_run(index: Path, bios: Path, cache: Path, out: Path) -> None:
    """The uninterrupted run, as a process of its own like the others: a model loaded in
    this process would hold the machine's core slots (``runtime/core_slots.py``) until it
    exits, and every run started after it would wait for them."""
    run_to_end(eval_command(index, bios, cache, out))


def run_to_end(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=7200)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[3:5])} failed: {done.stderr[-2000:]}")


def killed_run(command: list[str], cache: Path, kills: int, rng: random.Random,
               after_first_kill: Callable[[], None] = lambda: None,
               timeout: float = 1800) -> int:  # fmt: skip
    """Starts the command and kills it ``kills`` times, each a random 0-3 s after the
    cache has stored a new result; ``after_first_kill`` runs once the first has landed (or
    the run has finished first). Returns the kills that landed before it finished."""
    landed = 0
    for i in range(kills):
        if i == 1:  # the first kill has landed
            after_first_kill()
        before = stored(cache)
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + timeout
        while stored(cache) <= before and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(rng.uniform(0, 3))
        if proc.poll() is not None:  # it finished first: nothing left to kill
            break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        landed += 1
    if landed < 2:  # not called in the loop: one kill at most
        after_first_kill()
    return landed


def ray_run(index: Path, bios: Path, cache: Path, out: Path) -> dict:
    """Two Ray workers; worker 0 killed once two rows are in its journal."""
    import threading

    import ray

    from factscore_local.config import build_config
    from factscore_local.distributed import evaluate_with_ray
    from factscore_local.distributed.cluster import ray_session
    from factscore_local.distributed.journal import journal_path
    from factscore_local.distributed.ray_eval import worker_name
    from factscore_local.model_store import SMALL_LM
    from factscore_local.pipeline.records.inputs import read_bios

    # as `fscore eval` builds it (the model's fitted rule and thresholds): the same command
    config = build_config({"index": index, "lm": SMALL_LM, "use_atomic_facts": True,
                           "validate": False, "evidence_budget": EVIDENCE_BUDGET,
                           "cache": cache})  # fmt: skip
    killed: list[int] = []

    def kill_worker() -> None:
        journal, deadline = journal_path(out), time.time() + 1800
        while time.time() < deadline:
            if journal.exists() and len(journal.read_text("utf-8").splitlines()) >= 3:
                break
            time.sleep(0.05)
        pid = ray.get(ray.get_actor(worker_name("eval", 0)).pid.remote())
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    with ray_session(None, num_cpus=2):
        killer = threading.Thread(target=kill_worker, daemon=True)
        killer.start()
        evaluate_with_ray(config, list(read_bios(bios)), out, workers=2, progress=False)
        killer.join(timeout=60)
    return {"worker_kills": len(killed)}


def soak(index: Path, data: Path, work: Path, n_bios: int, kills: int, seed: int,
         sentences: int | None = None, with_ray: bool = False) -> dict:  # fmt: skip
    """Runs the four ways in ``work``; returns the counts (see the module's docstring)."""
    work.mkdir(parents=True, exist_ok=True)
    bios = pick_bios(data, n_bios, seed, sentences, work / "bios.jsonl")
    reversed_bios = work / "bios-reversed.jsonl"
    reversed_bios.write_text("\n".join(bios.read_text("utf-8").splitlines()[::-1]) + "\n")
    shared = work / "shared.db"
    reference_run(index, bios, work / "reference.db", work / "reference.jsonl")
    reference = rows_of(work / "reference.jsonl")
    # One thread each: with the turn-taking on, the two hold a core slot each and run at
    # once. The second starts after the first kill, which so lands on work of the killed
    # run's own (started together, the second could have cached a small slice first).
    started: list[subprocess.Popen] = []

    def start_beside() -> None:
        if not started:
            started.append(subprocess.Popen(
                eval_command(index, reversed_bios, shared, work / "beside.jsonl", 1),
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))  # fmt: skip

    command = eval_command(index, bios, shared, work / "killed.jsonl", 1)
    landed = killed_run(command, shared, kills, random.Random(seed), start_beside)
    run_to_end(command)
    beside = started[0]
    _, err = beside.communicate(timeout=7200)
    if beside.returncode != 0:
        raise RuntimeError(f"the second process failed: {err.decode()[-2000:]}")
    with closing(sqlite3.connect(shared)) as conn:
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    out = {"bios": n_bios, "kills": landed, "cache_integrity": integrity,
           "shared_cache_results": stored(shared)}  # fmt: skip
    runs = {"killed": work / "killed.jsonl", "beside": work / "beside.jsonl"}
    if with_ray:
        out.update(ray_run(index, bios, work / "ray.db", work / "ray.jsonl"))
        runs["ray"] = work / "ray.jsonl"
    for name, path in runs.items():
        rows = rows_of(path)
        out[name] = {
            "rows": sum(len(r) for r in rows.values()),
            "each_bio_once": sorted(rows) == sorted(reference)
            and all(len(r) == 1 for r in rows.values()),
            "identical_rows": sum(rows.get(t) == r for t, r in reference.items()),
        }
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    add_data_option(ap)
    ap.add_argument("--bios", type=int, default=24)
    ap.add_argument("--kills", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ray", action="store_true", help="also a Ray run with a worker killed")
    ap.add_argument("--work", type=Path, default=Path("bench-out/soak"))
    ap.add_argument("--results", default=None)
    argv = sys.argv[1:] if argv is None else argv
    args = ap.parse_args(argv)
    watch = Stopwatch()
    with watch("soak"):
        out = soak(args.index, data_root(args.data), args.work, args.bios, args.kills,
                   args.seed, with_ray=args.ray)  # fmt: skip
    log("soak", json.dumps(out))
    if args.results:
        from scripts.common import flatten

        record = results_record(args.results, "scripts.soak", argv,
                                {"bios": args.bios, "file": SUBJECT_FILE, "seed": args.seed},
                                flatten(out), watch)  # fmt: skip
        log("soak", f"wrote {write_results(record)}")


if __name__ == "__main__":
    main()
