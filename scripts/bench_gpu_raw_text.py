"""The raw-text path on a lent GPU (issue 47): dev bios decomposed by the project and their
facts verified, end to end, by the 0.5B embedded model on the transformers backend
(decomposition in left-padded batches of 16, verification tails in batches of 16).

    # on the GPU machine (scripts/gpu_raw_text.sh says how the kit travels)
    python -m scripts.bench_gpu_raw_text run --index dev-index --data DATA \\
        --lm m/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf --device cuda --budget-s 300 \\
        --rows rows.jsonl --json run.json
    # here: the results file (scripts/results/gpu-raw-text.json)
    python -m scripts.bench_gpu_raw_text record --json run.json --commit C --date D

Bios are taken in whole topics in the tables' order (round robin over the frequency
classes), ``--batch-bios`` of them scheduled together (the cross-bio scheduler of
``fscore eval``; 3: a topic's three subjects at a time), until ``--budget-s`` seconds of
the run have passed; bios per minute count the bios finished, the model's loading excluded.
Nothing is cached beforehand: every decomposition and every verdict is computed.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def topic_groups(bios: list, size: int) -> list[list]:
    """The bios in order, in groups of whole topics of about ``size`` bios (at least one
    topic a group): each group is scheduled together (``--batch-bios``), and the budget is
    checked between groups.

    Example:
        >>> from types import SimpleNamespace as B
        >>> bios = [B(topic=t) for t in "aaabbbccc"]
        >>> [[b.topic for b in g] for g in topic_groups(bios, 5)]
        [['a', 'a', 'a', 'b', 'b', 'b'], ['c', 'c', 'c']]
        >>> len(topic_groups(bios, 3)), len(topic_groups(bios, 1)), len(topic_groups(bios, 32))
        (3, 3, 1)
    """
    groups: list[list] = [[]]
    for topic in dict.fromkeys(b.topic for b in bios):
        if groups[-1] and len(groups[-1]) >= size:
            groups.append([])
        groups[-1] += [b for b in bios if b.topic == topic]
    return [g for g in groups if g]


def run(args: argparse.Namespace) -> dict:
    from factscore_local.config import build_config
    from factscore_local.pipeline.components import build_components, load_shared_lm
    from factscore_local.pipeline.estimator import Estimator
    from scripts.tables.runner import Runner

    with tempfile.TemporaryDirectory() as tmp:
        options = {
            "index": args.index,
            "lm": args.lm,
            "backend": "transformers",
            "device": args.device,
            "use_atomic_facts": False,
            "validate": False,
            "gamma": 0,
            "chunk_bios": 3,
            "cache": Path(tmp) / "cache.db",
        }
        config = build_config(options, None, set(options))
        start = time.perf_counter()
        lm = load_shared_lm(config)
        load_s = time.perf_counter() - start
        runner = Runner(args.index, config.cache, args.data, args.lm, None, "auto")
        bios = runner.bios(98)
        estimator = Estimator(config, build_components(config, lm=lm))
        rows, start = [], time.perf_counter()
        for group in topic_groups(bios, args.batch_bios):
            rows += estimator.run(group, None, progress=False, batch_bios=args.batch_bios)
            if time.perf_counter() - start > args.budget_s:
                break
        seconds = time.perf_counter() - start
    with args.rows.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row.to_json(), ensure_ascii=False) + "\n")
    facts = sum(len(r.decisions) for r in rows)
    import os
    import platform

    import torch

    return {
        "device": args.device,
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "torch": torch.__version__,
        "cores": os.cpu_count(),
        "cpu": platform.processor() or platform.machine(),
        "budget_s": args.budget_s,
        "batch_bios": args.batch_bios,
        "lm": Path(args.lm).name,
        "dtype": str(lm.dtype).replace("torch.", ""),
        "generation_batch": lm.generation_batch,
        "tail_batch": lm.tail_batch,
        "verifier": config.verifier,
        "load_s": round(load_s, 1),
        "bios": len(rows),
        "topics": len({r.topic for r in rows}),
        "responding": sum(r.responded for r in rows),
        "errors": sum(bool(r.error) for r in rows),
        "facts": facts,
        "seconds": round(seconds, 1),
        "bios_per_minute": round(60 * len(rows) / seconds, 2),
        "facts_per_second": round(facts / seconds, 2),
    }


def record(args: argparse.Namespace) -> dict:
    """The results file from the GPU machine's run.json (``--json``)."""
    from scripts.common import machine, write_results

    step = json.loads(args.json.read_text("utf-8"))
    names = ("bios", "topics", "responding", "errors", "facts", "seconds", "bios_per_minute",
             "facts_per_second", "load_s")  # fmt: skip
    batch = step.get("batch_bios", 3)
    result = {
        # a topic at a time is the 2026-11-27 record's; bios across topics get their own
        "name": "gpu-raw-text" if batch == 3 else "gpu-raw-text-batched",
        "replay": False,
        "recorded_because": "it needs a GPU; CI and this project's machines have none",
        "command": "python -m scripts.bench_gpu_raw_text run --index dev-index "
        "--data DATA "
        f"--lm m/{step['lm']} --device cuda --budget-s {step.get('budget_s', 300):g} "
        + (f"--batch-bios {batch} " if batch != 3 else "")
        + "(scripts/gpu_raw_text.sh)",
        "module": "scripts.bench_gpu_raw_text",
        "argv": [],
        "commit": args.commit,
        "date": args.date,
        "machine": {
            "gpu": step["gpu"],
            "cores": step.get("cores"),
            "cpu": step.get("cpu"),
            "torch": step.get("torch"),
            "this_machine": machine(),
        },  # fmt: skip
        "data": {
            "labeled": "factscore/labeled-dev, all three subjects, the tables' topic order",
            "lm": step["lm"],
            "backend": "transformers",
            "dtype": step["dtype"],
            "generation_batch": step["generation_batch"],
            "tail_batch": step["tail_batch"],
            "batch_bios": batch,
            "verifier": step["verifier"],
            "facts_from": "the project's own decomposition (nothing cached)",
        },
        "figures": {name: step[name] for name in names},
    }
    write_results(result)
    return result


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    r = sub.add_parser("run")
    r.add_argument("--index", type=Path, required=True)
    r.add_argument("--data", type=Path, required=True, help="the data root (factscore/...)")
    r.add_argument("--lm", required=True)
    r.add_argument("--device", default="cuda")
    r.add_argument("--budget-s", type=float, default=300.0)
    r.add_argument(
        "--batch-bios",
        type=int,
        default=3,
        help="bios scheduled together, in whole topics (3: one topic at a time, as the "
        "2026-11-27 run; fscore eval's default is 32)",
    )
    r.add_argument("--rows", type=Path, required=True)
    r.add_argument("--json", type=Path, required=True)
    c = sub.add_parser("record")
    c.add_argument("--json", type=Path, required=True)
    c.add_argument("--commit", required=True)
    c.add_argument("--date", required=True)
    args = ap.parse_args(argv)
    out = run(args) if args.step == "run" else record(args)
    if args.step == "run":
        args.json.write_text(json.dumps(out, indent=1), "utf-8")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
