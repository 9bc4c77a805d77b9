"""The first command as a new user runs it: ``bash scripts/setup.sh`` in a fresh clone.

    python -m scripts.notebook.bench_first_command --results first-command

The clone is of this checkout's HEAD, in ``--work`` (no ``../shared`` beside it: the demo
fetches its dump excerpt from PyPI), with empty pip, model and source caches
(``PIP_CACHE_DIR`` and ``XDG_CACHE_HOME`` pointing at empty folders), under
``/usr/bin/time -v``. The stages are read from what setup.sh and ``fscore demo`` print
(``setup: ... took N s``; the demo's index and its scoring); the whole command's wall time
and peak memory from ``time``. Other model processes must be stopped first: the demo waits
for the machine's model lock, and a busy machine makes every stage slower. A timing, so it
is recorded, not replayed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from scripts.common import ROOT, git_commit, log, results_record, write_results

SETUP_STAGE = re.compile(r"^setup: (.+) took (\d+) s$", re.M)
DEMO_INDEX = re.compile(r"^demo: (\d+) pages, .* (\d+) passages in ([\d.]+)s$", re.M)
DEMO_SCORED = re.compile(r"^demo: (\d+) bios, (\d+) facts scored in ([\d.]+)s$", re.M)
WALL = re.compile(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)")
PEAK = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")


def wall_seconds(text: str) -> float:
    """``time -v``'s wall clock ("8:43.12" or "1:02:03") in seconds."""
    parts = [float(p) for p in text.split(":")]
    return round(sum(p * 60**i for i, p in enumerate(reversed(parts))), 1)


def stages(output: str) -> dict[str, float]:
    """The figures of one run's output: each setup stage, the demo's index and scoring, the
    whole command and its peak memory.

    Example:
        >>> out = "setup: torch took 16 s\\ndemo: 4 bios, 25 facts scored in 174.2s\\n"
        >>> stages(out + "Elapsed (wall clock) time (h:mm:ss or m:ss): 5:01.50\\n")
        {'stages/torch/seconds': 16, 'stages/fscore demo: scoring 4 bios (25 facts)/seconds': 174.2, 'stages/whole command/seconds': 301.5}
    """  # noqa: E501
    figures: dict[str, float] = {}
    for name, seconds in SETUP_STAGE.findall(output):
        figures[f"stages/{name}/seconds"] = int(seconds)
    if match := DEMO_INDEX.search(output):
        pages, passages, seconds = match.groups()
        name = f"fscore demo: index of {pages} pages ({passages} passages)"
        figures[f"stages/{name}/seconds"] = float(seconds)
    if match := DEMO_SCORED.search(output):
        bios, facts, seconds = match.groups()
        figures[f"stages/fscore demo: scoring {bios} bios ({facts} facts)/seconds"] = float(seconds)
    if match := WALL.search(output):
        figures["stages/whole command/seconds"] = wall_seconds(match.group(1))
    if match := PEAK.search(output):
        figures["peak_rss_gb"] = round(int(match.group(1)) / 1024**2, 2)
    return figures


def demo_bios() -> int:
    """How many bios the demo scores (data/demo_bios.jsonl)."""
    return len((ROOT / "data" / "demo_bios.jsonl").read_text("utf-8").splitlines())


def run(work: Path) -> tuple[str, int]:
    """Clones HEAD into ``work`` and runs setup.sh there with empty caches; its output
    (stdout and stderr together) and exit code."""
    if work.exists():
        shutil.rmtree(work)
    clone, caches = work / "clone", work / "caches"
    (caches / "pip").mkdir(parents=True)
    (caches / "xdg").mkdir()
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("FSCORE_") and k not in ("VIRTUAL_ENV", "PYTHONPATH")}  # fmt: skip
    env |= {"PIP_CACHE_DIR": str(caches / "pip"), "XDG_CACHE_HOME": str(caches / "xdg")}
    done = subprocess.run(["/usr/bin/time", "-v", "bash", "scripts/setup.sh"], cwd=clone,
                          env=env, capture_output=True, text=True)  # fmt: skip
    output = done.stdout + done.stderr
    (work / "setup.log").write_text(output, "utf-8")
    return output, done.returncode


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path("bench-out/first-command"))
    ap.add_argument("--results", default=None, help="write scripts/results/NAME.json")
    args = ap.parse_args(argv)
    output, code = run(args.work.resolve())
    if code != 0:
        raise SystemExit(f"setup.sh failed ({code}); its output: {args.work / 'setup.log'}")
    figures = stages(output)
    log("first-command", "; ".join(f"{k}: {v}" for k, v in figures.items()))
    if args.results:
        data = {"clone": f"fresh, of commit {git_commit()}, no ../shared beside it",
                "caches": "empty pip, model and source caches",
                "demo": f"the MediaWiki excerpt and the {demo_bios()} demo bios"}  # fmt: skip
        record = results_record(args.results, "scripts.notebook.bench_first_command", argv, data,
                                figures, recorded_because="a timing of a whole setup")  # fmt: skip
        record["tables"] = [{"prefix": "stages", "rows_head": "stage",
                             "columns": [{"head": "seconds", "cell": "{seconds}"}]}]  # fmt: skip
        write_results(record)


if __name__ == "__main__":
    main()
