"""The GPU check of issue 37: dev bios verified on a GPU against the CPU path, and dense
encoding throughput.

Each step is a subcommand, so that the CPU half runs here and the GPU half on a lent
machine with the same code (``scripts/gpu_check.sh`` there says how it travels):

    # the CPU paths: llama.cpp (the default for GGUF) and transformers in float32
    python -m scripts.bench_gpu verify --device cpu --rows cpu-rows.jsonl --json cpu.json
    python -m scripts.bench_gpu verify --device cpu --backend transformers \
        --rows cpu-hf-rows.jsonl --json cpu-hf-verify.json
    # the same bios on the GPU: bf16 with 16 and 1 prompts per pass, then float32
    python -m scripts.bench_gpu verify --device cuda --backend transformers \
        --tail-batches 16,1 --rows gpu-rows.jsonl --json gpu-verify.json
    python -m scripts.bench_gpu verify --device cuda --backend transformers \
        --dtype float32 --tail-batches 16 --rows gpu32-rows.jsonl --json gpu32-verify.json
    python -m scripts.bench_gpu encode --device cuda --n 50000 --json gpu-encode.json
    # all of it into scripts/results/gpu-check.json (the docs page is generated from it)
    python -m scripts.bench_gpu record --steps DIR --commit C --date D

The bios are the first N responding bios of a labeled dev file, verified with their
labeled model atomic facts (``use_atomic_facts``), so both paths judge the same facts and
no decomposition runs. Timings are wall-clock seconds of the whole verification,
model loading excluded.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path


def _machine() -> dict:
    info = {"cpu_cores": os.cpu_count(), "platform": platform.platform()}
    try:
        import torch

        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
            info["torch"] = torch.__version__
    except ImportError:
        pass
    return info


def responding_bios(path: Path, n: int) -> list:
    """The first ``n`` bios of a labeled file that have annotations (the LM responded)."""
    from factscore_local.pipeline.records.inputs import read_bios

    bios = [b for b in read_bios(path) if b.annotations]
    return bios[:n]


def verify(args: argparse.Namespace) -> dict:
    """Verify the bios' labeled model facts once per tail batch size, on one loaded LM;
    write each run's rows and return the timings (the first run's at the top level)."""
    from factscore_local.config import build_config
    from factscore_local.pipeline.components import build_components, load_shared_lm
    from factscore_local.pipeline.estimator import Estimator

    labeled = args.labeled
    if labeled is None:  # run from the checkout: the shared data's ChatGPT file
        from scripts.common import data_root, labeled_dir

        labeled = labeled_dir(data_root()) / "ChatGPT.jsonl"
    bios = responding_bios(labeled, args.n_bios)
    batches = [int(b) for b in args.tail_batches.split(",")] if args.tail_batches else [None]
    runs, lm, load_s = [], None, 0.0
    for batch in batches:
        with tempfile.TemporaryDirectory() as tmp:
            options = {
                "index": args.index,
                "lm": args.lm,
                "backend": args.backend,
                "device": args.device,
                "verifier": args.verifier,
                "lm_dtype": args.dtype,
                "use_atomic_facts": True,
                "validate": False,
                "cache": Path(tmp) / "cache.db",  # nothing reused: every margin is computed
            }
            config = build_config(options, None, set(options))
            if lm is None:  # load the weights before the clock starts
                start = time.perf_counter()
                lm = load_shared_lm(config)
                load_s = time.perf_counter() - start
            if batch is not None:
                lm.tail_batch = batch
            estimator = Estimator(config, build_components(config, lm=lm))
            rows_path = args.rows if len(batches) == 1 else _suffixed(args.rows, batch)
            start = time.perf_counter()
            rows = estimator.run(bios, rows_path, progress=False)
            seconds = time.perf_counter() - start
        n_facts = sum(len(r.decisions) for r in rows)
        runs.append({
            # prompts sharing a page evaluated per pass (the transformers backend on a GPU: 16)
            "tail_batch": getattr(lm, "tail_batch", 1),
            "rows": rows_path.name,
            "n_facts": n_facts,
            "errors": [r.error for r in rows if r.error],
            "verify_s": round(seconds, 2),
            "s_per_fact": round(seconds / max(n_facts, 1), 4),
        })  # fmt: skip
    return {
        "device": args.device,
        "backend": args.backend,
        "dtype": str(getattr(lm, "dtype", "")).replace("torch.", "") or None,
        "lm": Path(args.lm).name if args.lm else None,
        "verifier": config.verifier,
        "n_bios": len(rows),
        "topics": [r.topic for r in rows],
        "load_s": round(load_s, 2),
        **runs[0],
        "runs": runs,
        "machine": _machine(),
    }


def _suffixed(path: Path, batch: int | None) -> Path:
    return path.with_name(f"{path.stem}-b{batch}{path.suffix}")


def passages_for_encoding(index: Path, n: int) -> tuple[list[str], int]:
    """``n`` passage inputs from an index's store, cycled when it holds fewer (the
    throughput of an encoder does not depend on whether texts repeat)."""
    from factscore_local.index.dense import passage_input
    from factscore_local.index.store import STORE_NAME, Store

    store = Store(index / STORE_NAME)
    texts = [passage_input(title, text) for _, title, text in store.iter_passages()]
    return [texts[i % len(texts)] for i in range(n)], len(texts)


def encode(args: argparse.Namespace) -> dict:
    """Passages per second of the dense encoder on a device."""
    from factscore_local.index.dense import Embedder

    texts, distinct = passages_for_encoding(args.index, args.n)
    embedder = Embedder(args.dense, device=args.device)
    embedder.encode(texts[:512], batch_size=args.batch)  # warm-up (kernels, allocator)
    start = time.perf_counter()
    vectors = embedder.encode(texts, batch_size=args.batch)
    seconds = time.perf_counter() - start
    return {
        "device": embedder.device,
        "n_passages": len(texts),
        "distinct_passages": distinct,
        "batch": args.batch,
        "seconds": round(seconds, 2),
        "passages_per_s": round(len(texts) / seconds, 1),
        "dim": int(vectors.shape[1]),
        "machine": _machine(),
    }


def _facts(path: Path) -> dict[tuple[int, int], dict]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for i, fact in enumerate(row.get("decisions") or []):
            out[(row["line"], i)] = fact
    return out


def compare(args: argparse.Namespace) -> dict:
    """Agreement of two runs' decisions on the same facts, and how far their margins are."""
    import numpy as np

    a, b = _facts(args.first), _facts(args.second)
    shared = sorted(set(a) & set(b))
    if not shared:
        raise SystemExit("the two row files share no fact")
    same_atom = all(a[k]["atom"] == b[k]["atom"] for k in shared)
    agree = sum(a[k]["is_supported"] == b[k]["is_supported"] for k in shared)
    ma = np.array([a[k].get("margin") or 0.0 for k in shared])
    mb = np.array([b[k].get("margin") or 0.0 for k in shared])
    return {
        "n_facts": len(shared),
        "same_facts": same_atom,
        "agreement": round(agree / len(shared), 4),
        "disagreements": len(shared) - agree,
        "supported_first": int(sum(a[k]["is_supported"] for k in shared)),
        "supported_second": int(sum(b[k]["is_supported"] for k in shared)),
        "margin_pearson": round(float(np.corrcoef(ma, mb)[0, 1]), 4),
        "margin_mean_abs_diff": round(float(np.mean(np.abs(ma - mb))), 4),
    }


