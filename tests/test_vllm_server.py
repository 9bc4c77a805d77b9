"""A real vLLM (its CPU build, ``scripts/vllm_env.sh``) serving the embedded 0.5B, as a user
with a GPU serves a model: ``fscore eval --lm http://127.0.0.1:PORT/v1`` with the default
rule, NP read from vLLM's ``prompt_logprobs``, against the same model in process; the
server killed mid-run stops the run with one line naming the URL, and the rerun against a
restarted server resumes from the cache.

vLLM serves the GGUF's float32 safetensors export (``factscore_local.lm.export_hf``) under
the embedded name, so the tokenizer, chat template and fitted rule are the embedded
model's. Under ``FSCORE_REQUIRE_DATA=1`` (CI) a missing vLLM environment fails the test
(scripts/test.sh installs it first); elsewhere it skips.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from scripts.bench_vllm import agreement, eval_command
from scripts.vllm_server import VllmServer, vllm_python
from tests.conftest import REQUIRE_DATA, SHARED, require

CHATGPT = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"
DTYPE = "float32"  # the dequantized Q4 weights exactly (scripts/results/vllm-agreement.json)
N_BIOS, N_SENTENCES = 2, 1  # about 16 facts: the bios' own and the humans'
# Short evidence blocks, in process and through vLLM alike: vLLM 0.32 reads no prefix cache
# for a request that asks for its prompt's log-probabilities (NP), so each fact's block is
# evaluated again, and the default's 7000-token blocks made most of the test's minutes.
SHORT_BLOCKS = ("--evidence-budget", "512")


@pytest.fixture(scope="module")
def vllm_server(tmp_path_factory, request):
    from factscore_local.model_store import SMALL_LM

    if not vllm_python().exists():
        message = f"no vLLM environment at {vllm_python()} (bash scripts/vllm_env.sh)"
        if os.environ.get(REQUIRE_DATA) == "1":
            pytest.fail(f"{message}; {REQUIRE_DATA}=1 makes that a failure", pytrace=False)
        pytest.skip(message)
    export = request.getfixturevalue("small_lm_export")  # not written where vLLM is missing
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    server = VllmServer(export, log, SMALL_LM, dtype=DTYPE, one_process=True)
    server.start()
    yield server
    server.kill()


def labeled_bios(tmp_path: Path) -> Path:
    """The first dev bios, cut to their first sentences' annotations (their own facts and
    the humans'), as labeled input."""
    out = tmp_path / "bios.jsonl"
    lines = []
    for line in require(CHATGPT).read_text().splitlines()[:N_BIOS]:
        bio = json.loads(line)
        kept = bio["annotations"][:N_SENTENCES]
        bio |= {"output": " ".join(a["text"] for a in kept), "annotations": kept}
        lines.append(json.dumps(bio) + "\n")
    out.write_text("".join(lines))
    return out


def run_eval(cmd: list[str]) -> tuple[dict, list[dict]]:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    out = Path(cmd[cmd.index("--out") + 1])
    return json.loads(done.stdout), [json.loads(x) for x in out.read_text().splitlines()]


def cached(cache: Path, kind: str | None = "true_false") -> set[str]:
    """The keys of the cache's results of ``kind`` (None: of every kind)."""
    where, args = ("WHERE kind = ?", (kind,)) if kind else ("", ())
    try:
        with sqlite3.connect(cache, timeout=30) as conn:
            return {k for (k,) in conn.execute(f"SELECT key FROM results {where}", args)}
    except sqlite3.OperationalError:  # not made yet
        return set()


@pytest.mark.slow
def test_vllm_scores_as_in_process_with_np_and_a_killed_run_resumes(
    db_index, tmp_path, vllm_server
):
    from factscore_local.model_store import SMALL_LM

    src = labeled_bios(tmp_path)
    url = vllm_server.url
    local, local_rows = run_eval(
        eval_command(
            db_index, [src], SMALL_LM, tmp_path / "l.db", tmp_path / "l.jsonl", SHORT_BLOCKS
        )
    )

    # Through vLLM, killed once the first verdicts are cached: one line naming the URL. One
    # bio at a time (the same decisions), so that the first bio's are cached, and its row
    # written, while the second's are not.
    cache, out = tmp_path / "s.db", tmp_path / "s.jsonl"
    cmd = eval_command(db_index, [src], url, cache, out, ("--batch-bios", "1", *SHORT_BLOCKS))
    run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 1200
    while not cached(cache) and run.poll() is None:
        assert time.monotonic() < deadline, "no verdict cached in 20 minutes"
        time.sleep(0.2)
    vllm_server.kill()
    _, stderr = run.communicate(timeout=300)
    assert run.returncode == 2, stderr[-3000:]
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert "Traceback" not in stderr and len(lines) == 1, stderr[-3000:]
    assert f"the LM server at {url} cannot be reached" in lines[0]
    before, before_all = cached(cache), cached(cache, None)
    written = out.read_text().splitlines() if out.exists() else []
    assert before and len(written) < N_BIOS

    # The rerun against the restarted server computes only what is missing.
    vllm_server.start()
    served, served_rows = run_eval(cmd)
    assert before < cached(cache)  # the kill came part of the way
    record = json.loads((tmp_path / "s.jsonl.record.json").read_text())
    whole = json.loads((tmp_path / "l.jsonl.record.json").read_text())["cache"]
    hits, misses = record["cache"]["hits"], record["cache"]["misses"]
    assert hits + misses == whole["hits"] + whole["misses"]  # the same lookups as a whole run
    assert hits >= len(before) and 0 < misses < hits + misses  # the cached part read back
    assert before_all <= cached(cache, None)
    # the same weights and rule: the embedded model's fitted default, NP from vLLM
    assert served["thresholds"] == local["thresholds"]
    assert served["thresholds"]["from"] == f"fitted defaults of {SMALL_LM}"
    assert record["lm"]["backend"] == "server" and record["lm"]["url"] == url
    assert record["lm"]["prompt_logprobs"] == "prompt_logprobs"
    assert record["settings"]["verifier"] == "default"

    found = agreement(local_rows, served_rows, "default", local["thresholds"]["rule_weights"])
    assert found["facts"] == found["facts_local"] == found["facts_served"] >= 12
    served_facts = [f for r in served_rows for f in r["decisions"] + r["human"]["facts"]]
    assert all(0 < f["np"] <= 1 for f in served_facts)  # NP through prompt_logprobs
    report = f"{found}; decided otherwise (in-process fitted score, fact): {found['differ']}"
    assert found["away_n"] >= 0.5 * found["facts"], report
    assert found["agree_away"] >= 0.98, report  # farther than BAND from the cut
    assert found["agree"] >= 0.95, report
