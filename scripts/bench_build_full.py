"""A full-size `fscore build-index` measured: synthetic FActScore DBs of up to 6M pages.

Each DB is the dev DB's real passages regrouped into ~3-passage pages (the average page of
FActScore's enwiki-20230401.db, see ``scripts.bench_build``) and replicated under new titles.
Each size is built with BM25 only, stage by stage, each stage in its own measured process
(``scripts.measure_process``: wall time, peak RSS of the largest process and of the process
tree, disk): making the source DB, ingest (``--no-bm25``), then bm25 (the same command
resumed). Then ``scripts.lookup_timing`` times what the estimator does over the index (title
lookups and per-page retrieval for the 98 dev topics, and global BM25 queries).

The run first builds a probe size (100K pages), measures the disk a page takes at the build's
peak, and keeps the largest target size that fits the free disk with ``--margin-gb`` to spare
(6M pages when it fits), plus the smaller ``--trend`` sizes. A size's source and index are
deleted once measured (the last one is kept with ``--keep-last``). Each finished size is
saved in ``WORK/build-full-rows.json``, so a rerun skips it; the results file is rewritten
after every size. With ``--eval-bios N``, the largest index is kept and ``fscore eval`` scores
the first N labeled ChatGPT dev bios over it (their atomic facts, retrieve-lm, the default LM),
measured like a stage; a rerun with it added only runs that step.

    nice -n 10 python -m scripts.bench_build_full --work ../big --target 6000000 --eval-bios 2
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import psutil

from scripts.bench_build import DEV_DB, SEPARATOR, realistic_pages
from scripts.common import (
    RESULTS,
    Stopwatch,
    add_data_option,
    data_root,
    git_commit,
    log,
    results_record,
    write_results,
)
from scripts.measure_process import folder_bytes, measure

NAME = "build-full"
TAG = "build-full"
PROBE = 100_000  # the size whose disk per page plans the others
ROUND = 100_000  # the largest size is rounded down to a multiple of this
GB = 1e9


def make_db(n_pages: int, dest: Path, dev_db: Path) -> dict:
    """Writes a FActScore-format DB of exactly ``n_pages`` pages, streamed in chunks."""
    base = [(t, SEPARATOR.join(p), len(p)) for t, p in realistic_pages(dev_db)]
    dest.unlink(missing_ok=True)
    out = sqlite3.connect(dest)
    out.execute("PRAGMA journal_mode=OFF")
    out.execute("PRAGMA synchronous=OFF")
    out.execute("CREATE TABLE documents (title PRIMARY KEY, text)")
    pages = passages = text_bytes = 0
    chunk: list[tuple[str, str]] = []
    for copy in range(math.ceil(n_pages / len(base))):
        for title, text, n in base:
            if pages == n_pages:
                break
            chunk.append((title if copy == 0 else f"{title} ({copy})", text))
            pages, passages, text_bytes = pages + 1, passages + n, text_bytes + len(text)
        if len(chunk) >= 20_000 or pages == n_pages:
            out.executemany("INSERT INTO documents VALUES (?, ?)", chunk)
            out.commit()
            chunk = []
    out.close()
    return {"pages": pages, "passages": passages, "text_bytes": text_bytes,
            "copies": math.ceil(n_pages / len(base)), "base_pages": len(base)}  # fmt: skip


def _stage(cmd: list[str], folders: list[Path], log_path: Path) -> dict:
    log(TAG, " ".join(cmd[2:]))
    row = measure(cmd, folders, log=log_path)
    log(TAG, f"  {json.dumps(row)}")
    return row


def build_size(n_pages: int, work: Path, data: Path) -> dict:
    """Makes, builds (ingest, then bm25) and times one size; returns its row."""
    src, idx = work / f"src-{n_pages}.db", work / f"idx-{n_pages}"
    shutil.rmtree(idx, ignore_errors=True)
    me = [sys.executable, "-m", "scripts.bench_build_full", "--data", str(data)]
    stages = {}
    stages["make_db"] = _stage(
        [*me, "--make-db", str(n_pages), "--dest", str(src)], [src], work / f"make-{n_pages}.log"
    )
    info = json.loads((work / f"make-{n_pages}.log").read_text().splitlines()[0])
    build = [sys.executable, "-m", "factscore_local.cli", "build-index", "--source", str(src),
             "--out", str(idx), "--dense", "none", "--quiet"]  # fmt: skip
    stages["ingest"] = _stage([*build, "--no-bm25"], [src, idx], work / f"ingest-{n_pages}.log")
    stages["bm25"] = _stage(build, [src, idx], work / f"bm25-{n_pages}.log")
    manifest = json.loads((idx / "manifest.json").read_text())
    disk = {
        "source_db": folder_bytes(src),
        "store": folder_bytes(idx / "knowledge.db"),
        "bm25_index": folder_bytes(idx / "bm25"),
        "index_total": folder_bytes(idx),
    }
    return {
        **info,
        "commit": git_commit(),
        "indexed_passages": manifest["counts"]["passages"],
        "builder_timings": manifest["timings"],
        "stages": stages,
        "disk_bytes": disk,
        "lookups": time_lookups(idx, data, n_pages // info["base_pages"] - 1),
    }


def time_lookups(idx: Path, data: Path, last_copy: int) -> dict:
    """``scripts.lookup_timing`` over ``idx``, in its own process."""
    done = subprocess.run(
        [sys.executable, "-m", "scripts.lookup_timing", "--index", str(idx), "--data", str(data),
         "--last-copy", str(last_copy)],  # fmt: skip
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def eval_bios(idx: Path, work: Path, data: Path, n_bios: int) -> dict:
    """``fscore eval`` with the labeled atomic facts of the first ``n_bios`` ChatGPT dev bios
    over ``idx`` (retrieve-lm, the default LM, a fresh cache), measured like a stage."""
    out, cache = work / "eval.jsonl", work / "eval-cache.db"
    cache.unlink(missing_ok=True)
    labeled = data / "factscore" / "labeled-dev" / "ChatGPT.jsonl"
    cmd = [sys.executable, "-m", "factscore_local.cli", "eval", "--index", str(idx),
           "--input", str(labeled), "--use-atomic-facts", "--n-samples", str(n_bios),
           "--verifier", "retrieve-lm", "--cache", str(cache), "--out", str(out),
           "--quiet"]  # fmt: skip
    row = _stage(cmd, [idx], work / "eval.log")
    return {**row, **eval_counts(work), "commit": git_commit()}


def eval_counts(work: Path) -> dict:
    """Bios, facts and seconds per fact of the eval step, from its output and its log (the
    wait for the cores, when another model process held them, is not scoring time)."""
    out, log_text = work / "eval.jsonl", (work / "eval.log").read_text()
    bios = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    facts = sum(b.get("n_facts", 0) for b in bios)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", log_text)
    waited = re.search(r"got the cores after (\d+) s", log_text)
    wall_s = sum(float(x) * 60**i for i, x in enumerate(reversed(wall.group(1).split(":"))))
    waited_s = float(waited.group(1)) if waited else 0.0
    return {"bios": len(bios), "facts": facts, "waited_for_cores_s": waited_s,
            "s_per_fact": round((wall_s - waited_s) / facts, 2) if facts else None}  # fmt: skip


def peak_bytes_per_page(row: dict) -> float:
    """Disk a page takes at the build's peak: the source plus the index folder at its peak
    (during bm25 the Lucene input collection and the index under construction coexist)."""
    peak = max(row["stages"]["bm25"]["disk_peak_bytes"], row["stages"]["ingest"]["disk_peak_bytes"])
    return peak / row["pages"]


def plan(probe: dict, target: int, trend: list[int], free: int, margin: float) -> list[int]:
    """The sizes to build after the probe: the trend sizes and the largest size up to
    ``target`` whose peak fits ``free`` bytes less ``margin`` (rounded down to 100K)."""
    fits = int((free - margin) / peak_bytes_per_page(probe))
    largest = min(target, max(fits // ROUND * ROUND, fits if fits < ROUND else 0))
    return sorted({n for n in trend if n < largest} | {largest})


def figures(rows: dict[str, dict]) -> dict:
    """The flat figures of every built size."""
    out: dict = {}
    for key, row in rows.items():
        f = f"{int(key) // 1000}k"
        out[f"{f}/pages"] = row["pages"]
        out[f"{f}/passages"] = row["indexed_passages"]
        out[f"{f}/text_gb"] = round(row["text_bytes"] / GB, 2)
        for stage, s in row["stages"].items():
            out[f"{f}/{stage}/wall_s"] = s["wall_s"]
            out[f"{f}/{stage}/max_rss_mb"] = s["max_rss_mb"]
            out[f"{f}/{stage}/tree_rss_peak_mb"] = s["tree_rss_peak_mb"]
            out[f"{f}/{stage}/disk_peak_gb"] = round(s["disk_peak_bytes"] / GB, 2)
            out[f"{f}/{stage}/disk_after_gb"] = round(s["disk_after_bytes"] / GB, 2)
        for part, n in row["disk_bytes"].items():
            out[f"{f}/disk/{part}_gb"] = round(n / GB, 2)
        out[f"{f}/peak_bytes_per_page"] = round(peak_bytes_per_page(row))
        # lookups (and, when they were timed again later, the first timing, after the build)
        for pre, lookups in (
            ("", row["lookups"]),
            ("after_build/", row.get("lookups_after_build", {})),
        ):
            for copy in ("first_copy", "last_copy", "first_copy_warm"):
                for what in ("resolve", "first_retrieval", "later_retrieval"):
                    if copy in lookups:
                        median = lookups[copy][what]["median_ms"]
                        out[f"{f}/{pre}{copy}/{what}_median_ms"] = median
            if lookups.get("global_bm25"):
                out[f"{f}/{pre}global_bm25_median_ms"] = lookups["global_bm25"]["median_ms"]
        for name in ("bios", "facts", "wall_s", "waited_for_cores_s", "s_per_fact", "max_rss_mb"):
            if name in row.get("eval", {}):
                out[f"{f}/eval/{name}"] = row["eval"][name]
    return out


def scrub(argv: list[str]) -> list[str]:
    """The arguments with the scratch folder as ``WORK_DIR`` (no machine path is recorded)."""
    out, it = [], iter(argv)
    for arg in it:
        if arg == "--work":
            out += [arg, "WORK_DIR"]
            next(it, None)
        else:
            out.append("--work=WORK_DIR" if arg.startswith("--work=") else arg)
    return out


def _measured_s(row: dict) -> float:
    """The wall seconds of a size's measured stages (and its eval step)."""
    return sum(s["wall_s"] for s in row["stages"].values()) + row.get("eval", {}).get("wall_s", 0)


