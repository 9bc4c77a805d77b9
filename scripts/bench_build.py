"""Benchmark `fscore build-index` on synthetic dumps made from the real data.

Routes measured, each in its own process (so peak RSS is its own):
- XML: the real 206-page MediaWiki excerpt replicated (titles suffixed) to >= --pages pages;
- DB: FActScore's dev DB (real enwiki-20230401 passages) replicated to >= --pages pages,
  at two sizes, to show that memory does not grow with the dump.
Prints pages/s, passages/s, MB/s, peak RSS, stage timings, and the projected time for full
English Wikipedia (6.7M articles; FActScore's DB is about 20 GB) with and without BM25,
taking the slower of the per-page and per-byte projections.

    python -m scripts.bench_build --pages 20000 --work bench-out
"""

from __future__ import annotations

import argparse
import bz2
import json
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from scripts.common import BENCH_OUT, add_data_option, data_root

# Under the data root (``--data``), set by main().
EXCERPT = Path("wiki-dumps", "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
DEV_DB = Path("enwiki-20230401", "enwiki-20230401-dev.db")
DATA = Path()
FULL_PAGES = 6_700_000
FULL_DB_BYTES = 20e9  # FActScore's enwiki-20230401.db, about 20 GB
PASSAGES_PER_PAGE = 3
SEPARATOR = "####SPECIAL####SEPARATOR####"
FACTSCORE_HOURS = 8.0  # FActScore's README: building its DB "takes ~8 hours"


def make_xml(n_pages: int, dest: Path) -> int:
    with bz2.open(DATA / EXCERPT, "rt", encoding="utf-8") as f:
        raw = f.read()
    head_end = raw.index("<page>")
    head, body = raw[:head_end], raw[head_end : raw.rindex("</mediawiki>")]
    pages = re.findall(r"<page>.*?</page>", body, flags=re.S)
    copies = -(-n_pages // len(pages))
    with bz2.open(dest, "wt", encoding="utf-8", compresslevel=1) as out:
        out.write(head)
        for c in range(copies):
            for page in pages:
                if c:
                    title = rf"<title>\1 ({c})</title>"
                    page = re.sub(r"<title>(.*?)</title>", title, page, count=1)
                    page = re.sub(r'<redirect title="(.*?)"', rf'<redirect title="\1 ({c})"', page)
                out.write("  " + page + "\n")
        out.write("</mediawiki>\n")
    return copies * len(pages)


def realistic_pages(db: Path | None = None) -> list[tuple[str, list[str]]]:
    """The dev DB's real passages regrouped into pages of ~3 passages (~3 KB of text), the
    average page size of FActScore's full DB (20 GB / 6.7M pages): a synthetic dump with
    the real ratio of pages to bytes, so per-page and per-byte projections agree.

    Args:
        db: the dev DB (default: the one under the data root ``main()`` set).
    """
    rows = sqlite3.connect(db or DATA / DEV_DB).execute("SELECT title, text FROM documents")
    rows = rows.fetchall()
    pages = []
    for title, text in rows:
        passages = text.split(SEPARATOR)
        for i in range(0, len(passages), PASSAGES_PER_PAGE):
            name = title if i == 0 else f"{title} (part {i // PASSAGES_PER_PAGE})"
            pages.append((name, passages[i : i + PASSAGES_PER_PAGE]))
    return pages


def replicate(n_pages: int) -> list[tuple[str, list[str]]]:
    base = realistic_pages()
    copies = -(-n_pages // len(base))
    return [(t if c == 0 else f"{t} ({c})", p) for c in range(copies) for t, p in base]


def make_db(n_pages: int, dest: Path) -> tuple[int, int]:
    pages = replicate(n_pages)
    dest.unlink(missing_ok=True)
    out = sqlite3.connect(dest)
    out.execute("CREATE TABLE documents (title PRIMARY KEY, text)")
    out.executemany(
        "INSERT INTO documents VALUES (?, ?)", [(t, SEPARATOR.join(p)) for t, p in pages]
    )
    out.commit()
    n_bytes = int(out.execute("SELECT SUM(LENGTH(text)) FROM documents").fetchone()[0])
    out.close()
    return len(pages), n_bytes


def make_jsonl(n_pages: int, dest: Path) -> tuple[int, int]:
    """FActScore's own build input, {"title", "text": [sections]}, from the same pages."""
    pages = replicate(n_pages)
    n_bytes = 0
    with dest.open("w", encoding="utf-8") as out:
        for title, passages in pages:
            sections = [strip(p) for p in passages]
            n_bytes += sum(len(s) for s in sections)
            out.write(json.dumps({"title": title, "text": sections}) + "\n")
    return len(pages), n_bytes


def strip(passage: str) -> str:
    return passage.replace("<s>", " ").replace("</s>", " ").strip()


def run_build(source: Path, out: Path, bm25: bool) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        sys.executable,
        "-m",
        "factscore_local.cli",
        "build-index",
        "--source",
        str(source),
        "--out",
        str(out),
        "--dense",
        "none",
        "--quiet",
    ]
    if not bm25:
        cmd.append("--no-bm25")
    # Through /usr/bin/time: a child forked straight from this process would inherit this
    # process's peak RSS (Linux keeps ru_maxrss across fork and exec).
    if shutil.which("time") or Path("/usr/bin/time").exists():
        cmd = ["/usr/bin/time", "-f", "%M", *cmd]
    t0 = time.perf_counter()
    proc = subprocess.run(
        cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    wall = time.perf_counter() - t0
    last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    tree_rss = int(last) / 1024 if last.isdigit() else None
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["wall_s"] = wall
    manifest["peak_rss_mb"]["largest_process"] = round(tree_rss, 1) if tree_rss else None
    return manifest


def report(name: str, m: dict, source_bytes: int) -> dict:
    c, t = m["counts"], m["timings"]
    ingest, bm25 = t.get("ingest_s", 0.0), t.get("bm25_s", 0.0)
    pages_s = c["pages"] / ingest
    row = {
        "route": name,
        "pages": c["pages"],
        "passages": c["passages"],
        "ingest_s": round(ingest, 1),
        "bm25_s": round(bm25, 1),
        "wall_s": round(m["wall_s"], 1),
        "pages_per_s": round(pages_s, 1),
        "passages_per_s": round(c["passages"] / ingest, 1),
        "text_mb_per_s": round(source_bytes / 1e6 / ingest, 2),
        "peak_rss_mb": m["peak_rss_mb"],
    }
    print(json.dumps(row))
    return row


def project(row: dict, source_bytes: int, label: str) -> None:
    """Minutes for full English Wikipedia (6.7M pages, ~20 GB of passage text).

    Ingest pays per page and per byte, so it takes the larger of the two scales; Lucene's
    work is per passage and token, which grow with the text, so BM25 scales with bytes.
    """
    page_scale = FULL_PAGES / row["pages"]
    byte_scale = FULL_DB_BYTES / source_bytes
    ingest_min = row["ingest_s"] * max(page_scale, byte_scale) / 60
    bm25_min = row["bm25_s"] * byte_scale / 60
    total = ingest_min + bm25_min
    print(
        f"{label}: projected full enwiki: ingest {ingest_min:.0f} min "
        f"(x{max(page_scale, byte_scale):.0f}), BM25 {bm25_min:.0f} min (x{byte_scale:.0f}), "
        f"ingest+BM25 {total:.0f} min; FActScore's ~{FACTSCORE_HOURS:.0f} h is "
        f"{FACTSCORE_HOURS * 60 / total:.1f}x that"
    )


def project_marginal(rows: list[tuple[dict, int]], label: str) -> None:
    """Fixed cost + the per-byte cost between two sizes, times FActScore's DB size."""
    (small, b1), (big, b2) = rows
    total = 0.0
    parts = []
    for stage in ("ingest_s", "bm25_s"):
        per_byte = (big[stage] - small[stage]) / (b2 - b1)
        fixed = max(0.0, small[stage] - per_byte * b1)
        minutes = (fixed + per_byte * FULL_DB_BYTES) / 60
        total += minutes
        parts.append(f"{stage[:-2]} {minutes:.0f} min")
    print(
        f"{label}: projected full enwiki: {', '.join(parts)}, ingest+BM25 {total:.0f} min; "
        f"FActScore's ~{FACTSCORE_HOURS:.0f} h is {FACTSCORE_HOURS * 60 / total:.1f}x that"
    )


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m scripts.bench_build")
    ap.add_argument("--pages", type=int, default=20000)
    ap.add_argument("--work", type=Path, default=BENCH_OUT)
    add_data_option(ap)
    ap.add_argument("--skip-xml", action="store_true")
    args = ap.parse_args()
    global DATA
    DATA = data_root(args.data)
    args.work.mkdir(parents=True, exist_ok=True)
    print(
        f"machine: {subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()} "
        f"cores; python {sys.version.split()[0]}"
    )

    # DB route at two sizes: memory must not grow, and the difference between the two
    # gives the marginal cost per byte (fixed costs such as the JVM start are not scaled).
    rows = []
    for n in (args.pages, args.pages * 4):
        db = args.work / f"synthetic-{n}.db"
        n_pages, n_bytes = make_db(n, db)
        print(f"DB source: {n_pages} pages, {n_bytes / 1e6:.0f} MB of passage text")
        m = run_build(db, args.work / f"idx-db-{n}", bm25=True)
        rows.append((report(f"db-{n_pages}", m, n_bytes), n_bytes))
    project(rows[-1][0], rows[-1][1], "DB+BM25 (proportional)")
    project_marginal(rows, "DB+BM25 (marginal)")

    jsonl = args.work / "synthetic.jsonl"
    n_pages, n_bytes = make_jsonl(args.pages, jsonl)
    print(f"JSONL source: {n_pages} pages, {n_bytes / 1e6:.0f} MB of text")
    m = run_build(jsonl, args.work / "idx-jsonl", bm25=True)
    row = report("jsonl", m, n_bytes)
    project(row, n_bytes, "JSONL+BM25 (FActScore's own 8-hour job)")

    if not args.skip_xml:
        xml = args.work / "synthetic.xml.bz2"
        n_pages = make_xml(args.pages, xml)
        size_mb = xml.stat().st_size / 1e6
        print(f"XML source: {n_pages} pages (incl. redirects), {size_mb:.0f} MB bz2")
        m = run_build(xml, args.work / "idx-xml", bm25=True)
        conn = sqlite3.connect(args.work / "idx-xml" / "knowledge.db")
        text_bytes = int(conn.execute("SELECT SUM(LENGTH(text)) FROM documents").fetchone()[0])
        row = report("xml", m, text_bytes)
        project(row, text_bytes, "XML+BM25")


if __name__ == "__main__":
    main()
