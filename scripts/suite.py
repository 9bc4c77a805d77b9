"""The benchmarks as suites: each file of ``scripts/suites/`` is a set of conditions × data
slices with one command template, and the results record each cell's figures are expected
to reproduce.

    python -m scripts.suite list [SUITE]          # the suites, their cells and records
    python -m scripts.suite dry-run SUITE [--cell RECORD ...]   # the commands it would run
    python -m scripts.suite run SUITE [--cell RECORD ...]       # run them
    python -m scripts.suite replay [SUITE ...]    # replay the cells' records (scripts.check)

A suite file (TOML) holds ``title``, ``about``, ``template`` (a command line with
``{condition}`` and ``{slice}``), ``conditions`` and ``slices`` (name: options), ``seeds``
(name: the committed caches, globs allowed, given to a cell's ``{seeds}`` as
``--seed-cache`` options) and ``cells`` (a condition, a slice, a seed set or a list of
them, and the record; ``resume``, a seed set given as ``--resume-cache`` options: an
interrupted run's own results, for a benchmark that takes them apart from its seeds).
``{index}`` is the dev index, ``{demo_index}`` the demo's (built as the checker builds
it) and ``{tmp}`` a scratch folder when a command runs. A cell's
command is its record's (``tests/test_suites.py`` checks it, options in any order, scratch
paths as the checker sets them). ``run`` runs a cell's command; where its record replays,
with ``--data`` and ``--results-out`` added, and its figures are compared as the checker
compares them. ``replay`` is ``python -m scripts.check`` on the suite's records. A cell
whose record's code left the tree (its ``code``) is archived: listed, never run.
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

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

SUITES = ROOT / "scripts" / "suites"
PROGRAM = re.compile(r"^python -m (\S+)\s*")


@dataclass(frozen=True)
class Cell:
    """One condition on one slice, and the record of its figures."""

    condition: str
    slice: str
    record: str
    seeds: tuple[str, ...] = ()  # seed sets, given in this order
    resume: str | None = None


@dataclass(frozen=True)
class Suite:
    """A suite file: conditions × slices under one command template."""

    name: str
    title: str
    about: str
    template: str
    conditions: dict[str, str]
    slices: dict[str, str]
    cells: tuple[Cell, ...]
    seeds: dict[str, list[str]] = field(default_factory=dict)

    def seed_files(self, name: str | None) -> list[str]:
        """The committed caches of a seed set, globs expanded (parts in number order)."""
        if name is None:
            return []

        def number_order(path: Path) -> list:
            return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.name)]

        out = []
        for pattern in self.seeds[name]:
            found = sorted(ROOT.glob(pattern), key=number_order)
            if not found:
                raise ValueError(f"suite {self.name}: seeds {name}: nothing matches {pattern}")
            out += [p.relative_to(ROOT).as_posix() for p in found]
        return out

    def command(self, cell: Cell) -> str:
        """The cell's command line, ``{index}`` and ``{tmp}`` left for the run to fill.

        Example:
            >>> s = Suite("s", "S", "", "python -m m {condition} {slice}", {"c": "--a 1"},
            ...           {"all": "--topics 98"}, (Cell("c", "all", "r"),))
            >>> s.command(s.cells[0])
            'python -m m --a 1 --topics 98'
        """
        line = self.template.format_map(
            _Keep(condition=self.conditions[cell.condition], slice=self.slices[cell.slice])
        )
        seeds = " ".join(
            [f"--seed-cache {s}" for name in cell.seeds for s in self.seed_files(name)]
            + [f"--resume-cache {s}" for s in self.seed_files(cell.resume)]
        )
        return " ".join(line.replace("{seeds}", seeds).split())


class _Keep(dict):
    """Fills the names given; leaves any other ``{placeholder}`` as it is."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def module_argv(line: str) -> tuple[str, list[str]]:
    """A command line's module and arguments (``python -m MODULE ARGS``)."""
    found = PROGRAM.match(line)
    if not found:
        raise ValueError(f"not a 'python -m MODULE ...' command: {line}")
    return found.group(1), shlex.split(line[found.end() :])


