"""Raw-text bios per minute, end to end, for each way of running ``fscore eval`` here, timed
side by side (issue 64).

    python -m scripts.bench_speed --index dev-index --topics 4 [--rounds 2]
        [--paths batched bio-by-bio server llama.cpp-server vllm-8 vllm-32] [--before REV]
        [--results speed]

The first ``--topics`` dev topics in the tables' order, each with its three subjects' bios
(raw text, no labels), scored by ``fscore eval`` with its defaults in a fresh process with
an empty cache: every model result computed, the model's loading included. The paths:

- ``batched``: in process, the default (``--batch-bios``: many bios' sentences in one
  generation call, their facts in one verification call); ``bio-by-bio``: ``--batch-bios 1``;
- ``server``, ``llama.cpp-server``: ``--lm URL`` against ``python -m llama_cpp.server``, or
  llama.cpp's own server (``xllamacpp``, ``--concurrency`` slots, continuously batched),
  with the same GGUF on the same cores, ``--concurrency`` requests in flight;
- ``vllm-8``, ``vllm-32``: against vLLM's CPU build serving the GGUF's export
  (``factscore_local.lm.export_hf``; ``--vllm-dtype``) under the embedded name, 8 or 32
  requests in flight;
- ``--before REV``: an earlier commit's package (in a git worktree), with its defaults.

The servers run the rule without NP: llama.cpp's give no prompt log-probabilities, and vLLM
reads no prefix cache for a request that asks for them, so each fact's evidence block would
be read again (about 2 h a path here; ``vllm-agreement`` measures NP through vLLM). The
paths run in turn, round after round (A B C A B C ...); each figure is the median over the
rounds, each ratio to the first path taken round by round. A server starts before its run
and is killed after it (neither timed): each run meets an empty server, and no idle server
holds memory or cores. Each timed run is journaled (``bench-out/NAME.journal.jsonl``, keyed
by the commit, the arguments and the bios): run again, it times only what is left.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scripts.common import (
    BENCH_OUT,
    ROOT,
    Stopwatch,
    add_data_option,
    data_root,
    git_commit,
    log,
    results_record,
    write_results,
)
from scripts.llama_server import LlamaServer
from scripts.vllm_server import VllmServer, vllm_version
from scripts.xllamacpp_server import XllamacppServer

DEFAULT_PATHS = ("batched", "bio-by-bio", "server")
PATHS = (*DEFAULT_PATHS, "llama.cpp-server", "vllm-8", "vllm-32")
# what each server path decides with: llama.cpp's servers give no prompt log-probabilities,
# and vLLM's re-read each fact's block for them
NO_NP = "--verifier retrieve-lm (the server gives no prompt log-probabilities: no NP)"
VLLM = "--verifier retrieve-lm (NP from vLLM's prompt_logprobs reads no prefix cache)"
RULES = {"server": NO_NP, "llama.cpp-server": NO_NP, "vllm-8": VLLM, "vllm-32": VLLM}


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


def path_args(path: str, url: str | None, concurrency: int) -> list[str]:
    """The ``fscore eval`` options of a path, beside its input, index, cache and output.

    Example:
        >>> path_args("vllm-32", "http://127.0.0.1:8000/v1", 8)[2:]
        ['--verifier', 'retrieve-lm', '--lm-concurrency', '32']
        >>> path_args("llama.cpp-server", "URL", 8)[2:]
        ['--verifier', 'retrieve-lm', '--lm-concurrency', '8']
    """
    if path == "bio-by-bio":
        return ["--batch-bios", "1"]
    if path in RULES:  # vLLM's requests in flight are in its name
        flight = path.removeprefix("vllm-") if path.startswith("vllm-") else str(concurrency)
        return ["--lm", url, "--verifier", "retrieve-lm", "--lm-concurrency", flight]
    return []


@contextlib.contextmanager
def serving(path: str, model: Path, export: Path | None, args, log_file: Path):
    """The path's LM server, started before its run and killed after (neither timed);
    None for an in-process path."""
    from factscore_local.model_store import DEFAULT_LM

    server = (LlamaServer(model, log_file) if path == "server" else
              XllamacppServer(model, log_file, slots=args.concurrency)
              if path == "llama.cpp-server" else
              VllmServer(export, log_file, DEFAULT_LM, dtype=args.vllm_dtype)
              if path.startswith("vllm-") else None)  # fmt: skip
    if server is None:
        yield None
        return
    began = time.perf_counter()
    try:
        server.start()
        log("speed", f"{path}: the server answered after {time.perf_counter() - began:.0f} s")
        yield server
    finally:
        server.kill()


def time_path(path: str, round_: int, tmp: Path, source: Path, before, model, export, args):
    """One timed run of a path: its seconds, its facts and what served it."""
    work = tmp / f"{path.split()[0]}-{round_}"
    work.mkdir()
    with serving(path, model, export, args, tmp / f"{path}.log") as server:
        cmd = eval_command(args.index.resolve(), source, work,
                           path_args(path, server and server.url, args.concurrency))  # fmt: skip
        cwd = before if path.startswith("before") else ROOT
        seconds = timed_run(cmd, cwd, tmp / "runs.log")
    log("speed", f"round {round_ + 1} {path}: {seconds:.1f} s")
    served = server and f"{server.describe()}; {RULES[path]}"
    return {"path": path, "round": round_, "seconds": seconds, "server": served,
            "facts": facts_of(work / "out.jsonl")}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    from factscore_local.lm.export_hf import default_out, export_hf
    from factscore_local.model_store import DEFAULT_LM, resolve_lm
    from scripts.tables.runner import Runner

    ap = argparse.ArgumentParser(prog="python -m scripts.bench_speed",
                                 description=__doc__.split("\n\n")[0])  # fmt: skip
    add_data_option(ap)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--topics", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--paths", nargs="+", choices=PATHS, default=list(DEFAULT_PATHS))
    ap.add_argument("--before", default=None, help="also time this commit's package")
    ap.add_argument("--concurrency", type=int, default=8,
                    help="requests in flight (server), slots (llama.cpp-server)")  # fmt: skip
    ap.add_argument("--vllm-dtype", choices=("float32", "bfloat16"), default="float32")
    ap.add_argument("--results", default=None, help="write scripts/results/NAME.json")
    argv = sys.argv[1:] if argv is None else argv
    args = ap.parse_args(argv)
    vllm_paths = [p for p in args.paths if p.startswith("vllm-")]
    if vllm_paths and vllm_version() is None:
        raise SystemExit("no vLLM environment: run bash scripts/vllm_env.sh")
    watch = Stopwatch()
    model = resolve_lm(DEFAULT_LM)
    export = None
    if vllm_paths:  # vLLM 0.32 loads no GGUF: its safetensors export (once; not timed)
        with watch("export"):
            export = export_hf(DEFAULT_LM, default_out(DEFAULT_LM), "float32",
                               log=lambda m: log("speed", m))  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        bios = Runner(args.index, tmp / "c.db", data_root(args.data), None, None, "auto").bios(
            args.topics
        )
        source = tmp / "bios.jsonl"
        write_raw_bios(bios, source)
        paths = list(args.paths) + ([f"before {args.before}"] if args.before else [])
        before = tmp / "before" if args.before else None
        if before:  # the earlier commit's package, in a worktree of its own
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(before),
                            args.before], check=True, capture_output=True)  # fmt: skip
        seconds: dict[str, list[float]] = {p: [] for p in paths}
        facts: dict[str, list[int]] = {p: [] for p in paths}
        servers: dict[str, str] = {}  # what served each server path, and its rule
        journal = BENCH_OUT / f"{args.results or 'speed'}.journal.jsonl"
        key = hashlib.sha256(json.dumps([git_commit(), argv, source.read_text("utf-8")])
                             .encode()).hexdigest()[:16]  # fmt: skip
        lines = journal.read_text("utf-8").splitlines() if journal.exists() else []
        done = {(e["path"], e["round"]): e for e in map(json.loads, lines) if e["key"] == key}
        try:
            with watch("rounds"):
                for round_ in range(args.rounds):
                    for path in paths:
                        entry = done.get((path, round_))  # None: not timed by an earlier start
                        if entry is None:
                            entry = time_path(path, round_, tmp, source, before, model, export,
                                              args)  # fmt: skip
                            with journal.open("a", encoding="utf-8") as f:
                                f.write(json.dumps({"key": key, **entry}) + "\n")
                        seconds[path].append(entry["seconds"])
                        facts[path].append(entry["facts"])
                        servers.update({path: entry["server"]} if entry["server"] else {})
        finally:
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
            "servers": servers or None,  # loopback, the same cores; started for each run
            "seconds_per_round": seconds,
            "resumed": sorted({p for p, _ in done}) or None,  # timed by an earlier start
        }
        record = results_record(args.results, "scripts.bench_speed", argv, data, figures, watch)
        log("speed", f"wrote {write_results(record)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