def record(args: argparse.Namespace) -> dict:
    """The GPU check's results file, from what the steps wrote into ``--steps``:
    ``gpu-verify`` (bf16, tail batches 16 and 1, rows ``gpu-rows-b16``/``-b1``),
    ``gpu32-verify`` (float32 on the GPU, rows ``gpu32-rows``), ``cpu-hf-verify`` (float32
    on this machine's CPU, rows ``cpu-hf-rows``), ``cpu-rows`` (llama.cpp on this machine,
    the bios it finished), ``gpu-encode``, ``devcpu-encode`` and ``gpu.txt``."""
    from scripts.common import machine, write_results

    steps = args.steps

    def step(name: str) -> dict:
        return json.loads((steps / f"{name}.json").read_text(encoding="utf-8"))

    gpu, gpu32, cpu_hf = step("gpu-verify"), step("gpu32-verify"), step("cpu-hf-verify")
    enc_gpu, enc_cpu = step("gpu-encode"), step("devcpu-encode")
    batched, single = (next(r for r in gpu["runs"] if r["tail_batch"] == b) for b in (16, 1))

    def agreement(first: str, second: str) -> dict:
        return compare(argparse.Namespace(first=steps / first, second=steps / second))

    pairs = {
        "gpu_bf16_batched_vs_one_at_a_time": ("gpu-rows-b16.jsonl", "gpu-rows-b1.jsonl"),
        "gpu_bf16_vs_gpu_fp32": ("gpu-rows-b16.jsonl", "gpu32-rows.jsonl"),
        "gpu_fp32_vs_cpu_fp32": ("gpu32-rows.jsonl", "cpu-hf-rows.jsonl"),
        "gpu_bf16_vs_llama_cpp": ("gpu-rows-b16.jsonl", "cpu-rows.jsonl"),
        "gpu_fp32_vs_llama_cpp": ("gpu32-rows.jsonl", "cpu-rows.jsonl"),
    }
    figures: dict = {
        "gpu_bf16/s_per_fact": batched["s_per_fact"],
        "gpu_bf16_one_at_a_time/s_per_fact": single["s_per_fact"],
        "gpu_fp32/s_per_fact": gpu32["s_per_fact"],
        "gpu_bf16/load_s": gpu["load_s"],
        "this_machine_fp32/s_per_fact": cpu_hf["s_per_fact"],
    }
    for name, (first, second) in pairs.items():
        result = agreement(first, second)
        figures[f"agreement/{name}"] = result["agreement"]
        figures[f"margin_pearson/{name}"] = result["margin_pearson"]
        figures[f"facts_compared/{name}"] = result["n_facts"]
    figures["encode/gpu_passages_per_s"] = enc_gpu["passages_per_s"]
    figures["encode/gpu_host_cpu_passages_per_s"] = enc_cpu["passages_per_s"]
    card = (steps / "gpu.txt").read_text(encoding="utf-8").splitlines()
    result = {
        "name": "gpu-check",
        "replay": False,
        "recorded_because": "it needs a GPU; CI and this project's machines have none",
        "command": "python -m scripts.bench_gpu verify|encode|compare|record (see the module)",
        "module": "scripts.bench_gpu",
        "argv": [],
        "commit": args.commit,
        "date": args.date,
        "machine": {
            "cores": gpu["machine"]["cpu_cores"],
            "cpu": next(
                (line.split(":", 1)[1].strip() for line in card if line.startswith("Model name")),
                "not recorded",
            ),  # fmt: skip
            "gpu": gpu["machine"].get("gpu"),
            "torch": gpu["machine"].get("torch"),
            "this_machine": machine(),
        },
        "data": {
            "labeled": "factscore/labeled-dev/ChatGPT.jsonl",
            "bios": gpu["topics"],
            "n_bios": gpu["n_bios"],
            "facts": gpu["n_facts"],
            "lm": gpu["lm"],
            "verifier": gpu["verifier"],
            "facts_from": "the labeled model-atomic-facts (no decomposition)",
            "tail_batch_on_gpu": batched["tail_batch"],
            "encode_passages": enc_gpu["n_passages"],
            "encode_distinct_passages": enc_gpu["distinct_passages"],
            "encode_passages_host_cpu": enc_cpu["n_passages"],
        },
        "figures": figures,
    }
    write_results(result)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    v = sub.add_parser("verify", help="verify N dev bios' labeled facts on a device")
    v.add_argument("--index", type=Path, default=Path("dev-index"))
    v.add_argument("--labeled", type=Path, default=None, help="default: $FSCORE_DATA's ChatGPT")
    v.add_argument("--n-bios", type=int, default=20)
    v.add_argument("--lm", default="qwen2.5-coder-0.5b-instruct-q4_k_m")
    v.add_argument("--backend", default="auto")
    v.add_argument("--device", default="auto")
    v.add_argument("--verifier", default="retrieve-lm")
    v.add_argument("--dtype", default="auto", help="--lm-dtype: e.g. float32 on a GPU")
    v.add_argument("--tail-batches", default=None,
                   help="e.g. 16,1: one run per tail batch size, on one loaded LM")  # fmt: skip
    v.add_argument("--rows", type=Path, required=True, help="with several batches: -b<N>")
    e = sub.add_parser("encode", help="dense encoding throughput on a device")
    e.add_argument("--index", type=Path, default=Path("dev-index"))
    e.add_argument("--dense", default="minilm")
    e.add_argument("--device", default="auto")
    e.add_argument("--n", type=int, default=100_000)
    e.add_argument("--batch", type=int, default=256)
    c = sub.add_parser("compare", help="agreement of two verify runs")
    c.add_argument("first", type=Path)
    c.add_argument("second", type=Path)
    r = sub.add_parser("record", help="write scripts/results/gpu-check.json from the steps")
    r.add_argument("--steps", type=Path, required=True, help="folder of the steps' JSON files")
    r.add_argument("--commit", required=True, help="the commit the GPU steps ran")
    r.add_argument("--date", required=True, help="the day the GPU steps ran (YYYY-MM-DD)")
    for p in (v, e, c):
        p.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    steps = {"verify": verify, "encode": encode, "compare": compare, "record": record}
    result = steps[args.step](args)
    text = json.dumps(result, indent=2)
    print(text)
    if getattr(args, "json", None):
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
