"""What the sections of the eval benchmark share: one loaded model, its facts, the output."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from factscore_local.pipeline.records.labeled import model_facts
from scripts.common import labeled_bios, machine
from scripts.common import log as _log


def emit(record: dict) -> dict:
    """Prints one measurement as a JSON line and returns it."""
    print(json.dumps(record, ensure_ascii=False), flush=True)
    return record


def log(message: str) -> None:
    _log("bench_eval", message)


def rate(n: float, seconds: float) -> float | None:
    return round(n / seconds, 3) if seconds > 0 else None


def load_bios(data: Path, n: int, ks) -> list[tuple[str, dict]]:
    """(page title, record) of the first n ChatGPT dev bios that respond (annotated) and
    whose topic the index knows."""
    bios = []
    for bio in labeled_bios(data, ("ChatGPT",), responding=True)["ChatGPT"]:
        if len(bios) >= n:
            break
        title = ks.resolve_title(bio.topic).title
        if title is None:
            log(f"skipping {bio.topic!r}: not in the index")
            continue
        bios.append((title, bio.record))
    return bios


def take_facts(bios: list[tuple[str, dict]], m: int) -> list[tuple[str, str, str]]:
    """(title, topic, atom) for the first m model atomic facts, bio by bio, in order."""
    items = [
        (title, bio["topic"], atom)
        for title, bio in bios
        for _, atom in model_facts(bio["annotations"])
    ]
    return items[:m]


def backend_info(raw, lm_path: Path) -> dict:
    """The machine (``scripts.common.machine``) with the loaded model's backend, threads,
    file and library versions."""
    threads = getattr(getattr(raw, "llm", None), "n_threads", None)
    if threads is None and hasattr(raw, "torch"):
        threads = raw.torch.get_num_threads()
    versions = {}
    for mod in ("llama_cpp", "torch", "transformers"):
        if mod in sys.modules:
            versions[mod] = getattr(sys.modules[mod], "__version__", "?")
    return {
        **machine(),
        "backend": raw.backend,
        "threads": threads,
        "model_file": lm_path.name,
        "model_bytes": lm_path.stat().st_size if lm_path.is_file() else None,
        "versions": versions,
    }


@dataclasses.dataclass
class Bench:
    """What the sections share: one loaded model, the config, the facts, the results."""

    cfg: object  # EvalConfig
    raw: object  # the loaded LocalLM
    ks: object  # KnowledgeSource
    items: list[tuple[str, str, str]]
    bios: list[tuple[str, dict]]
    data: Path  # the data root (scripts.common.data_root)
    out: dict = dataclasses.field(default_factory=dict)
    prompts: list[str] = dataclasses.field(default_factory=list)  # ours, as verified
    prefixes: list[str] = dataclasses.field(default_factory=list)  # their shared parts
    spans: list = dataclasses.field(default_factory=list)  # their statements' characters
    encoded: list[list[int]] = dataclasses.field(default_factory=list)
    scores: list = dataclasses.field(default_factory=list)  # ours, TrueFalse per fact
    noreuse_times: list[float] = dataclasses.field(default_factory=list)

    def estimator(self, **changes):
        """An estimator on the loaded model with a fresh memory-only cache: nothing comes
        from earlier runs."""
        from factscore_local.pipeline.components import build_components
        from factscore_local.pipeline.estimator import Estimator
        from factscore_local.runtime.cache import ResultCache

        cfg = dataclasses.replace(self.cfg, **changes)
        parts = build_components(cfg, knowledge=self.ks, cache=ResultCache(None), lm=self.raw)
        return Estimator(cfg, parts)