def load(path: Path) -> Suite:
    """A suite file; a cell naming an unknown condition, slice or seed set is an error."""
    raw = tomllib.loads(Path(path).read_text("utf-8"))
    cells = tuple(Cell(**{**c, "seeds": _names(c.get("seeds"))}) for c in raw.get("cells", ()))
    suite = Suite(path.stem, raw["title"], raw.get("about", ""), raw["template"],
                  raw["conditions"], raw["slices"], cells, raw.get("seeds", {}))  # fmt: skip
    for cell in cells:
        for name, known in (("condition", suite.conditions), ("slice", suite.slices)):
            if getattr(cell, name) not in known:
                raise ValueError(f"{path.name}: {cell.record}: no {name} {getattr(cell, name)!r}")
        for seeds in (*cell.seeds, *filter(None, [cell.resume])):
            if seeds not in suite.seeds:
                raise ValueError(f"{path.name}: {cell.record}: no seeds {seeds!r}")
    return suite


def _names(seeds: str | list[str] | None) -> tuple[str, ...]:
    """A cell's ``seeds`` as written (one set's name, a list of them, or none) as a tuple."""
    return (seeds,) if isinstance(seeds, str) else tuple(seeds or ())


@cache
def suites() -> tuple[Suite, ...]:
    """Every suite file, in name order."""
    return tuple(load(p) for p in sorted(SUITES.glob("*.toml")))


def suite_named(name: str) -> Suite:
    for suite in suites():
        if suite.name == name:
            return suite
    raise SystemExit(f"no suite {name} (known: {', '.join(s.name for s in suites())})")


def record_suites() -> dict[str, str]:
    """Each record a suite expects, with the suite's title."""
    return {cell.record: suite.title for suite in suites() for cell in suite.cells}


def record_of(name: str) -> dict:
    return read_results(RESULTS / f"{name}.json")


def recorded_argv(record: dict) -> list[str]:
    """The arguments a record ran with: its replay's when it replays, else its own."""
    return record["replay"]["argv"] if record.get("replay") else record.get("argv", [])


def same_run(argv: list[str]) -> list[tuple[str, ...]]:
    """Arguments as the checker compares runs: scratch paths as placeholders, results files
    dropped, options in any order (each with its values).

    Example:
        >>> same_run(["--b", "2", "--index", "dev-index", "--a"])
        [('--a',), ('--b', '2'), ('--index', '{index}')]
    """
    groups: list[list[str]] = [[]]
    for arg in scratch_argv(argv):
        if arg.startswith("--"):
            groups.append([])
        groups[-1].append(arg)
    return sorted(tuple(g) for g in groups if g)


def filled(argv: list[str], index: Path, tmp: Path, demo: Path | None = None) -> list[str]:
    """The arguments with the dev index, the demo's index (when given) and the scratch
    folder in their placeholders."""
    fill = {"{index}": index, "{tmp}": tmp, **({"{demo_index}": demo} if demo else {})}
    out = []
    for arg in argv:
        for key, value in fill.items():
            arg = arg.replace(key, str(value))
        out.append(arg)
    return out


def cells_of(suite: Suite, records: list[str]) -> list[Cell]:
    chosen = [c for c in suite.cells if not records or c.record in records]
    unknown = set(records) - {c.record for c in chosen}
    if unknown:
        raise SystemExit(f"suite {suite.name} has no cell for {', '.join(sorted(unknown))}")
    return chosen


def list_suites(names: list[str]) -> None:
    for suite in [suite_named(n) for n in names] or suites():
        print(f"{suite.name}: {suite.title} ({len(suite.conditions)} condition(s) × "
              f"{len(suite.slices)} slice(s), {len(suite.cells)} records)")  # fmt: skip
        for cell in suite.cells:
            record = record_of(cell.record)
            how = ("replayed" if record.get("replay")
                   else "archived" if code_left(record) else "recorded")  # fmt: skip
            print(f"  {cell.record} [{record.get('status', 'current')}, {how}]: "
                  f"{cell.condition} × {cell.slice}")  # fmt: skip


