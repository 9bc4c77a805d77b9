"""The kit a lent GPU machine needs for the GPU study (``scripts/gpu_study.sh``), cut into
parts that each fit one device call.

A device call carries the working tree and at most 64 MiB in all, and the machine has no
network: the default 1.5B GGUF (1.1 GB), the wheels it lacks, the dev index's page store
and the labeled dev files travel as one tar cut into parts, one part a call, each moved out
of the checkout on arrival; the last call carries the last part and runs the study.

    python -m scripts.gpu_kit make --lm qwen2.5-coder-1.5b-instruct-q4_k_m   # here
    python -m scripts.gpu_kit leave   # the replay caches (90 MB) stay home for the calls
    python -m scripts.gpu_kit plan    # the calls, and whether each fits
    python -m scripts.gpu_kit back    # after the last call: `git status` is clean again

``make`` writes ``.gpu/`` (git-ignored): ``all/pNN`` (the parts), ``kit.sha`` and
``calls.json`` (per call: its part and command). ``leave`` takes ``scripts/cache``, which
no GPU step reads, out of git's index and ignores it (the files stay on disk).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from scripts.common import ROOT

CALL_LIMIT = 64 * 2**20  # what one device call may carry, the working tree included
PART_SIZE = 56 * 2**20  # a part, leaving room for the tree's own files (after `leave`)
KIT = ROOT / ".gpu"
# What the GPU machine's image holds of what the project needs (the device tool's package
# list), so that only the rest travels, as wheels for its Python 3.12, at the versions
# installed here; the project's own wheel is built from this checkout.
DEVICE_HAS = {"numpy", "torch", "transformers", "tokenizers", "tiktoken", "jinja2", "click",
              "tqdm", "httpx", "httpcore", "anyio", "h11", "idna", "certifi", "safetensors",
              "accelerate", "regex", "requests", "pyyaml", "packaging", "typer", "rich",
              "huggingface-hub", "filelock", "fsspec", "typing-extensions", "markupsafe",
              "psutil", "urllib3", "charset-normalizer", "setuptools", "sentencepiece",
              "hf-xet", "shellingham", "markdown-it-py", "mdurl", "pygments", "protobuf",
              "colorama", "mpmath", "networkx", "sympy", "six", "wrapt", "annotated-doc",
              "kernels", "httpx2", "triton"}  # fmt: skip
RECEIVE = "mkdir -p $HOME/kit && mv .gpu/parts/p* $HOME/kit/"
# Tracked folders that stay on this machine during the device calls (see ``leave``).
STAY = ("scripts/cache",)


def split(path: Path, out: Path, size: int = PART_SIZE) -> list[Path]:
    """Cuts ``path`` into ``out/p000``, ``p001``, ... of ``size`` bytes at most."""
    out.mkdir(parents=True, exist_ok=True)
    parts = []
    with path.open("rb") as source:
        while chunk := source.read(size):
            part = out / f"p{len(parts):03d}"
            part.write_bytes(chunk)
            parts.append(part)
    return parts


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          check=True).stdout  # fmt: skip


def travelling_size(root: Path = ROOT) -> int:
    """Bytes of what every device call sends besides its carry: the tracked files and the
    untracked ones git does not ignore."""
    names = git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return sum((root / n).stat().st_size for n in names.split("\0") if n and (root / n).is_file())


def exclude(root: Path, add: list[str] = (), drop: list[str] = ()) -> None:
    """Adds and drops lines of the checkout's ``.git/info/exclude``."""
    path = root / ".git" / "info" / "exclude"
    lines = path.read_text().splitlines() if path.exists() else []
    lines = [x for x in lines if x not in drop] + [x for x in add if x not in lines]
    path.write_text("".join(f"{x}\n" for x in lines))


def leave(root: Path = ROOT, stay: tuple[str, ...] = STAY) -> int:
    """Takes ``stay`` out of what a device call sends (refused where it has changes of its
    own, which ``back`` could not tell apart). Returns the size that travels then."""
    if git(root, "status", "--porcelain", "--", *stay).strip():
        raise SystemExit(f"error: {', '.join(stay)} has uncommitted changes: commit them first")
    git(root, "rm", "-r", "-q", "--cached", "--", *stay)
    exclude(root, add=[f"/{p}/" for p in stay])
    return travelling_size(root)


def back(root: Path = ROOT, stay: tuple[str, ...] = STAY) -> None:
    """Undoes ``leave``: ``stay`` is tracked again and no longer ignored."""
    exclude(root, drop=[f"/{p}/" for p in stay])
    git(root, "reset", "-q", "--", *stay)


