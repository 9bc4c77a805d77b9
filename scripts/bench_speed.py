"""Raw-text bios per minute, end to end, for each way of running ``fscore eval`` here, timed
side by side (issue 64).

    python -m scripts.bench_speed --index dev-index --topics 4 [--rounds 2]
        [--paths batched bio-by-bio server] [--before REV] [--results speed]

The first ``--topics`` dev topics in the tables' order, each with its three subjects' bios
(raw text, no labels), scored by ``fscore eval`` with its defaults in a fresh process with
an empty cache: every model result computed, the model's loading included. The paths:

- ``batched``: in process, today's default (``--batch-bios``: the sentences of many bios
  in one generation call, their facts in one verification call);
- ``bio-by-bio``: in process, ``--batch-bios 1``;
- ``server``: ``--lm URL`` against ``python -m llama_cpp.server`` with the same GGUF on the
  same cores (loopback; the server's start is not timed), ``--lm-concurrency`` requests
  in flight, and the rule without NP (llama-cpp-python's server gives no prompt
  log-probabilities of its own);
- ``--before REV``: the package of an earlier commit (a git worktree of it) with its own
  defaults: the "before" of a speed change.

The paths run in turn, round after round (A B C A B C ...), so that a machine whose speed
drifts slows them alike; each figure is the median over the rounds, and each path's ratio to
the first is taken round by round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scripts.common import (
    ROOT,
    Stopwatch,
    add_data_option,
    data_root,
    log,
    results_record,
    write_results,
)
from scripts.llama_server import LlamaServer

PATHS = ("batched", "bio-by-bio", "server")


def write_raw_bios(bios, out: Path) -> None:
    """The bios' raw text as ``fscore eval`` input (topic and output only: no labels)."""
    with out.open("w", encoding="utf-8") as f:
        for bio in bios:
            f.write(json.dumps({"topic": bio.topic, "output": bio.output}) + "\n")


def eval_command(index: Path, bios: Path, work: Path, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "factscore_local.cli", "eval", "--input", str(bios),
            "--index", str(index), "--cache", str(work / "cache.db"),
            "--out", str(work / "out.jsonl"), "--quiet", *extra]  # fmt: skip


def timed_run(cmd: list[str], cwd: Path, log_file: Path) -> float:
    """Seconds of one run; a run that fails stops the benchmark with its output."""
    # another commit's package first on the path
    env = None if cwd == ROOT else dict(os.environ, PYTHONPATH=str(cwd))
    start = time.perf_counter()
    with log_file.open("a") as out:
        done = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {log_file.read_text()[-3000:]}")
    return seconds


def facts_of(out: Path) -> int:
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line]
    return sum(len(r.get("decisions") or []) for r in rows)


def worktree(rev: str, where: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), rev],
                   check=True, capture_output=True)  # fmt: skip
    return where


def main(argv: list[str] | None = None) -> int:
    from factscore_local.model_store import DEFAULT_LM, resolve_lm
    from scripts.tables.runner import Runner

    ap = argparse.ArgumentParser(prog="python -m scripts.bench_speed",
                                 description=__doc__.split("\n\n")[0])  # fmt: skip
    add_data_option(ap)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--topics", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS))
    ap.add_argument("--before", default=None, help="also time this commit's package")
    ap.add_argument("--concurrency", type=int, default=8, help="requests in flight (server)")
    ap.add_argument("--results", default=None, help="write scripts/results/NAME.json")
    argv = sys.argv[1:] if argv is None else argv
    args = ap.parse_args(argv)
    watch = Stopwatch()
    model = resolve_lm(DEFAULT_LM)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        bios = Runner(args.index, tmp / "c.db", data_root(args.data), None, None, "auto").bios(
            args.topics
        )
        source = tmp / "bios.jsonl"
        write_raw_bios(bios, source)
        paths = list(args.paths) + ([f"before {args.before}"] if args.before else [])
        before = worktree(args.before, tmp / "before") if args.before else None
        server = None
        if "server" in paths:
            server = LlamaServer(model, tmp / "server.log")
            server.start()
        seconds: dict[str, list[float]] = {p: [] for p in paths}
        facts: dict[str, list[int]] = {p: [] for p in paths}
        try:
            with watch("rounds"):
                for round_ in range(args.rounds):
                    for path in paths:
                        work = tmp / f"{path.split()[0]}-{round_}"
                        work.mkdir()
                        extra, cwd = [], ROOT
                        if path == "bio-by-bio":
                            extra = ["--batch-bios", "1"]
                        elif path == "server":
                            # llama-cpp-python's server gives no prompt log-probabilities
                            # of its own, so the rule without NP (docs: LM servers)
                            extra = ["--lm", server.url, "--verifier", "retrieve-lm",
                                     "--lm-concurrency", str(args.concurrency)]  # fmt: skip
                        elif before is not None and path.startswith("before"):
                            cwd = before
                        cmd = eval_command(args.index.resolve(), source, work, extra)
                        seconds[path].append(timed_run(cmd, cwd, tmp / "runs.log"))
                        facts[path].append(facts_of(work / "out.jsonl"))
                        log("speed", f"round {round_ + 1} {path}: {seconds[path][-1]:.1f} s")
        finally:
            if server is not None:
                server.kill()
            if before is not None:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(before)], capture_output=True)  # fmt: skip
    n = len(bios)
    reference = paths[0]
    figures: dict = {"bios": n, "rounds": args.rounds}
    for path in paths:
        median = statistics.median(seconds[path])
        figures[f"{path}/seconds"] = round(median, 1)
        figures[f"{path}/seconds_per_bio"] = round(median / n, 1)
        figures[f"{path}/bios_per_minute"] = round(60 * n / median, 2)
        figures[f"{path}/facts"] = facts[path][0]
        if path != reference:
            ratios = [b / a for a, b in zip(seconds[reference], seconds[path], strict=True)]
            figures[f"{path}/time_over_{reference}"] = round(statistics.median(ratios), 2)
    log("speed", json.dumps(figures))
    if args.results:
        topics = list(dict.fromkeys(b.topic for b in bios))
        data = {
            "bios": f"{n} dev bios: the first {len(topics)} topics in the tables' order "
            f"({', '.join(topics)}), all three subjects, raw text",
            "model": model.name,
            "cache": "empty for every run (every model result computed)",
            "server": "python -m llama_cpp.server, same GGUF, 2 threads, loopback; "
            "--verifier retrieve-lm (the server gives no prompt log-probabilities for NP)"
            if "server" in paths
            else None,
            "seconds_per_round": seconds,
        }
        record = results_record(args.results, "scripts.bench_speed", argv, data, figures, watch)
        log("speed", f"wrote {write_results(record)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
