"""Across the air gap, end to end: write an offline bundle here, then, with the network cut
(a new network namespace, ``unshare -n``, as root), install it into a fresh environment,
build a tiny index from the real dump excerpt and score one bio with the embedded 0.5B
model. Records the bundle's size and each command's time in ``scripts/results/airgap.json``.

Usage (Linux, as root, from the checkout):
    python -m scripts.notebook.bench_airgap --work bench-out/airgap

Example:
    >>> from scripts.notebook.bench_airgap import offline
    >>> offline(["true"])[:3]
    ['unshare', '-n', '--']
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

from scripts.common import ROOT, Stopwatch, log, results_record, write_results

TAG = "airgap"
SMALL_LM = "qwen2.5-coder-0.5b-instruct-q4_k_m"
EXCERPT = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"


def offline(command: list[str]) -> list[str]:
    """``command`` in a new network namespace: only a loopback, and that one down."""
    return ["unshare", "-n", "--", *command]


def run(command: list[str], env: dict[str, str], cwd: Path) -> str:
    """Runs ``command``; its stdout, or SystemExit with its stderr's tail when it fails."""
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"[{TAG}] {' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def network_is_cut(env: dict[str, str], cwd: Path) -> dict[str, bool]:
    """Inside the namespace, both a plain HTTPS request and pip's package index must fail."""
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(cwd / "probe")]
    probes = {
        "https_fails": ["curl", "-sS", "--max-time", "10", "https://pypi.org/simple/"],
        "pip_fails": [*pip, "six==1.16.0"],
    }
    cut = {}
    for name, command in probes.items():
        done = subprocess.run(offline(command), env=env, cwd=cwd, capture_output=True,
                              timeout=300)  # fmt: skip
        cut[name] = done.returncode != 0
    if not all(cut.values()):
        raise SystemExit(f"[{TAG}] the namespace still reaches the network: {cut}")
    return cut


def main(argv: list[str] | None = None) -> int:
    """Runs the bundle, the offline install and the offline smoke run; writes the results."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True, help="scratch folder (outside the repo)")
    ap.add_argument("--bundle-args", default="", help="more options for scripts/bundle.sh")
    ap.add_argument("--results-out", type=Path, help="default: scripts/results/airgap.json")
    args = ap.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        raise SystemExit(f"[{TAG}] needs root and unshare (util-linux) to cut the network")
    work = args.work.resolve()
    if work.is_relative_to(ROOT):
        raise SystemExit(f"[{TAG}] --work {work} is inside the repository")
    shutil.rmtree(work, ignore_errors=True)
    (work / "run").mkdir(parents=True)
    bundle, venv, run_dir = work / "bundle", work / "venv", work / "run"
    # The offline side starts from nothing: its own cache, no shared data, no pip settings.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "FSCORE_", "HF_", "TRANSFORMERS_"))}  # fmt: skip
    env["XDG_CACHE_HOME"] = str(work / "cache")
    env["PIP_CONFIG_FILE"] = os.devnull
    watch = Stopwatch()

    with watch("bundle"):
        command = ["bash", str(ROOT / "scripts" / "bundle.sh"), str(bundle), "--overwrite",
                   *args.bundle_args.split()]  # fmt: skip
        log(TAG, " ".join(command))
        run(command, dict(os.environ), ROOT)
    manifest = json.loads((bundle / "manifest.json").read_text())
    log(TAG, f"bundle: {manifest['total_bytes'] / 1e9:.2f} GB in {watch.steps['bundle']} s")

    cut = network_is_cut(env, run_dir)
    with watch("install"):
        run(offline(["bash", str(bundle / "install.sh"), str(venv)]), env, run_dir)
    fscore = str(venv / "bin" / "fscore")
    dump = work / "cache" / "factscore-local" / "wiki-dumps" / EXCERPT
    with watch("build_index"):
        run(offline([fscore, "build-index", "--source", str(dump), "--out", "index",
                     "--dense", "none", "--no-bm25", "--quiet"]), env, run_dir)  # fmt: skip
    bio = files("factscore_local.data").joinpath("demo_bios.jsonl").read_text("utf-8")
    (run_dir / "bio.jsonl").write_text(bio.splitlines()[0] + "\n", "utf-8")
    with watch("eval"):
        summary = run(offline([fscore, "eval", "--index", "index", "--input", "bio.jsonl",
                               "--lm", SMALL_LM, "--cache", "cache.db", "--out", "scored.jsonl",
                               "--quiet", "--json"]), env, run_dir)  # fmt: skip
    row = json.loads((run_dir / "scored.jsonl").read_text("utf-8").splitlines()[0])
    if row.get("error") is not None or not row.get("n_facts"):
        raise SystemExit(f"[{TAG}] the bio was not scored: {row}")
    score = json.loads(summary)["score"]
    log(TAG, f"{row['topic']}: {row['n_facts']} facts, FActScore {score}")

    by_folder = manifest["bytes_by_folder"]
    figures = {
        "bundle/total_mb": round(manifest["total_bytes"] / 1e6, 1),
        **{f"bundle/{k}_mb": round(v / 1e6, 1) for k, v in sorted(by_folder.items())},
        "bundle/wheels": sum(f["path"].startswith("wheels/") for f in manifest["files"]),
        **{f"seconds/{k}": v for k, v in watch.steps.items()},
        "offline/https_fails": cut["https_fails"],
        "offline/pip_fails": cut["pip_fails"],
        "eval/n_facts": row["n_facts"],
        "eval/score": score,
    }
    data = {"requirement": manifest["requirement"], "python": manifest["python"],
            "bio": row["topic"], "lm": SMALL_LM, "dump": EXCERPT,
            "index": "build-index --dense none --no-bm25"}  # fmt: skip
    record = results_record(TAG, "scripts.notebook.bench_airgap", argv, data, figures, watch)
    path = write_results(record, args.results_out)
    log(TAG, f"results in {path}")
    shutil.rmtree(work / "probe", ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
