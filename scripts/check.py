"""Check the recorded figures: re-run each benchmark (or replay it from its committed cache)
and compare every figure with its results file.

    python -m scripts.check                 # every results file in scripts/results/
    python -m scripts.check tables-98 fragments-98
    python -m scripts.check --list          # what is recorded, and what can be replayed

A results file whose ``replay`` is false (a timing, a run of hours) is listed as "recorded,
not re-run", or "recorded, code in git history" when its code left the tree (its ``code``
says where: ``git show COMMIT:PATH``). One with a ``replay`` entry is run again as
``python -m <module> <argv>``, its ``{index}``, ``{demo_index}`` and ``{tmp}`` placeholders
filled in (``{index}``: ``--index``, built from the dev pages with BM25 when absent;
``{demo_index}``: ``--demo-index``, built from the demo's dump excerpt as ``fscore demo``
builds it, when absent and a replay names it); with ``replay.cached`` the run must also
compute nothing (every model result comes from the committed cache). Prints OK or FAIL per
figure; exits 1 on any FAIL.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from scripts.blas import replay_env
from scripts.common import (
    BENCH_OUT,
    RESULTS,
    ROOT,
    add_data_option,
    code_left,
    data_root,
    read_results,
)
from scripts.replay import scratch_argv

DEV_DB = Path("enwiki-20230401", "enwiki-20230401-dev.db")  # under the data root
DEMO_INDEX = BENCH_OUT / "demo-index"  # the demo's index, as ``fscore demo`` builds it


@dataclass(frozen=True)
class Verdict:
    """One figure compared: its name, the recorded and the new value, and whether they
    agree."""

    name: str
    recorded: object
    got: object
    ok: bool

    def line(self) -> str:
        mark = "OK  " if self.ok else "FAIL"
        shown = f"{self.recorded}" if self.ok else f"recorded {self.recorded}, got {self.got}"
        return f"{mark} {self.name}: {shown}"


def same(recorded: object, got: object, tolerance: float = 0.0) -> bool:
    """Whether a new value reproduces a recorded one: numbers within ``tolerance`` (NaN
    matches NaN), anything else equal."""
    numbers = (int, float)
    if isinstance(recorded, bool) or isinstance(got, bool):  # True is not the number 1 here
        return type(recorded) is type(got) and recorded == got
    if isinstance(recorded, numbers) and isinstance(got, numbers):
        if math.isnan(recorded) or math.isnan(got):
            return math.isnan(recorded) and math.isnan(got)
        return abs(recorded - got) <= tolerance + 1e-9
    return recorded == got


def compare(recorded: dict, got: dict, tolerance: float = 0.0) -> list[Verdict]:
    """Every recorded figure against the new run's (a figure the run no longer gives
    fails).

    Example:
        >>> [v.ok for v in compare({"er": 3.3, "f1": 81.7}, {"er": 3.3, "f1": 81.6})]
        [True, False]
    """
    missing = object()
    out = []
    for name, want in recorded.items():
        value = got.get(name, missing)
        ok = value is not missing and same(want, value, tolerance)
        out.append(Verdict(name, want, None if value is missing else value, ok))
    return out


def dev_index(index: Path, data: Path) -> Path:
    """The dev pages' index: ``index`` when it exists, else built there (BM25 only: the
    replayed runs retrieve with BM25, and their cache keys hold the prompts, not the
    index)."""
    if (index / "manifest.json").exists():
        return index
    from factscore_local.index.builder import BuildOptions, build_index

    source = data / DEV_DB
    if not source.exists():
        raise SystemExit(f"cannot build the dev index: {source} not found")
    print(f"building {index} from {source} (BM25 only)", file=sys.stderr, flush=True)
    build_index(BuildOptions(source=source, out=index, dense=None, progress=False))
    return index


def demo_index(index: Path) -> Path:
    """The demo's index: ``index`` when it exists, else built there as ``fscore demo``
    builds it (``build_demo_index``: the dump excerpt of the shared data, else of the
    gensim wheel; BM25, and the pages' leads embedded), so that the replayed prompts hold
    the demo's passages and find their committed model results."""
    manifest = index / "manifest.json"
    if manifest.exists() and json.loads(manifest.read_text("utf-8")).get("complete"):
        return index
    from factscore_local.index.demo_data import build_demo_index

    print(f"building {index} from the demo's dump excerpt", file=sys.stderr, flush=True)
    try:  # (an interrupted build resumes)
        build_demo_index(index, progress=False)
    except Exception as exc:  # no dump excerpt, no embedder, ...: this record fails
        raise RuntimeError(f"cannot build the demo index {index}: {exc}") from exc
    return index


def needs_demo_index(record: dict) -> bool:
    """Whether a record's replay names the demo's index."""
    return any("{demo_index}" in arg for arg in scratch_argv(record["replay"]["argv"]))


def replay_argv(record: dict, index: Path, tmp: Path, demo: Path | None = None) -> list[str]:
    """The replay's arguments with their placeholders filled in (``{demo_index}`` with
    ``demo``, which a replay naming it needs)."""
    fill = {"{index}": str(index), "{tmp}": str(tmp)}
    if demo is not None:
        fill["{demo_index}"] = str(demo)
    out = []
    # The current rule applied again (it keeps placeholders): a record written before an
    # option got its placeholder (--ship) still replays into scratch.
    for arg in scratch_argv(record["replay"]["argv"]):
        for key, value in fill.items():
            arg = arg.replace(key, value)
        if "{demo_index}" in arg:
            raise ValueError(f"{record.get('name', 'a record')}: its replay needs the demo index")
        out.append(arg)
    return out


def replay(
    record: dict, index: Path, data: Path, verbose: bool, demo: Path = DEMO_INDEX
) -> tuple[dict, float]:
    """Runs a results file's replay in a fresh process (building the demo index at ``demo``
    first when the replay names it and it is absent); returns its new results and the wall
    seconds."""
    demo = demo_index(demo) if needs_demo_index(record) else None
    with tempfile.TemporaryDirectory(prefix="fscore-check-") as folder:
        tmp = Path(folder)
        out = tmp / "results.json"
        argv = [*replay_argv(record, index, tmp, demo), "--data", str(data),
                "--results-out", str(out)]  # fmt: skip
        command = [sys.executable, "-m", record["module"], *argv]
        print(f"# {record['name']}: {' '.join(command[1:])}", flush=True)
        start = time.perf_counter()
        # Under the OpenBLAS kernel and threads the record ran with: a head fitted with
        # other ones ends with other weights (scripts/blas.py).
        done = subprocess.run(command, cwd=ROOT, capture_output=not verbose, text=True,
                              env=replay_env(record))  # fmt: skip
        seconds = time.perf_counter() - start
        if done.returncode != 0 or not out.exists():
            tail = (done.stderr or "")[-3000:] if not verbose else ""
            raise RuntimeError(f"{record['name']}: the replay failed ({done.returncode})\n{tail}")
        return read_results(out), seconds


def check(
    record: dict, index: Path, data: Path, verbose: bool = False, demo: Path = DEMO_INDEX
) -> bool:
    """Replays one results file and prints a verdict per figure; True when all agree."""
    got, seconds = replay(record, index, data, verbose, demo)
    verdicts = compare(record["figures"], got["figures"], record.get("tolerance", 0.0))
    if record["replay"].get("cached"):
        # Everything from the committed cache: the run added no model result.
        verdicts.append(Verdict("computed (model results not in the cache)", 0,
                                got.get("computed"), got.get("computed") == 0))  # fmt: skip
    for verdict in verdicts:
        if verbose or not verdict.ok:
            print(verdict.line())
    failed = sum(not v.ok for v in verdicts)
    status = "FAIL" if failed else "OK"
    print(f"{status} {record['name']}: {len(verdicts) - failed} of {len(verdicts)} figures "
          f"reproduced in {seconds:.0f} s (recorded {record['date']} at {record['commit']})",
          flush=True)  # fmt: skip
    return not failed


def results_files(names: list[str]) -> list[Path]:
    """The results files named (all of them when none is)."""
    if not names:
        return sorted(RESULTS.glob("*.json"))
    paths = [RESULTS / f"{name.removesuffix('.json')}.json" for name in names]
    unknown = [p.stem for p in paths if not p.exists()]
    if unknown:
        known = ", ".join(p.stem for p in sorted(RESULTS.glob("*.json")))
        raise SystemExit(f"no results file for {', '.join(unknown)} (known: {known})")
    return paths


def main(argv: list[str] | None = None) -> int:
    """Checks the results files; returns 1 when a figure is not reproduced."""
    ap = argparse.ArgumentParser(
        prog="python -m scripts.check",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("names", nargs="*", help="results files (default: all)")
    add_data_option(ap)
    ap.add_argument("--index", type=Path, default=BENCH_OUT / "dev-index",
                    help="index of the dev pages (built here when absent)")  # fmt: skip
    ap.add_argument("--demo-index", type=Path, default=DEMO_INDEX,
                    help="index of the demo's dump excerpt (built here when absent and a "
                    "replay needs it)")  # fmt: skip
    ap.add_argument("--list", action="store_true", help="list the results files and stop")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print every figure and the runs' progress")  # fmt: skip
    args = ap.parse_args(argv)
    records = [read_results(path) for path in results_files(args.names)]
    ok = True
    for record in records:
        if not record.get("replay") or args.list:
            state = "replayable" if record.get("replay") else "recorded, not re-run"
            left = code_left(record)
            print(f"{'recorded, code in git history' if left else state}: {record['name']} "
                  f"[{record.get('status', 'current')}] ({len(record['figures'])} figures; "
                  f"{record['date'][:10]}, {record['commit']}): {record['command']}"
                  + (f" ({left})" if left else ""))  # fmt: skip
            continue
        data = data_root(args.data)
        try:
            ok &= check(record, dev_index(args.index, data), data, args.verbose, args.demo_index)
        except RuntimeError as exc:
            print(f"FAIL {exc}")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
