"""How long llama-cpp-python takes to compile here, and which parts of it the time goes to.

    python -m scripts.notebook.bench_llama_build [--cmake-args "-DLLAVA_BUILD=OFF"] [--sdist FILE]

Builds the pinned llama-cpp-python wheel from its source distribution with pip, no pip
cache (as on a fresh machine), keeping CMake's build folder, then reads Ninja's log: the
wall time of the whole build, and the compile time summed per part of the source tree
(llama.cpp's core, ggml, the ``common`` helpers, the multimodal ``mtmd`` library) — what
a build option that leaves a part out would save. Prints JSON lines and a summary.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PIN = "llama-cpp-python==0.3.36"
# Parts of the build, by the object file's path (first match wins).
PARTS = (
    ("mtmd (multimodal)", re.compile(r"tools/mtmd|mtmd")),
    ("common", re.compile(r"(^|/)common/")),
    ("ggml-cpu", re.compile(r"ggml-cpu")),
    ("ggml", re.compile(r"ggml")),
    ("llama", re.compile(r"(^|/)src/")),
)


def ninja_times(log: Path) -> dict[str, float]:
    """Seconds of compile and link steps per part, from a .ninja_log (v5)."""
    seconds: dict[str, float] = {}
    for line in log.read_text().splitlines():
        if line.startswith("#"):
            continue
        start_ms, end_ms, _, output, *_ = line.split("\t")
        part = next((name for name, rx in PARTS if rx.search(output)), "other")
        seconds[part] = seconds.get(part, 0.0) + (int(end_ms) - int(start_ms)) / 1000
    return {k: round(v, 1) for k, v in sorted(seconds.items(), key=lambda kv: -kv[1])}


def main() -> int:
    ap = argparse.ArgumentParser(
        prog="python -m scripts.notebook.bench_llama_build", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--cmake-args", default="", help="CMAKE_ARGS for the build")
    ap.add_argument("--sdist", type=Path, default=None, help="default: pip downloads it")
    ap.add_argument("--python", default=sys.executable, help="the pip's Python")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="llama-build-"))
    build_dir, wheels = work / "build", work / "wheels"
    source = str(args.sdist) if args.sdist else PIN
    env = {**os.environ, "CMAKE_ARGS": args.cmake_args}
    cmd = [args.python, "-m", "pip", "wheel", source, "--no-deps", "--no-cache-dir",
           "--no-binary", "llama-cpp-python", "-w", str(wheels),
           f"--config-settings=build-dir={build_dir}"]  # fmt: skip
    print(f"[llama-build] {' '.join(cmd)} (CMAKE_ARGS={args.cmake_args!r})", file=sys.stderr)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        print(done.stdout[-3000:] + done.stderr[-3000:], file=sys.stderr)
        return done.returncode
    logs = list(build_dir.rglob(".ninja_log"))
    parts = ninja_times(logs[0]) if logs else {}
    wheel = next(wheels.glob("*.whl"))
    row = {
        "cmake_args": args.cmake_args,
        "wall_s": round(seconds, 1),
        "cpus": os.cpu_count(),
        "loadavg_1m": os.getloadavg()[0],
        "wheel_mb": round(wheel.stat().st_size / 1e6, 1),
        "compile_s_by_part": parts,
    }
    print(json.dumps(row))
    total = sum(parts.values())
    print(f"# {PIN}, CMAKE_ARGS={args.cmake_args!r}: {seconds:.0f} s wall on {os.cpu_count()} "
          f"CPUs; compile steps {total:.0f} s in all: "
          + ", ".join(f"{k} {v:.0f} s" for k, v in parts.items()))  # fmt: skip
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