def run_cell(suite: Suite, cell: Cell, index: Path, data: Path | None) -> bool:
    """Runs one cell's command; compares its figures with its record where it replays."""
    from scripts.check import DEMO_INDEX, compare, demo_index

    module, argv = module_argv(suite.command(cell))
    record = record_of(cell.record)
    left = code_left(record)
    if left:
        print(f"archived {cell.record}: its code left the tree ({left})")
        return True
    demo = demo_index(DEMO_INDEX) if any("{demo_index}" in a for a in argv) else None
    with tempfile.TemporaryDirectory(prefix="fscore-suite-") as folder:
        tmp = Path(folder)
        argv = filled(argv, index, tmp, demo)
        out = tmp / "results.json"
        if record.get("replay"):
            argv += [*(["--data", str(data)] if data else []), "--results-out", str(out)]
        print(f"# {cell.record}: python -m {module} {shlex.join(argv)}", flush=True)
        done = subprocess.run([sys.executable, "-m", module, *argv], cwd=ROOT)
        if done.returncode != 0:
            print(f"FAIL {cell.record}: exit status {done.returncode}")
            return False
        if not record.get("replay"):
            print(f"ran {cell.record} (recorded, not compared)")
            return True
        verdicts = compare(record["figures"], read_results(out)["figures"],
                           record.get("tolerance", 0.0))  # fmt: skip
    failed = [v for v in verdicts if not v.ok]
    for verdict in failed:
        print(verdict.line())
    print(f"{'FAIL' if failed else 'OK'} {cell.record}: {len(verdicts) - len(failed)} of "
          f"{len(verdicts)} figures reproduced")  # fmt: skip
    return not failed


def main(argv: list[str] | None = None) -> int:
    """Lists, dry-runs, runs or replays suites; 1 on a failure. (The docs' pages: ``python -m
    docs.generate``.)"""
    ap = argparse.ArgumentParser(prog="python -m scripts.suite", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("action", choices=("list", "dry-run", "run", "replay"))
    ap.add_argument("suites", nargs="*", help="suite names (files of scripts/suites/)")
    ap.add_argument("--cell", action="append", default=[], metavar="RECORD",
                    help="only the cells of these records (dry-run, run)")  # fmt: skip
    ap.add_argument("--index", type=Path, default=BENCH_OUT / "dev-index",
                    help="index of the dev pages (built when absent)")  # fmt: skip
    add_data_option(ap)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.action == "list":
        list_suites(args.suites)
        return 0
    if args.action == "replay":
        from scripts.check import check, dev_index

        names = [c.record for s in [suite_named(n) for n in args.suites] or suites()
                 for c in s.cells]  # fmt: skip
        records = [r for r in map(record_of, dict.fromkeys(names)) if r.get("replay")]
        data = data_root(args.data)
        index = dev_index(args.index, data)
        ok = True
        for record in records:
            try:
                ok &= check(record, index, data, args.verbose)
            except RuntimeError as exc:
                print(f"FAIL {exc}")
                ok = False
        return 0 if ok else 1
    if len(args.suites) != 1:
        ap.error(f"{args.action} takes one suite")
    suite = suite_named(args.suites[0])
    cells = cells_of(suite, args.cell)
    if args.action == "dry-run":
        from scripts.check import DEMO_INDEX

        for cell in cells:
            left = code_left(record_of(cell.record))
            print(f"# {cell.record}: {cell.condition} × {cell.slice}"
                  + (f" (archived, not run: {left})" if left else ""))  # fmt: skip
            index = args.index.relative_to(ROOT) if args.index.is_relative_to(ROOT) else args.index
            demo = DEMO_INDEX.relative_to(ROOT)
            print(suite.command(cell).replace("{index}", str(index))
                  .replace("{demo_index}", str(demo)))  # fmt: skip
        return 0
    from scripts.check import dev_index

    data = data_root(args.data)
    index = dev_index(args.index, data)
    results = [run_cell(suite, cell, index, data) for cell in cells]
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
