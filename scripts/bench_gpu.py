"""The GPU check of issue 37: dev bios verified on a GPU against the CPU path, and dense
encoding throughput.

Three steps, each a subcommand, so that the CPU half runs here and the GPU half on a lent
machine with the same code:

    # the CPU path's decisions (llama.cpp, the default backend for GGUF)
    python -m scripts.bench_gpu verify --device cpu --rows cpu-rows.jsonl --json cpu.json
    # the same bios on the GPU (transformers, bf16)
    python -m scripts.bench_gpu verify --device cuda --backend transformers \
        --rows gpu-rows.jsonl --json gpu.json
    python -m scripts.bench_gpu encode --device cuda --n 100000 --json encode.json
    python -m scripts.bench_gpu compare cpu-rows.jsonl gpu-rows.jsonl --json agree.json
    # all of it into scripts/results/gpu-check.json (the docs page is generated from it)
    python -m scripts.bench_gpu record --steps DIR

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
    from factscore_local.pipeline.inputs import read_bios

    bios = [b for b in read_bios(path) if b.annotations]
    return bios[:n]


def verify(args: argparse.Namespace) -> dict:
    """Verify the bios' labeled model facts; write the rows and return the timing."""
    from factscore_local.config import build_config
    from factscore_local.pipeline.estimator import Estimator

    labeled = args.labeled
    if labeled is None:  # run from the checkout: the shared data's ChatGPT file
        from scripts.common import data_root, labeled_dir

        labeled = labeled_dir(data_root()) / "ChatGPT.jsonl"
    bios = responding_bios(labeled, args.n_bios)
    with tempfile.TemporaryDirectory() as tmp:
        options = {
            "index": args.index,
            "lm": args.lm,
            "backend": args.backend,
            "device": args.device,
            "use_atomic_facts": True,
            "validate": False,
            "cache": Path(tmp) / "cache.db",  # nothing reused: every margin is computed
        }
        config = build_config(options, None, set(options))
        start = time.perf_counter()
        estimator = Estimator(config)
        lm = estimator.components.lm.get()  # load the weights before the clock starts
        loaded = time.perf_counter()
        rows = estimator.run(bios, args.rows, progress=False)
        done = time.perf_counter()
    n_facts = sum(len(r.decisions) for r in rows)
    return {
        "device": args.device,
        "backend": args.backend,
        "lm": Path(args.lm).name if args.lm else None,
        "verifier": config.verifier,
        # prompts sharing a page evaluated per pass (the transformers backend on a GPU: 16)
        "tail_batch": getattr(getattr(lm, "lm", lm), "tail_batch", 1),
        "n_bios": len(rows),
        "topics": [r.topic for r in rows],
        "n_facts": n_facts,
        "errors": [r.error for r in rows if r.error],
        "load_s": round(loaded - start, 2),
        "verify_s": round(done - loaded, 2),
        "s_per_fact": round((done - loaded) / max(n_facts, 1), 4),
        "machine": _machine(),
    }


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
    """The GPU check's results file, from the JSON each step wrote into ``--steps``:
    ``gpu-verify``, ``devcpu-hf-verify``, ``cpu-verify`` (this machine, llama.cpp),
    ``gpu-encode``, ``devcpu-encode`` and the rows files they compared."""
    from scripts.common import machine, write_results

    steps = args.steps

    def step(name: str) -> dict:
        return json.loads((steps / f"{name}.json").read_text(encoding="utf-8"))

    gpu, dev_cpu = step("gpu-verify"), step("devcpu-hf-verify")
    # the llama.cpp run on this machine: its timing only when it finished all the bios
    cpu = step("cpu-verify") if (steps / "cpu-verify.json").exists() else None
    enc_gpu, enc_cpu = step("gpu-encode"), step("devcpu-encode")

    def agreement(first: str, second: str) -> dict:
        ns = argparse.Namespace(first=steps / first, second=steps / second)
        return compare(ns)

    precision = agreement("devcpu-hf-rows.jsonl", "gpu-rows.jsonl")
    backend = agreement("cpu-rows.jsonl", "devcpu-hf-rows.jsonl")
    overall = agreement("cpu-rows.jsonl", "gpu-rows.jsonl")
    figures: dict = {
        "gpu_bf16/s_per_fact": gpu["s_per_fact"],
        "gpu_bf16/load_s": gpu["load_s"],
        "gpu_host_cpu_fp32/s_per_fact": dev_cpu["s_per_fact"],
        "agreement/gpu_bf16_vs_cpu_fp32": precision["agreement"],
        "agreement/cpu_fp32_vs_llama_cpp": backend["agreement"],
        "agreement/gpu_bf16_vs_llama_cpp": overall["agreement"],
        "margin_pearson/gpu_bf16_vs_cpu_fp32": precision["margin_pearson"],
        "margin_pearson/gpu_bf16_vs_llama_cpp": overall["margin_pearson"],
        "facts_compared/gpu_bf16_vs_cpu_fp32": precision["n_facts"],
        "facts_compared/with_llama_cpp": overall["n_facts"],
        "encode/gpu_passages_per_s": enc_gpu["passages_per_s"],
        "encode/gpu_host_cpu_passages_per_s": enc_cpu["passages_per_s"],
    }
    if cpu is not None:
        figures["this_machine_llama_cpp/s_per_fact"] = cpu["s_per_fact"]
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
            "cpu": "the lent GPU machine's x86-64 host (model not recorded)",
            "gpu": gpu["machine"].get("gpu"),
            "torch": gpu["machine"].get("torch"),
            "llama_cpp_machine": machine(),
        },
        "data": {
            "labeled": "factscore/labeled-dev/ChatGPT.jsonl",
            "bios": gpu["topics"],
            "n_bios": gpu["n_bios"],
            "facts": gpu["n_facts"],
            "lm": gpu["lm"],
            "verifier": gpu["verifier"],
            "facts_from": "the labeled model-atomic-facts (no decomposition)",
            "encode_passages": enc_gpu["n_passages"],
            "encode_distinct_passages": enc_gpu["distinct_passages"],
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
    v.add_argument("--rows", type=Path, required=True)
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
