"""What every benchmark shares: the subjects, where the labeled data is, reading it once,
timing and peak memory, the machine, and writing a results file.

A benchmark finds the real data (FActScore's labeled dev bios, the dev Wikipedia pages,
...) through ``--data DIR``, else the environment variable ``FSCORE_DATA``, else
``../shared/data`` beside the checkout; nothing is copied into the repository.

Example:
    >>> from scripts.common import SUBJECTS, data_root, labeled_bios
    >>> bios = labeled_bios(data_root(None))  # doctest: +SKIP
    >>> [len(bios[s]) for s in SUBJECTS]  # doctest: +SKIP
    [98, 98, 98]
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from factscore_local.pipeline.records.inputs import Bio, read_bios
from scripts.blas import blas
from scripts.replay import replay_spec

ROOT = Path(__file__).resolve().parents[1]  # the checkout
RESULTS = ROOT / "scripts" / "results"  # the committed results files
BENCH_OUT = ROOT / "bench-out"  # scratch space of the benchmarks (git-ignored)
DATA_ENV = "FSCORE_DATA"
SUBJECTS = ("InstructGPT", "ChatGPT", "PerplexityAI")  # the paper's column order
LABELED = Path("factscore", "labeled-dev")  # under the data root
PROSE = ("title", "about", "reading", "status", "status_because")  # kept when a run rewrites it
# What a record's figures are now, first the figures of record: ``current`` (what the README and
# the docs cite as the present state), ``superseded`` (a later record replaced it), ``negative``
# (an experiment that did not win). ``status_because`` says why, in a line.
STATUSES = ("current", "superseded", "negative")
# A record whose code left the tree (superseded, negative, or an operation done) keeps its
# figures as data and says where the code is: ``code`` = {"left_at": the last commit that
# had it, "path": its file there} (``code_left``).
CODE_KEYS = {"left_at", "path"}


class DataNotFound(SystemExit):
    """The labeled data is not where the option, the environment or the default says."""


def data_root(option: Path | None = None) -> Path:
    """The folder holding the real data (``factscore/labeled-dev/``, ``enwiki-20230401/``, ...).

    Args:
        option: the ``--data`` value, if given; it may also name the ``labeled-dev``
            folder itself (what the scripts' ``--data`` meant before).

    Returns:
        The data root: ``option``, else ``$FSCORE_DATA``, else ``../shared/data`` beside
        the checkout.

    Raises:
        DataNotFound: none of them holds ``factscore/labeled-dev``; the message names the
            option and the variable.
    """
    env = os.environ.get(DATA_ENV)
    if option is not None:
        candidate, origin = Path(option), "--data"
    elif env:
        candidate, origin = Path(env), f"${DATA_ENV}"
    else:
        candidate, origin = ROOT.parent / "shared" / "data", "the default ../shared/data"
    if (candidate / "ChatGPT.jsonl").is_file() and candidate.name == LABELED.name:
        return candidate.parents[1]  # the labeled folder itself: its root is two up
    if (candidate / LABELED).is_dir():
        return candidate
    raise DataNotFound(
        f"labeled data not found: {origin} ({candidate}) has no {LABELED.as_posix()}/. "
        f"Pass --data DIR or set {DATA_ENV}=DIR, where DIR holds {LABELED.as_posix()}/"
        " (the shared data folder, see its README)."
    )


def add_data_option(ap: argparse.ArgumentParser) -> None:
    """Adds ``--data DIR`` (the data root) to a benchmark's parser."""
    ap.add_argument(
        "--data",
        type=Path,
        default=None,
        help=f"folder holding {LABELED.as_posix()}/ (default: ${DATA_ENV}, else "
        "../shared/data beside the checkout)",
    )


def labeled_dir(root: Path) -> Path:
    """The folder of the labeled dev files under a data root."""
    return root / LABELED


@functools.cache
def _read(path: Path) -> tuple[Bio, ...]:
    return tuple(read_bios(path))


def labeled_bios(
    root: Path, subjects: tuple[str, ...] = SUBJECTS, responding: bool = False
) -> dict[str, list[Bio]]:
    """The labeled dev bios of each subject, in file order (each file is read once per
    process).

    Args:
        root: the data root (``data_root()``).
        subjects: which subjects' files.
        responding: keep only the bios the humans annotated (the LM did not abstain).

    Returns:
        {subject: [Bio, ...]}; ``Bio.record`` is the parsed line.
    """
    out = {}
    for subject in subjects:
        bios = _read(labeled_dir(root) / f"{subject}.jsonl")
        out[subject] = [b for b in bios if b.annotations or not responding]
    return out


def auc(values: np.ndarray, positive: np.ndarray) -> float:
    """P(a positive's value > a negative's), ties counting half (Mann-Whitney); NaN when
    either class is empty.

    Example:
        >>> auc(np.array([0.1, 0.4, 0.35, 0.8]), np.array([False, False, True, True]))
        0.75
    """
    from scipy.stats import rankdata

    positive = np.asarray(positive, bool)
    n_pos, n_neg = positive.sum(), (~positive).sum()
    if not n_pos or not n_neg:
        return float("nan")
    ranks = rankdata(np.asarray(values, float))
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


@dataclass
class Stopwatch:
    """Wall time of named steps (``with watch("step"): ...``) and the process's peak RSS,
    and the commit the run started at (a benchmark that writes a shipped file, or whose
    code changes while it runs, is recorded at the code it ran)."""

    steps: dict[str, float] = field(default_factory=dict)
    start: float = field(default_factory=time.perf_counter)
    commit: str = field(default_factory=lambda: git_commit())
    cpu_start: list[int] | None = field(default_factory=lambda: cpu_times())

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.steps[name] = round(time.perf_counter() - t0, 2)

    def total(self) -> float:
        return round(time.perf_counter() - self.start, 1)

    def steal_share(self) -> float | None:
        """The share of the machine's CPU time that its hypervisor took since the watch
        started (Linux's ``steal``; None elsewhere): a virtual machine whose host is busy
        runs the same code slower, and this says how much of a slow run is that."""
        now = cpu_times()
        if now is None or self.cpu_start is None:
            return None
        spent = [b - a for a, b in zip(self.cpu_start, now, strict=True)]
        total = sum(spent)
        return round(spent[7] / total, 3) if total > 0 else None


def cpu_times() -> list[int] | None:
    """The machine's CPU times since boot (``/proc/stat``: user, nice, system, idle,
    iowait, irq, softirq, steal), or None where there is no such file."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    return [int(x) for x in fields[1:9]] if fields[0] == "cpu" and len(fields) >= 9 else None


def cpu_model() -> str:
    """The CPU's model name (Linux /proc/cpuinfo, else the platform's word for it)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_name() -> str | None:
    """The first CUDA GPU's name when torch is already imported and sees one (importing
    torch only to ask would cost seconds)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_name(0)


def machine() -> dict:
    """Cores, CPU model, GPU (if any), Python, the load when asked, and OpenBLAS's kernel
    and threads (``scripts/blas.py``: a replay runs under them)."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    load = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    return {"cores": os.cpu_count(), "usable_cores": usable, "cpu": cpu_model(),
            "gpu": gpu_name(), "python": platform.python_version(), "loadavg_1m": load,
            "blas": blas()}  # fmt: skip


