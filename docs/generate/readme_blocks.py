"""The README's generated blocks, each made from its results file: the headline table (the
dev-set ER and F1 beside the paper's), the raw-text table, the probe's table and the
run-time line. ``python -m docs.generate`` writes them as pages and copies them into the
README (``docs.generate.readme_headline``).
"""

from __future__ import annotations

from pathlib import Path

from docs.generate.markdown import GENERATED, md_table
from factscore_local.declarations.verifiers import legacy_name
from factscore_local.fitted_defaults import default_rule
from factscore_local.model_store import DEFAULT_LM
from scripts.common import RESULTS, SUBJECTS, read_results
from scripts.tables.paper import PAPER_T3, PAPER_T9

HEADLINE = "tables-98"  # the results file the headline table is read from
PROBE = "counterfactual-98"  # the results file the README's contradiction table is read from
RAW_TEXT = "raw-text-98-batched"  # the results file the README's raw-text table is read from
# The README's tables and the probe it cites: each replays from the committed caches.
FIGURES_OF_RECORD = (HEADLINE, RAW_TEXT, PROBE, "counterfactual-98-stated")
PREVIOUS_RULE = "retrieve-lm+np+coverage-fitted"  # the 1.5B model's default before the slots
DEFAULT_RULE = legacy_name(default_rule(DEFAULT_LM))  # the 1.5B's, as the records name it


def headline(record: dict) -> str:
    """The README's table: the default verifier's dev-set ER and F1 beside the paper's."""
    f = record["figures"]
    prefix = f"{DEFAULT_RULE}/cross-fitted"
    rows = [
        [s, *(f"{f[f'{prefix}/{s}/{k}']:.1f}" for k in ("human", "fs", "er")),
         PAPER_T3["retrieve-lm+np"][i][0], f"{f[f'{prefix}/{s}/f1']:.1f}",
         PAPER_T9["retrieve-lm+np"][i]]
        for i, s in enumerate(SUBJECTS)
    ]  # fmt: skip
    head = ["subject", "human FActScore", "estimated", "ER", "ER, paper", "F1", "F1, paper"]
    return (
        GENERATED.format(f"{record['name']}.json") + "\n\n" + md_table(head, rows) + "\n\n"
        f"FActScore's {record['data']['topics']} labeled dev topics ({record['data']['bios']} "
        "bios); ER: |estimated - human| FActScore, F1: micro-F1 on the human atomic facts "
        "judged not supported; ours: the embedded 1.5B model with the default rule, "
        "thresholds cross-fitted over the topic halves; paper: FActScore's Inst-LLaMA 7B + NP "
        "(Tables 3 and 9, all 183 topics). [Details](docs/benchmarks/tables-98.md).\n"
    )


def raw_text(record: dict) -> str:
    """The README's raw-text table: per subject, the estimate from the labeled files' atomic
    facts beside the one from raw text through the project's own decomposition, from one
    run of the default rule (``scripts.bench_raw_text``)."""
    f = record["figures"]
    won = f.get("raw text, calibrated/wins on both halves for every subject")
    # What a user gets from raw text: the calibrated estimate once its shift ships.
    raw = "raw text, calibrated" if won else "raw text"
    settings = ("model atomic facts", raw)
    rows = [[s, f"{f[f'raw text/{s}/human']:.1f}",
             *(f"{f[f'{k}/{s}/{v}']:.1f}" for k in settings for v in ("estimated", "er")),
             f"{f[f'{raw}/{s}/bio_mae']:.1f}", f"{f[f'raw text/{s}/facts_per_response']:.1f}"]
            for s in SUBJECTS]  # fmt: skip
    head = ["subject", "human FActScore", "estimated, from atomic facts", "ER, from atomic facts",
            "estimated, from raw text", "ER, from raw text", "bio-level MAE, raw text",
            "facts per response, raw text"]  # fmt: skip
    bios = " / ".join(str(f[f"raw text/{s}/bios"]) for s in SUBJECTS)
    if won is None:
        calibration = ""
    elif won:
        calibration = ("From raw text, the rule's bias is shifted by the amount fitted on the "
                       "other half's raw-text bios (shipped as the default); ")  # fmt: skip
    else:
        calibrated = " / ".join(f"{f[f'raw text, calibrated/{s}/er']:.1f}" for s in SUBJECTS)
        calibration = ("A shift of the rule's bias fitted on raw-text bios (ER "
                       f"{calibrated}) does not win on both halves for every subject and is "
                       "not shipped; ")  # fmt: skip
    aside = ""
    if f"raw text/{SUBJECTS[0]}/set_aside_dangling" in f:
        n = " / ".join(str(sum(f[f"raw text/{s}/set_aside_{r}"] for r in ("dangling", "meta")))
                       for s in SUBJECTS)  # fmt: skip
        aside = f"; {n} own facts that do not stand alone were set aside"
    return (
        GENERATED.format(f"{record['name']}.json") + "\n\n" + md_table(head, rows) + "\n\n"
        f"From atomic facts: the labeled files' `model-atomic-facts` (InstructGPT's "
        f"decomposition, the paper's setting); from raw text: the generations as a user gives "
        f"them, decomposed by the embedded 1.5B model (what you get){aside}. {bios} bios with "
        "a human score "
        f"on {record['data']['topics']} labeled dev topics; the default rule, thresholds "
        f"cross-fitted over the topic halves. {calibration}"
        "ER and bio-level MAE in FActScore points. "
        f"[Details](docs/benchmarks/{record['name']}.md).\n"
    )


