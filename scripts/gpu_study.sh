#!/usr/bin/env bash
# The GPU study of issue 73 (item 7), as the last device call runs it from the repository
# root: the default model (1.5B, $LM under the kit) on the transformers backend, in bf16.
# The kit (scripts/gpu_kit.py) arrived in parts, one a call, each moved to $HOME/kit.
#   1. bios per minute from raw text (bench_gpu_raw_text run, a time budget, cold cache);
#   2. the decisions on labeled facts (bench_gpu verify, the default rule), which
#      `bench_gpu compare` sets against the CPU's rows of the same bios, made here.
# Everything it writes that matters is under $OUT; `record` steps run on the project's
# machine.
set -u
KIT="${KIT:-$HOME/kit}"
LM="${LM:-m/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf}"
WORK="${WORK:-$HOME/work}"
mkdir -p "$WORK" "$WORK/site"
cat "$KIT"/p* > "$WORK/kit.tar"
echo "kit sha256 $(sha256sum "$WORK/kit.tar" | cut -c1-16) (expected $(cat .gpu/kit.sha 2>/dev/null))"
tar -xf "$WORK/kit.tar" -C "$WORK" && rm "$WORK/kit.tar"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target "$WORK/site" "$WORK"/whl/*.whl
export PYTHONPATH="$WORK/site:$PWD" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
  PYTHONUNBUFFERED=1 FSCORE_MODEL_LOCK=0
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
lscpu | grep "Model name" >> "$OUT/gpu.txt"
QUIET='it/s\]|s/it\]'
cd "$WORK"
timeout "${RAW_S:-300}" python3 -m scripts.bench_gpu_raw_text run --index dev-index \
  --data data --lm "$LM" --device cuda --budget-s "${BUDGET_S:-180}" \
  --batch-bios "${BATCH_BIOS:-32}" --rows "$OUT/gpu-raw-rows.jsonl" \
  --json "$OUT/gpu-raw-text.json" 2>&1 | grep -v -E "$QUIET" | tail -20
timeout "${VERIFY_S:-180}" python3 -m scripts.bench_gpu verify --index dev-index \
  --labeled data/factscore/labeled-dev/ChatGPT.jsonl --n-bios "${N_BIOS:-20}" --lm "$LM" \
  --backend transformers --device cuda --verifier default --tail-batches 16 \
  --rows "$OUT/gpu-rows.jsonl" --json "$OUT/gpu-verify.json" 2>&1 | grep -v -E "$QUIET" | tail -12
ls -la "$OUT"