def record(rows: dict, argv: list[str], watch: Stopwatch, data: Path, planned: list[int]) -> None:
    rec = results_record(
        NAME,
        "scripts.bench_build_full",
        scrub(argv),
        {
            "source": f"{DEV_DB.as_posix()} regrouped into ~3-passage pages, replicated",
            "sizes_planned": planned,
            "sizes_done": [int(k) for k in rows],
            "memory_gb": round(psutil.virtual_memory().total / GB, 1),
        },  # fmt: skip
        figures(rows),
        watch,
        # the builds' commit: a resumed run (e.g. one adding --eval-bios) keeps it
        commit=next((r["commit"] for r in rows.values() if r.get("commit")), None),
        # every measured stage's wall time, whichever run (a resumed one too) measured it
        seconds=round(sum(map(_measured_s, rows.values())), 1),
        rows=rows,
    )
    log(TAG, f"wrote {write_results(rec)}")


def orchestrate(args: argparse.Namespace, argv: list[str]) -> None:
    data = data_root(args.data)
    work = args.work.resolve()
    if work.is_relative_to(Path(__file__).resolve().parents[1]):
        raise SystemExit(f"--work {work} lies inside the checkout: choose a folder outside it")
    work.mkdir(parents=True, exist_ok=True)
    saved = work / "build-full-rows.json"
    rows = json.loads(saved.read_text()) if saved.exists() else {}
    old = RESULTS / f"{NAME}.json"
    if rows and old.exists():  # rows built before rows kept their commit: the file's
        commit = json.loads(old.read_text())["commit"]
        for row in rows.values():
            row.setdefault("commit", commit)
    watch = Stopwatch()
    planned = [args.probe]

    def run(n: int, keep: bool) -> None:
        if str(n) not in rows:
            rows[str(n)] = build_size(n, work, data)
            saved.write_text(json.dumps(rows, indent=1))
            record(rows, argv, watch, data, planned)
        if not keep:
            (work / f"src-{n}.db").unlink(missing_ok=True)
            shutil.rmtree(work / f"idx-{n}", ignore_errors=True)

    run(args.probe, keep=False)
    free = shutil.disk_usage(work).free
    plan_file = work / "build-full-plan.json"
    if plan_file.exists():  # a resumed run keeps its plan (the kept index takes disk now)
        sizes = json.loads(plan_file.read_text())
    elif len(rows) > 1:  # rows of a run from before the plan was saved
        sizes = sorted(int(k) for k in rows if int(k) != args.probe)
    else:
        sizes = plan(rows[str(args.probe)], args.target, args.trend, free, args.margin_gb * GB)
    plan_file.write_text(json.dumps(sizes))
    planned[:] = [args.probe, *sizes]
    log(TAG, f"free {free / GB:.1f} GB, peak {peak_bytes_per_page(rows[str(args.probe)]):.0f} "
             f"bytes/page at {args.probe} pages: building {sizes}")  # fmt: skip
    for n in sizes:
        run(n, keep=(args.keep_last or args.eval_bios > 0) and n == sizes[-1])
    last = rows[str(sizes[-1])]
    kept = work / f"idx-{sizes[-1]}"
    if "eval" in last and (work / "eval.jsonl").exists():  # counted from its files
        last["eval"].update(eval_counts(work))
    if args.eval_bios and "eval" not in last and kept.is_dir():
        if "first_copy_warm" not in last["lookups"]:  # timed before the warm pass existed
            last["lookups_after_build"] = last["lookups"]
            last["lookups"] = time_lookups(kept, data, sizes[-1] // last["base_pages"] - 1)
            last["lookups_commit"] = git_commit()
        last["eval"] = eval_bios(kept, work, data, args.eval_bios)
        saved.write_text(json.dumps(rows, indent=1))
    record(rows, argv, watch, data, planned)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m scripts.bench_build_full")
    ap.add_argument("--work", type=Path, help="scratch folder outside the checkout")
    ap.add_argument("--target", type=int, default=6_000_000, help="pages of the largest size")
    ap.add_argument("--trend", default="300000,1000000", help="smaller sizes (comma-separated)")
    ap.add_argument("--margin-gb", type=float, default=10.0, help="disk left free at the peak")
    ap.add_argument("--probe", type=int, default=PROBE, help="pages of the probe size")
    ap.add_argument("--keep-last", action="store_true", help="keep the largest index")
    ap.add_argument("--eval-bios", type=int, default=0,
                    help="then score this many labeled bios over the largest index")  # fmt: skip
    ap.add_argument("--make-db", type=int, help=argparse.SUPPRESS)  # one stage, in a child
    ap.add_argument("--dest", type=Path, help=argparse.SUPPRESS)
    add_data_option(ap)
    argv = sys.argv[1:]
    args = ap.parse_args()
    if args.make_db:
        info = make_db(args.make_db, args.dest, data_root(args.data) / DEV_DB)
        print(json.dumps(info), flush=True)
        return
    if args.work is None:
        ap.error("--work is required")
    args.trend = [int(n) for n in args.trend.split(",") if n]
    orchestrate(args, argv)


if __name__ == "__main__":
    main()