def git_commit() -> str:
    """The checkout's commit (with ``+dirty`` when files differ from it); "" without git.
    Results and docs pages do not count: a benchmark that writes several results files
    leaves the tree as clean, for the next one, as the code it ran."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short=12", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".",
                ":(exclude)scripts/results", ":(exclude)docs", ":(exclude)README.md")  # fmt: skip
    return commit + ("+dirty" if commit and dirty else "")


def command_line(module: str, argv: list[str]) -> str:
    """The command as a user types it from the checkout's root."""
    import shlex

    return " ".join(["python", "-m", module, *map(shlex.quote, argv)])


def results_record(
    name: str,
    module: str,
    argv: list[str],
    data: dict,
    figures: dict[str, float | int | None],
    watch: Stopwatch | None = None,
    commit: str | None = None,
    **extra: object,
) -> dict:
    """A results file's content: what ran, where, on what, and its figures.

    Args:
        name: the results file's name (``scripts/results/<name>.json``).
        module: the benchmark's module (``scripts.reproduce_tables``).
        argv: its arguments, as run.
        data: what it ran on (topics, bios, facts, ...).
        figures: flat {figure name: value}; what the checker compares.
        watch: its stopwatch (total seconds and steps are recorded with the peak RSS).
        commit: the commit the code ran at (default: the stopwatch's, taken when the run
            started, else the checkout's now).
        extra: more fields (e.g. ``replay`` or ``computed``).

    Returns:
        The record; ``write_results`` writes it.
    """
    record = {
        "name": name,
        "command": command_line(module, argv),
        "module": module,
        "argv": argv,
        "commit": commit or (watch.commit if watch else "") or git_commit(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {**machine(), "cpu_steal_share": watch.steal_share() if watch else None},
        "data": data,
        "seconds": watch.total() if watch else None,
        "steps": watch.steps if watch else {},
        "peak_rss_mb": peak_rss_mb(),
        "replay": replay_spec(argv),
        **extra,
        "figures": figures,
    }
    return record


def write_results(record: dict, out: Path | None = None) -> Path:
    """Writes a results record as JSON (``scripts/results/<name>.json`` by default), keeping
    the title, description, reading and status of the file it replaces; a record of a new
    name is ``current`` (the present state until a later record replaces it)."""
    path = out or RESULTS / f"{record['name']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():  # the page's words are written by hand: a new run keeps them
        try:
            old = json.loads(path.read_text("utf-8"))
        except json.JSONDecodeError:
            old = {}
        record = {**{k: old[k] for k in PROSE if k in old}, **record}
    if "status" not in record:
        record = {"status": "current", "status_because": "a new record", **record}
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return path


def read_results(path: Path) -> dict:
    """One results file; a file that is not one raises ValueError naming it."""
    try:
        record = json.loads(Path(path).read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable results file ({exc})") from exc
    missing = [k for k in ("name", "command", "commit", "date", "machine", "figures")
               if k not in record]  # fmt: skip
    if missing:
        raise ValueError(f"{path}: results file without {', '.join(missing)}")
    if record.get("status", "current") not in STATUSES:
        raise ValueError(f"{path}: status {record['status']!r} is not one of {STATUSES}")
    if record.get("code") and (record.get("replay") or set(record["code"]) != CODE_KEYS):
        raise ValueError(f"{path}: 'code' is {sorted(CODE_KEYS)}, of a record not replayed")
    return record


def code_left(record: dict) -> str | None:
    """Where the code of a record whose code left the tree is: the git command that shows
    it (its ``code``: the last commit that had it, and its path there); None while the
    code is in the tree.

    Example:
        >>> code_left({"code": {"left_at": "1a2b3c", "path": "scripts/notebook/bench_ray.py"}})
        'git show 1a2b3c:scripts/notebook/bench_ray.py'
    """
    code = record.get("code")
    return f"git show {code['left_at']}:{code['path']}" if code else None


def log(tag: str, message: str) -> None:
    """Progress on stderr, prefixed by the benchmark's tag."""
    print(f"[{tag}] {message}", file=sys.stderr, flush=True)


def flatten(tree: dict, prefix: str = "") -> dict[str, float | int | bool]:
    """The numbers and booleans of a nested dict, keyed by their '/'-joined path (what a
    results file's figures hold).

    Example:
        >>> flatten({"ours": {"facts_per_s": 1.2, "backend": "llama.cpp"}, "n": 3})
        {'ours/facts_per_s': 1.2, 'n': 3}
    """
    out: dict = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, f"{name}/"))
        elif isinstance(value, bool | int | float):
            out[name] = value
    return out
