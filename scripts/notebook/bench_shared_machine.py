"""Two model processes on one machine: started at once against one after the other
(issue 49). Each is ``fscore eval`` of the same few dev bios with its own empty cache, so
both compute everything; with the turn-taking of ``runtime/core_slots.py`` the second
waits for the first instead of both slowing down.

    python -m scripts.notebook.bench_shared_machine --index dev-index --bios 3 \
        --results shared-machine

Records the wall time of the pair run one after the other, of the pair started at once
(with the turn-taking, and with ``FSCORE_MODEL_LOCK=0`` when ``--without-lock``), and the
ratio of each to the first.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scripts.common import data_root, labeled_dir, results_record, write_results


def eval_command(index: Path, bios: Path, work: Path, name: str, lm: str) -> list[str]:
    return [sys.executable, "-m", "factscore_local.cli", "eval", "--index", str(index),
            "--input", str(bios), "--out", str(work / f"{name}.jsonl"),
            "--cache", str(work / f"{name}-cache.db"), "--lm", lm]  # fmt: skip


def timed(commands: list[list[str]], together: bool, env: dict) -> tuple[float, list[str]]:
    """Wall seconds to run the commands (at once, or one after the other); their stderr."""
    start = time.perf_counter()
    if together:
        procs = [subprocess.Popen(c, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True) for c in commands]  # fmt: skip
        errs = [p.communicate()[1] for p in procs]
        codes = [p.returncode for p in procs]
    else:
        done = [subprocess.run(c, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True) for c in commands]  # fmt: skip
        errs, codes = [d.stderr for d in done], [d.returncode for d in done]
    if any(codes):
        raise SystemExit("an eval failed:\n" + "\n".join(errs))
    return time.perf_counter() - start, errs


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--bios", type=int, default=3)
    ap.add_argument("--lm", default="qwen2.5-coder-0.5b-instruct-q4_k_m")
    ap.add_argument("--without-lock", action="store_true")
    ap.add_argument("--results", default=None)
    args = ap.parse_args(argv)
    source = labeled_dir(data_root(args.data)) / "ChatGPT.jsonl"
    lines = [ln for ln in source.read_text("utf-8").splitlines() if json.loads(ln)["annotations"]]
    figures: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bios = work / "bios.jsonl"
        bios.write_text("\n".join(lines[-args.bios :]) + "\n", "utf-8")
        env = {**os.environ, "FSCORE_MODEL_LOCK": "1", "FSCORE_LOCK_DIR": str(work / "locks")}
        runs = [("one after the other", False, env), ("at once", True, env)]
        if args.without_lock:
            runs.append(("at once, no turn-taking", True, {**env, "FSCORE_MODEL_LOCK": "0"}))
        for i, (name, together, run_env) in enumerate(runs):
            commands = [eval_command(args.index, bios, work, f"r{i}-{j}", args.lm)
                        for j in range(2)]  # fmt: skip
            seconds, errs = timed(commands, together, run_env)
            figures[f"{name}/seconds"] = round(seconds, 1)
            figures[f"{name}/waited"] = sum("waiting for" in e for e in errs)
            print(f"{name}: {seconds:.1f} s", flush=True)
    base = figures["one after the other/seconds"]
    for name, *_ in runs[1:]:
        figures[f"{name}/ratio"] = round(figures[f"{name}/seconds"] / base, 3)
    print(json.dumps(figures, indent=1))
    if args.results:
        data = {"labeled": f"factscore/labeled-dev/ChatGPT.jsonl, the last {args.bios} "
                "responding bios", "lm": args.lm, "cores": os.cpu_count()}  # fmt: skip
        module = "scripts.notebook.bench_shared_machine"
        write_results(results_record(args.results, module, argv, data, figures, replay=False,
                                     recorded_because="a timing"))  # fmt: skip


if __name__ == "__main__":
    main()
