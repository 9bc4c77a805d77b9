"""The long model run behind the raw-text figures: every dev bio decomposed by the project
(the committed ``own-decomp-98`` decomposition) and its facts verified by the default rule,
with each verdict's hidden state read in the same pass (the head's input, issue 48).

    python -m scripts.raw_text_run --index dev-index --cache bench-out/raw-text-cache.db \\
        --seed-cache scripts/cache/own-decomp-98.jsonl.gz --rows bench-out/raw-text-rows \\
        --export scripts/cache/raw-text-98

Topics go in the tables' order (round robin over the five frequency classes), one topic's
three bios at a time; each topic's rows are appended to ``--rows`` as soon as they are
scored, and a topic whose rows are there already is skipped, so a killed run resumes from
its rows and its cache. Every ``--export-every`` seconds the results computed since the
last export are written to a new continuation file ``<export>-partN.jsonl.gz`` (the
verification results and, apart, ``<export>-states-partN.jsonl.gz``, the states), so that
the hours of 2 cores are not lost with the machine.

``--labeled`` runs the tables' main pass instead (``scripts.tables``: page evidence, the
labels' model atomic facts and the human atomic facts): its verdicts are in the committed
``dev-tables-98`` cache, and the run reads their hidden states, the training data of a
head (issue 48); ``--export scripts/cache/states-98`` keeps them apart.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from factscore_local.config import build_config
from factscore_local.labels.validation import subject_name
from factscore_local.pipeline.estimator import Estimator
from factscore_local.runtime.cache import read_export
from scripts.caches import add_cache_options, export_part, seed_cache
from scripts.common import SUBJECTS, add_data_option, data_root, log
from scripts.tables.runner import Runner

KINDS = {"results": ("true_false", "generate"), "states": ("state",)}


def _done_topics(rows_dir: Path) -> set[str]:
    """Topics whose three bios have rows in rows_dir."""
    seen: dict[str, int] = {}
    for path in rows_dir.glob("*.jsonl"):
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                topic = json.loads(line)["topic"]
                seen[topic] = seen.get(topic, 0) + 1
    return {t for t, n in seen.items() if n >= len(SUBJECTS)}


def export_new(cache: Path, prefix: Path) -> list[Path]:
    """New continuation files of the results not in earlier parts (nor in the seeds)."""
    written = []
    for name, kinds in KINDS.items():
        tag = "" if name == "results" else "-states"
        # the model results leave out every committed cache (the seeds); the states only
        # their own earlier parts
        seeds = sorted(prefix.parent.glob("*.jsonl.gz")) if name == "results" else ()
        part = export_part(cache, prefix.with_name(prefix.name + tag), kinds, seeds, "raw-text")
        written += [part] if part else []
    return written


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    add_cache_options(ap, Path("bench-out/raw-text-cache.db"))
    add_data_option(ap)
    ap.add_argument("--lm", default=None)
    ap.add_argument("--rows", type=Path, default=Path("bench-out/raw-text-rows"))
    ap.add_argument("--export", type=Path, default=None, help="continuation files' prefix")
    ap.add_argument("--export-every", type=float, default=1800.0, help="seconds")
    ap.add_argument("--topics", type=int, default=98)
    ap.add_argument("--no-states", action="store_true")
    ap.add_argument("--labeled", action="store_true", help="the tables' main pass, states")
    ap.add_argument("--prefix-states", type=Path, default=None,
                    help="keep the evaluated page prefixes here (outside the repo), for a "
                    "later pass over the same pages (the counterfactual probes)")  # fmt: skip
    args = ap.parse_args(argv)
    seed_cache(args.cache, args.seed_cache, "raw-text")
    evidence = "page" if args.labeled else "auto"
    run = Runner(args.index, args.cache, data_root(args.data), args.lm, None, evidence)
    bios = run.bios(args.topics)
    done = _done_topics(args.rows)
    args.rows.mkdir(parents=True, exist_ok=True)
    config = build_config({
        "index": args.index, "lm": args.lm, "cache": args.cache, "gamma": 0,
        "use_atomic_facts": args.labeled, "validate": args.labeled, "evidence": evidence,
        "read_states": not args.no_states, "chunk_bios": len(SUBJECTS),
        "prefix_states": args.prefix_states,
    })  # fmt: skip
    estimator = Estimator(config)
    last_export = time.monotonic()
    topics = [t for t in dict.fromkeys(b.topic for b in bios) if t not in done]
    log("raw-text", f"{len(topics)} topics to go ({len(done)} done)")
    for n, topic in enumerate(topics, 1):
        start = time.perf_counter()
        rows = estimator.run([b for b in bios if b.topic == topic], None, progress=False)
        for row in rows:
            with (args.rows / f"{subject_name(row.source)}.jsonl").open("a", encoding="utf-8") as f:
                f.write(json.dumps(row.to_json(), ensure_ascii=False) + "\n")
        facts = sum(len(r.decisions) + (len(r.human.facts) if r.human else 0) for r in rows)
        log("raw-text", f"{n}/{len(topics)} {topic}: {facts} facts in "
            f"{time.perf_counter() - start:.0f} s")  # fmt: skip
        if args.export and time.monotonic() - last_export > args.export_every:
            export_new(args.cache, args.export)
            last_export = time.monotonic()
    if args.export:
        export_new(args.cache, args.export)


def read_parts(prefix: Path) -> int:
    """How many results the continuation files of prefix hold (a check of their reading)."""
    return sum(len(read_export(p)) for p in prefix.parent.glob(f"{prefix.name}*-part*.jsonl.gz"))


if __name__ == "__main__":
    main()