def contradictions(record: dict) -> str:
    """The README's probe table: per kind, the share of one-slot contradictions rejected and
    of their originals accepted, by the default rule and by the one before it."""
    f, default = record["figures"], record["data"]["default_verifier"]
    rules = [r for r in (PREVIOUS_RULE, default) if f"verifiers/{r}/all/recall" in f]
    names = {PREVIOUS_RULE: "before the slot check", default: "default"}
    kinds = [k.split("/")[2] for k in f if k.startswith(f"verifiers/{default}/")
             and k.endswith("/pairs")]  # fmt: skip
    rows = [[kind, f[f"verifiers/{default}/{kind}/pairs"],
             *(f"{f[f'verifiers/{r}/{kind}/recall']:.1f}" for r in rules),
             *(f"{f[f'verifiers/{r}/{kind}/originals_accepted']:.1f}" for r in rules)]
            for kind in kinds]  # fmt: skip
    head = ["kind", "pairs", *(f"rejected, {names[r]}" for r in rules),
            *(f"originals accepted, {names[r]}" for r in rules)]  # fmt: skip
    data = record["data"]
    return (
        GENERATED.format(f"{record['name']}.json") + "\n\n" + md_table(head, rows) + "\n\n"
        f"{data['pairs']} one-slot counterfactuals of facts the annotators labeled supported, "
        f"on {len(data['topics'])} labeled dev topics (at most {data['per_kind_per_topic']} "
        "per kind and topic), each beside its original; in %; default: "
        f"`{default}`, before the slot check: `{PREVIOUS_RULE}`. "
        f"[Details](docs/benchmarks/{record['name']}.md).\n"
    )


SPEED = "speed"  # the results file of the README's run-time line (2 cores, bench_speed)
SERVERS_SPEED = "speed-servers"  # ... its servers part: every path side by side, one run
SERVER_SPEED = "speed-server"  # ... before that record: llama-cpp-python's server alone
GPU_SPEED = "gpu-raw-text"  # ... and of its GPU part, when recorded
# the servers of bench_speed's paths, in the words of the README's line
SERVER_WORDS = {
    "vllm-8": "vLLM's CPU build (8 requests in flight",
    "llama.cpp-server": "llama.cpp's own server",
    "server": "llama-cpp-python's server",
}


def _cpu_line(record: dict) -> str:
    f, cores = record["figures"], record["machine"].get("cores", "?")
    per_bio = f["batched/seconds_per_bio"]
    return (f"Scoring from raw text takes about {per_bio:.0f} s a bio end to end on {cores} "
            f"CPU cores with the default 1.5B model ({f['bios']} dev bios, "
            f"{record['date'][:10]}; about {500 * per_bio / 3600:.1f} h for 500 bios)")  # fmt: skip


def _server_part(record: dict) -> str:
    """Through the LM servers on the same cores: each one's time over the in-process run's,
    all timed in the same run of the benchmark (``speed-servers``; before it, the
    ``speed-server`` record of llama-cpp-python's server alone)."""
    f = record["figures"]
    parts = []
    for path, words in SERVER_WORDS.items():
        if f"{path}/time_over_batched" not in f:
            continue
        part = f"{f[f'{path}/time_over_batched']:.1f}x with {words}"
        if path == "vllm-8":
            more = f.get("vllm-32/time_over_batched")
            part += f"; {more:.1f}x with 32)" if more is not None else ")"
        parts.append(part)
    listed = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    servers = (record.get("data") or {}).get("servers") or {}
    rule = (", the servers deciding with retrieve-lm (no NP)"
            if any("--verifier retrieve-lm" in s for s in servers.values()) else "")  # fmt: skip
    return (f"; through a server on the same cores, the time over the in-process run is {listed} "
            f"({f['bios']} bios, one run{rule})")  # fmt: skip


def run_time(record: dict) -> str:
    """The README's run-time line: a raw-text bio end to end on the CPU (the record's
    machine and bios), through the LM servers on the same cores where they are timed, and,
    where a GPU run is recorded, bios a minute on that card."""
    line = _cpu_line(record)
    server_path = next((p for p in (RESULTS / f"{n}.json" for n in (SERVERS_SPEED, SERVER_SPEED))
                        if p.exists()), None)  # fmt: skip
    if server_path is not None:
        line += _server_part(read_results(server_path))
    gpu_path = RESULTS / f"{GPU_SPEED}.json"
    if gpu_path.exists():
        gpu = read_results(gpu_path)
        card = gpu["machine"].get("gpu") or "a GPU"
        model = Path(gpu["data"].get("lm", "")).name.removesuffix(".gguf") or "its model"
        line += (f"; on one {card}, {gpu['figures']['bios_per_minute']:.1f} bios a minute "
                 f"with {model} ({gpu['figures']['bios']} bios)")  # fmt: skip
    parts = [p for p in (server_path, gpu_path) if p is not None and p.exists()]
    sources = ", ".join([f"{SPEED}.json", *(f"scripts/results/{p.name}" for p in parts)])
    return GENERATED.format(sources) + "\n\n" + line + ". [Speed](docs/guide/speed.md).\n"


# The README's tables: results file, the index's words for it, its page, what writes it.
README_TABLES = (
    (SPEED, "The README's run-time line", "run-time.md", run_time),
    (HEADLINE, "The README's headline table", "headline.md", headline),
    (PROBE, "The README's contradiction table", "contradictions.md", contradictions),
    (RAW_TEXT, "The README's raw-text table", "raw-text.md", raw_text),
)
