#!/usr/bin/env bash
# The raw-text path on a lent GPU (scripts/bench_gpu_raw_text.py), as run there from the
# repository root.
#
# What travels (git-ignored, under .gpu/): a tar of the kit cut into parts under the 64 MiB a
# call may carry, each carried by a call of its own as .gpu/parts/ and moved into $KIT (a
# folder outside the checkout: the device rewrites .gpu/ with each call's carried paths):
# the 0.5B GGUF (m/), the wheels the machine lacks (whl/: factscore_local, spaCy and what it
# needs with its small English model, gguf, pysbd, rank_bm25), the dev index's page store
# (dev-index/) and the labeled dev files (data/factscore/labeled-dev/). The last call carries
# the last part and runs this script; `record` runs on the project's machine.
set -u
cd .gpu
KIT="${KIT:-$HOME/kit}"
mkdir -p "$KIT" work site && mv parts/p* "$KIT"/ 2>/dev/null
cat "$KIT"/p* > work/kit.tar
echo "kit sha256 $(sha256sum work/kit.tar | cut -c1-16) (expected $(cat kit.sha))"
tar -xf work/kit.tar -C work && rm work/kit.tar
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target site work/whl/*.whl
export PYTHONPATH="$PWD/site:$(cd .. && pwd)" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
  PYTHONUNBUFFERED=1 FSCORE_MODEL_LOCK=0
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
cd work
timeout "${RUN_S:-420}" python3 -m scripts.bench_gpu_raw_text run --index dev-index \
  --data data --lm m/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf --device cuda --budget-s "${BUDGET_S:-240}" \
  --batch-bios "${BATCH_BIOS:-32}" \
  --rows "$OUT/gpu-raw-rows.jsonl" --json "$OUT/gpu-raw-text.json" 2>&1 \
  | grep -v -E 'it/s\]|s/it\]' | tail -40
ls -la "$OUT"