def needed_wheels(top: str = "factscore-local", extras: tuple[str, ...] = ("transformers",)):
    """``NAME==VERSION`` of every distribution the project needs (its core and ``extras``,
    as installed here) that the GPU machine lacks."""
    import re
    from importlib import metadata

    def name(req: str) -> str:
        return re.split(r"[\s;<>=!~\[(]", req, maxsplit=1)[0].lower().replace("_", "-")

    seen, todo, out = set(), [(top, extras)], []
    while todo:
        dist, wanted = todo.pop()
        if dist in seen:
            continue
        seen.add(dist)
        try:
            found = metadata.distribution(dist)
        except metadata.PackageNotFoundError:
            continue
        if dist != top and dist not in DEVICE_HAS and dist != "torch":
            out.append(f"{found.metadata['Name']}=={found.version}")
        for req in found.requires or []:
            marker = req.split(";", 1)[1] if ";" in req else ""
            if "extra" in marker and not any(f'"{e}"' in marker for e in wanted):
                continue
            if "python_version" in marker or "sys_platform" in marker:
                continue
            todo.append((name(req), ()))
    return sorted(out, key=str.lower)


def calls(parts: list[str], study: str) -> list[dict]:
    """One device call per part: each moves its part out of the checkout; the last one
    also runs the study."""
    out = [{"carry": [".gpu/parts"], "part": name, "command": RECEIVE} for name in parts]
    out[-1]["command"] = f"{RECEIVE} && {study}"
    return out


def make(args: argparse.Namespace) -> dict:
    from factscore_local.model_store import resolve_lm
    from scripts.check import dev_index
    from scripts.common import data_root, labeled_dir

    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp) / "kit"
        (stage / "m").mkdir(parents=True)
        model = resolve_lm(args.lm)
        shutil.copy(model, stage / "m" / model.name)
        whl = stage / "whl"
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(whl),
                        str(ROOT)], check=True)  # fmt: skip
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--only-binary=:all:", "--python-version", "3.12", "--implementation",
                        "cp", "--platform", "manylinux_2_28_x86_64", "--platform",
                        "manylinux2014_x86_64", "--platform", "any", "-d", str(whl),
                        *needed_wheels()], check=True)  # fmt: skip
        index = dev_index(ROOT / "bench-out" / "dev-index", data_root())
        shutil.copytree(index, stage / "dev-index")
        shutil.copytree(labeled_dir(data_root()), stage / "data" / "factscore" / "labeled-dev")
        tar = Path(tmp) / "kit.tar"
        with tarfile.open(tar, "w") as archive:
            archive.add(stage, arcname=".")
        sha = hashlib.sha256(tar.read_bytes()).hexdigest()
        shutil.rmtree(KIT / "all", ignore_errors=True)
        parts = split(tar, KIT / "all", args.part_mib * 2**20)
    (KIT / "kit.sha").write_text(sha[:16] + "\n")
    study = f"LM=m/{model.name} bash scripts/gpu_study.sh"
    plan = {"lm": model.name, "sha256": sha, "parts": [p.name for p in parts],
            "calls": calls([p.name for p in parts], study)}  # fmt: skip
    (KIT / "calls.json").write_text(json.dumps(plan, indent=1) + "\n")
    exclude(ROOT, add=["/.gpu/"])
    return plan


def show_plan(_: argparse.Namespace) -> dict:
    plan = json.loads((KIT / "calls.json").read_text())
    tree = travelling_size()
    biggest = max((KIT / "all" / p).stat().st_size for p in plan["parts"])
    fits = tree + biggest <= CALL_LIMIT
    print(f"{len(plan['calls'])} device calls for {plan['lm']} (tar sha256 {plan['sha256'][:16]})")
    print(f"working tree {tree / 2**20:.1f} MiB + a part {biggest / 2**20:.1f} MiB: "
          + ("fits" if fits else f"over the {CALL_LIMIT // 2**20} MiB a call carries"
             + " (python -m scripts.gpu_kit leave takes the replay caches out)"))  # fmt: skip
    for i, call in enumerate(plan["calls"]):
        print(f"  {i + 1}. mv .gpu/all/{call['part']} .gpu/parts/ ; run carry={call['carry']} "
              f"command={call['command']!r}")  # fmt: skip
    return {"fits": fits, **plan}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    m = sub.add_parser("make", help="build the kit's parts and the calls")
    m.add_argument("--lm", default=None, help="an embedded model (default: the default 1.5B)")
    m.add_argument("--part-mib", type=int, default=PART_SIZE // 2**20)
    sub.add_parser("plan", help="print the calls, and whether the tree leaves room")
    sub.add_parser("leave", help=f"take {', '.join(STAY)} out of what the calls send")
    sub.add_parser("back", help="undo leave")
    args = parser.parse_args(argv)
    steps = {"make": make, "plan": show_plan, "back": lambda _: back(),
             "leave": lambda _: print(f"{leave() / 2**20:.1f} MiB travels a call")}  # fmt: skip
    steps[args.step](args)


if __name__ == "__main__":
    main()
