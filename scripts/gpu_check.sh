#!/usr/bin/env bash
# The GPU check (scripts/bench_gpu.py) as run on a lent GPU machine, from the
# repository root.
#
# What travels there (git-ignored, under .gpu/): the kit, a tar of the 0.5B GGUF and MiniLM
# (m/...) cut into parts under the 64 MiB a call may carry, each carried by its own call and
# moved into .gpu/kit/; the wheels the machine lacks (factscore_local, gguf, pysbd, rank_bm25);
# a copy of the dev index, the first bios of the ChatGPT labeled file and bench_gpu.py (the
# checkout's own package folders do not import without installing). The last call carries
# the last part and runs this script. Everything it unpacks stays under .gpu/ (kit/: the
# parts, which an earlier call may already have moved there; work/: the models; site/: the
# wheels installed). The CPU steps and `record` run on the project's machine.
set -u
cd .gpu
mkdir -p kit work site && mv parts/p* kit/ 2>/dev/null
cat kit/p* > work/kit.tar
echo "kit sha256 $(sha256sum work/kit.tar | cut -c1-16) (expected $(cat kit.sha))"
tar -xf work/kit.tar -C work && rm work/kit.tar
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target site whl/*.whl
export PYTHONPATH="$PWD/site" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt"
lscpu | grep "Model name" >> "$OUT/gpu.txt"
cat "$OUT/gpu.txt"
LM=work/m/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
V="verify --index dev-index --labeled chatgpt-head.jsonl --lm $LM --backend transformers"
QUIET='it/s\]|s/it\]'
timeout 240 python3 bench_gpu.py $V --device cuda --tail-batches 16,1 \
  --rows "$OUT/gpu-rows.jsonl" --json "$OUT/gpu-verify.json" 2>&1 | grep -v -E "$QUIET" | tail -12
timeout 150 python3 bench_gpu.py $V --device cuda --dtype float32 --tail-batches 16 \
  --rows "$OUT/gpu32-rows.jsonl" --json "$OUT/gpu32-verify.json" 2>&1 | grep -v -E "$QUIET" | tail -8
timeout 60 python3 bench_gpu.py encode --index dev-index --dense work/m/minilm --device cuda \
  --n 50000 --batch 512 --json "$OUT/gpu-encode.json" 2>&1 | tail -4
timeout 45 python3 bench_gpu.py encode --index dev-index --dense work/m/minilm --device cpu \
  --n 2000 --batch 64 --json "$OUT/devcpu-encode.json" 2>&1 | tail -4
ls -la "$OUT"
