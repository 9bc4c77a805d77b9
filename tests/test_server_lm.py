"""An OpenAI-compatible inference server as the LM (``--lm http://HOST:PORT/v1``).

The client's error handling and ServerLM's readouts run against small HTTP servers started
here (real sockets; the answers are scripted). The slow test starts a real
``python -m llama_cpp.server`` with the embedded 0.5B and scores labeled dev bios through
it and in process, then kills it mid-run and resumes from the cache.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from factscore_local.declarations.verifiers import list_rules
from factscore_local.lm.protocol import PROMPT_LOGPROBS
from factscore_local.lm.server_client import ServerClient, ServerError
from factscore_local.pipeline.plan import PlanError, plan_for
from scripts.llama_server import LlamaServer, free_port
from tests.conftest import SHARED, require, require_model

# --- a scripted HTTP server ----------------------------------------------------------


@contextmanager
def http_server(respond):
    """A real HTTP server on loopback; ``respond(method, path, body)`` returns (status,
    answer), the answer bytes or an object sent as JSON. Yields the API's base URL."""

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            status, answer = respond(method, self.path, body)
            data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802 (http.server's names)
            self._answer("GET")

        def do_POST(self):  # noqa: N802
            self._answer("POST")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def quick(url: str, **kwargs) -> ServerClient:
    return ServerClient(url, **{"retries": 2, "backoff": 0.01, **kwargs})


# --- the client's errors ---------------------------------------------------------------


def test_the_retries_are_five_unless_the_environment_says_otherwise(monkeypatch):
    from factscore_local.lm.server_client import RETRIES, RETRIES_VARIABLE

    monkeypatch.delenv(RETRIES_VARIABLE, raising=False)
    assert RETRIES == 5 and ServerClient("http://127.0.0.1:9/v1").retries == 5
    monkeypatch.setenv(RETRIES_VARIABLE, "9")
    assert ServerClient("http://127.0.0.1:9/v1").retries == 9
    assert ServerClient("http://127.0.0.1:9/v1", retries=0).retries == 0  # an argument wins
    monkeypatch.setenv(RETRIES_VARIABLE, "many")
    with pytest.raises(ValueError, match=f"{RETRIES_VARIABLE}='many'"):
        ServerClient("http://127.0.0.1:9/v1")


def test_a_server_that_is_down_is_an_error_naming_its_url():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ServerError, match=re.escape(url) + ".*cannot be reached.*3 tries"):
        quick(url).models()


def test_a_malformed_answer_is_an_error_naming_the_url():
    with http_server(lambda m, p, b: (200, b"<html>proxy error</html>")) as url:
        client = quick(url)
        with pytest.raises(ServerError, match=re.escape(url) + ".*not JSON: <html>proxy"):
            client.models()
    with http_server(lambda m, p, b: (200, {"data": 3})) as url:
        client = quick(url)
        with pytest.raises(ServerError, match=re.escape(url) + ".*/models with no list of"):
            client.models()


def test_5xx_answers_are_retried_with_backoff():
    calls = []

    def respond(method, path, body):
        calls.append(path)
        return (503, b"loading") if len(calls) < 3 else (200, {"data": [{"id": "m"}]})

    with http_server(respond) as url:
        assert quick(url).models() == [{"id": "m"}] and len(calls) == 3
    with http_server(lambda m, p, b: (500, b"boom")) as url:
        client = quick(url)
        with pytest.raises(ServerError, match="HTTP 500: boom.*3 tries"):
            client.models()


def test_a_refused_request_is_one_bios_error_and_a_wrong_url_stops_the_run():
    answers = {"/v1/completions": (400, {"error": "prompt too long"}), "/x/models": (404, {})}
    with http_server(lambda m, path, b: answers[path]) as url:
        with pytest.raises(ValueError, match="HTTP 400.*prompt too long") as refused:
            quick(url).post("/completions", {})
        assert not isinstance(refused.value, ServerError)
        with pytest.raises(ServerError, match="has no /models.*http://HOST:PORT/v1"):
            quick(url.replace("/v1", "/x")).models()


def test_requests_in_flight_are_bounded():
    lock, now, most = threading.Lock(), [0], [0]

    def respond(method, path, body):
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        time.sleep(0.1)
        with lock:
            now[0] -= 1
        return 200, {"n": body["n"]}

    with http_server(respond) as url:
        answers = quick(url, concurrency=3).post_many("/completions", [{"n": i} for i in range(12)])
    assert [a["n"] for a in answers] == list(range(12))
    assert 2 <= most[0] <= 3


# --- ServerLM's readouts against scripted servers --------------------------------------


class WordVocab:
    """A tokenizer for the scripted server: words with their leading space, and single
    characters (its pieces spell the text back)."""

    PATTERN = re.compile(r" ?\w+| ?[^\w ]| ")

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.lock = threading.Lock()

    def encode(self, text: str) -> list[int]:
        with self.lock:
            return [self.ids.setdefault(p, len(self.ids)) for p in self.PATTERN.findall(text)]

    def decode(self, ids: list[int]) -> str:
        pieces = {i: p for p, i in self.ids.items()}
        return "".join(pieces[i] for i in ids)


def logprob_at(position: int) -> float:
    return -0.01 * (position % 7)


def vllm_like(vocab: WordVocab, prompt_logprobs: bool = True, top=None):
    """A server answering as vLLM does: /v1/models with max_model_len, /tokenize, and
    completions with its prompt_logprobs extension (when ``prompt_logprobs``)."""
    top = top or {" True": -0.3, " False": -1.5, " maybe": -2.5}
    served = {"requests": 0, "prompts": 0, "metrics": 0}

    def respond(method, path, body):
        if path == "/v1/models":
            return 200, {"data": [{"id": "fake-model", "max_model_len": 4096}]}
        if path == "/tokenize":
            return 200, {"tokens": vocab.encode(body["prompt"])}
        if path == "/detokenize":
            return 200, {"prompt": vocab.decode(body["tokens"])}
        if path == "/metrics":  # Prometheus text, as vLLM's
            served["metrics"] += 1
            n = served["prompts"]
            return 200, (f"# TYPE vllm:prompt_tokens_total counter\n"
                         f'vllm:prompt_tokens_total{{model_name="fake-model"}} {5.0 * n}\n'
                         f"vllm:prefix_cache_queries_total {10.0 * n}\n"
                         f"vllm:prefix_cache_hits_total {6.0 * n}\n"
                         f"vllm:num_requests_waiting {min(n, 3)}.0\n").encode()  # fmt: skip
        assert path == "/v1/completions" and body["model"] == "fake-model"
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        served["requests"] += 1
        served["prompts"] += len(prompts)
        served["last"] = body
        choices = []
        for index, prompt in enumerate(prompts):
            # a prompt's own answer: True's log-probability tells which prompt it was
            shown = {**top, " True": top[" True"] - 0.01 * prompt.count("#")}
            choice = {"index": index, "text": "first line\nsecond",
                      "logprobs": {"top_logprobs": [shown]}}  # fmt: skip
            if prompt_logprobs and body.get("prompt_logprobs") is not None:
                ids = vocab.encode(prompt)
                choice["prompt_token_ids"] = ids
                choice["prompt_logprobs"] = [None] + [
                    {str(t): {"logprob": logprob_at(j), "rank": 1}} for j, t in enumerate(ids) if j
                ]
            choices.append(choice)
        choices.reverse()  # the index, not the order, says whose answer a choice is
        usage = {"prompt_tokens": 5 * len(prompts), "completion_tokens": len(prompts)}
        return 200, {"choices": choices, "usage": usage}

    respond.served = served
    return respond


def test_server_lm_reads_verdicts_and_statement_logprobs_from_prompt_logprobs():
    from factscore_local.lm.server_backend import ServerLM
    from factscore_local.lm.server_vocab import EndpointVocab
    from factscore_local.runtime.cache import ResultCache

    vocab = WordVocab()
    with http_server(vllm_like(vocab)) as url:
        lm = ServerLM(url)
        assert isinstance(lm.vocab, EndpointVocab) and lm.prompt_logprobs == "prompt_logprobs"
        assert lm.n_ctx == 4096 and lm.cache_identity(ResultCache(None)) == "fake-model|server"
        prompt = "Evidence: Ada Lovelace wrote notes.\n\nSTATEMENT: Ada wrote notes\nTrue or False?"
        start = prompt.index(" Ada wrote")
        [(verdict, ids, logprobs)] = lm.true_false_with_statement(
            [prompt], [prompt[:start]], [(start, start + len(" Ada wrote notes"))]
        )
        assert verdict.margin == pytest.approx(1.2)
        assert vocab.decode(ids) == " Ada wrote notes"
        first = len(vocab.encode(prompt[:start]))
        assert list(logprobs) == pytest.approx([logprob_at(first + j) for j in range(3)])
        # a label outside the top log-probabilities gets the lowest shown, and is counted
        [[yes, no]] = lm.choice_logits(["Q?"], [("Yes",), (" maybe",)])
        assert (yes, no) == (-2.5, -2.5) and lm.stats.extra["label_not_in_top"] == 1
        assert lm.generate(["P"], 8, ["\n"]) == ["first line"]
        # the plan of a rule with NP runs; one with a state head stops, naming what lacks
        plan_for("retrieve-lm+np").check(lm)
        head_rule = next(r.name for r in list_rules(everything=True) if "head" in r.signals)
        with pytest.raises(PlanError, match=re.escape(url) + ".*hidden states.*rules it can run"):
            plan_for(head_rule).check(lm)
        with pytest.raises(ServerError, match="chat template of 'fake-model'.*--verify-format"):
            lm.chat("a question")


def test_prompts_share_requests_and_the_engine_counters_are_recorded():
    """A vLLM-like server gets up to 8 prompts a request (each answer matched back by its
    choice's index), and the run record keeps what its /metrics counters moved by."""
    from factscore_local.lm.server_backend import ServerLM
    from factscore_local.runtime.cache import ResultCache

    respond = vllm_like(WordVocab())
    with http_server(respond) as url:
        lm = ServerLM(url)
        before = dict(respond.served)
        prompts = [f"Q{'#' * i}?" for i in range(11)]
        margins = [v.margin for v in lm.true_false(prompts)]
        assert respond.served["requests"] - before["requests"] == 2  # 8 + 3 prompts
        # greedy and unpenalised, whatever a served folder's generation_config.json says
        last = respond.served["last"]
        assert (last["temperature"], last["repetition_penalty"]) == (0.0, 1.0)
        assert margins == pytest.approx([1.2 - 0.01 * i for i in range(11)])
        entry = lm.fingerprint(ResultCache(None))
    assert entry["prompts_per_request"] == 8
    metrics = entry["server_metrics"]
    assert metrics["counters"]["vllm:prompt_tokens_total"] == 55.0
    assert metrics["prefix_cache_hit_rate"] == 0.6
    assert metrics["peaks"]["vllm:num_requests_waiting"] == 3.0


def test_a_server_without_prompt_logprobs_scores_rules_without_np_only():
    from factscore_local.lm.server_backend import ServerLM
    from factscore_local.runtime.cache import ResultCache

    vocab = WordVocab()
    with http_server(vllm_like(vocab, prompt_logprobs=False)) as url:
        lm = ServerLM(url)
        assert lm.prompt_logprobs is None
        assert lm.cache_identity(ResultCache(None)).endswith("|server|no-prompt-logprobs")
        assert PROMPT_LOGPROBS not in lm.capabilities
        plan_for("retrieve-lm").check(lm)
        with pytest.raises(PlanError, match=re.escape(url) + ".*prompt log-probabilities "
                           r"\(for NP read from the verification pass\).*retrieve-lm"):  # fmt: skip
            plan_for("retrieve-lm+np").check(lm)
        [(verdict, ids, _)] = lm.true_false_with_statement(["S: x\nTrue?"], ["S:"], [(2, 4)])
        assert verdict.margin == pytest.approx(1.2) and ids == []


def test_malformed_completions_stop_the_run():
    from factscore_local.lm.server_backend import ServerLM

    vocab = WordVocab()
    good = vllm_like(vocab)

    def respond(method, path, body):
        if path == "/v1/completions" and body.get("max_tokens") == 7:
            return 200, {"choices": []}
        return good(method, path, body)

    with http_server(respond) as url:
        lm = ServerLM(url)
        with pytest.raises(ServerError, match=re.escape(url) + ".*no choices"):
            lm.generate(["P"], 7, [])


def test_a_served_embedded_model_gets_its_fitted_rule(tmp_path):
    """The 0.5B's fitted rule, by --lm-model, or by the name the server lists
    (llama-cpp-python's server lists the GGUF's path) once the run is connected: building
    the config sends no request."""
    from factscore_local.config import build_config
    from factscore_local.config.build import with_served_defaults
    from factscore_local.lm.names import served_name
    from factscore_local.model_store import SMALL_LM

    local = build_config({"index": tmp_path, "lm": SMALL_LM})
    assert local.thresholds_from == f"fitted defaults of {SMALL_LM}"
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    config = build_config({"index": tmp_path, "lm": url, "lm_model": SMALL_LM})
    assert (config.verifier, config.thresholds) == (local.verifier, local.thresholds)
    assert config.defaults_pending is None
    requests = []
    listed = {"data": [{"id": f"/models/{SMALL_LM}.gguf", "owned_by": "me"}]}
    with http_server(lambda m, p, b: (requests.append(p), (200, listed))[1]) as url:
        config = build_config({"index": tmp_path, "lm": url, "k": 3})
    assert requests == [] and config.defaults_pending == ()
    resolved = with_served_defaults(config, served_name(listed["data"][0]["id"]))
    assert (resolved.verifier, resolved.thresholds) == (local.verifier, local.thresholds)
    assert resolved.thresholds_from == local.thresholds_from and resolved.k == 3
    assert resolved.defaults_pending is None
    # what was given stays: another rule, and a margin
    given = build_config({"index": tmp_path, "lm": url, "verifier": "retrieve-lm",
                          "margin": 0.4})  # fmt: skip
    kept = with_served_defaults(given, SMALL_LM)
    assert (kept.verifier, kept.margin) == ("retrieve-lm", 0.4)
    with pytest.raises(ValueError, match="--lm-model names a model of an LM server"):
        build_config({"index": tmp_path, "lm": SMALL_LM, "lm_model": "x"})


def test_a_run_on_an_unreachable_server_stops_before_the_first_bio(db_index, tmp_path):
    """The config builds with no request; the run stops at its plan check, where the LM
    is connected, with one line naming the URL, and writes no row."""
    from click.testing import CliRunner

    from factscore_local.cli import main

    url = f"http://127.0.0.1:{free_port()}/v1"
    bios = tmp_path / "bios.jsonl"
    bios.write_text(json.dumps({"topic": "Ada Lovelace", "output": "She wrote notes."}) + "\n")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(main, ["eval", "--index", str(db_index), "--input", str(bios),
                                       "--lm", url, "--out", str(out), "--quiet"])  # fmt: skip
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and url in lines[0]
    assert "cannot be reached" in lines[0] and "Traceback" not in result.output
    assert not out.exists() or out.read_text() == ""


# --- a real llama.cpp server with the embedded 0.5B (slow) ------------------------------

CHATGPT = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"
# How far llama.cpp moves a margin with how a prompt's tokens are split into batches: the
# server reuses the KV cache of its last prompt, the in-process backend evaluates a shared
# prefix canonically. Measured on 158 human facts of 6 dev bios (0.5B, retrieve-lm): mean
# 0.025, max 0.12; decisions agreed on 151 (95.6%): all 7 others within 0.05 of the fitted
# margin, which 46 of the 158 margins lie within 0.1 of. Between two server runs (8 or 1
# requests in flight): mean 0.001, max 0.05, every decision the same.
NOISE = 0.15
BAND = 0.1  # decisions agree >= 98% outside this band around the threshold


@pytest.fixture
def llama_server(tmp_path):
    pytest.importorskip("llama_cpp")
    for module in ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
        pytest.importorskip(module, reason="llama-cpp-python's server extra (pip install "
                            "'factscore-local[llama]')")  # fmt: skip
    from factscore_local.model_store import SMALL_LM

    model = require_model(SMALL_LM)
    server = LlamaServer(model, tmp_path / "server.log")
    server.start()
    yield server
    server.kill()


def first_sentences(tmp_path: Path, n_bios: int = 2) -> Path:
    """Labeled dev bios cut to their first sentence, which is decomposed, with the human
    facts of their first three (verified, not decomposed: ~40 facts to compare)."""
    out = tmp_path / "bios.jsonl"
    lines = []
    for line in require(CHATGPT).read_text().splitlines()[:n_bios]:
        bio = json.loads(line)
        kept = bio["annotations"][:3]
        lines.append({"topic": bio["topic"], "output": kept[0]["text"], "annotations": kept})
    out.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return out


# Short evidence blocks (the default reads up to 7000 tokens of a page per block): the
# server and the in-process run get the same prompts either way, at a fraction of the prefill.
EVIDENCE_BUDGET = 1024


def eval_command(index: Path, src: Path, lm: str, cache: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "factscore_local.cli", "eval", "--index", str(index),
            "--input", str(src), "--lm", lm, "--verifier", "retrieve-lm", "--cache",
            str(cache), "--out", str(out), "--quiet", "--json",
            "--evidence-budget", str(EVIDENCE_BUDGET)]  # fmt: skip


def run_eval(*args) -> tuple[dict, list[dict]]:
    done = subprocess.run(eval_command(*args), capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    out = args[-1]
    return json.loads(done.stdout), [json.loads(x) for x in out.read_text().splitlines()]


def decisions(rows: list[dict]) -> dict[tuple, tuple[bool, float]]:
    """(topic, model or human, fact) -> (decision, margin)."""
    found = {}
    for row in rows:
        for kind, facts in (("model", row["decisions"]), ("human", row["human"]["facts"])):
            for fact in facts:
                found[(row["topic"], kind, fact["atom"])] = (fact["is_supported"], fact["margin"])
    return found


def cached_keys(cache: Path, kind: str) -> set[str]:
    try:
        with sqlite3.connect(cache, timeout=30) as conn:
            return {k for (k,) in conn.execute("SELECT key FROM results WHERE kind = ?", (kind,))}
    except sqlite3.OperationalError:  # not made yet
        return set()


@pytest.mark.slow
# minutes: CI's real servers are vLLM (tests/test_vllm_server.py: agreement, kill and
# resume), llama.cpp's own (tests/test_xllamacpp_server.py) and this one behind Ray's workers
# (tests/test_ray.py)
@pytest.mark.heavy
def test_a_real_llama_server_scores_as_in_process_and_a_killed_run_resumes(
    db_index, tmp_path, llama_server
):
    from factscore_local.model_store import SMALL_LM

    src = first_sentences(tmp_path)
    url = llama_server.url
    local, local_rows = run_eval(db_index, src, SMALL_LM, tmp_path / "l.db", tmp_path / "l.jsonl")
    served, served_rows = run_eval(db_index, src, url, tmp_path / "s.db", tmp_path / "s.jsonl")
    # the same weights: the embedded model's fitted margin applies through the server
    assert served["thresholds"] == local["thresholds"]
    assert served["thresholds"]["from"] == f"fitted defaults of {SMALL_LM}"
    record = json.loads((tmp_path / "s.jsonl.record.json").read_text())
    assert record["lm"]["backend"] == "server" and record["lm"]["url"] == url
    assert record["lm"]["sha256"] and record["lm"]["prompt_logprobs"] is None
    a, b = decisions(local_rows), decisions(served_rows)
    both = set(a) & set(b)
    assert {k for k in a if k[1] == "human"} <= both  # the same facts, the same prompts
    assert len(both) >= 0.75 * max(len(a), len(b)) and len(both) >= 8
    threshold = served["thresholds"]["margin"]
    agree = sum(a[k][0] == b[k][0] for k in both)
    clear = [k for k in both if abs(a[k][1] - threshold) >= BAND]
    agree_clear = sum(a[k][0] == b[k][0] for k in clear)
    assert agree_clear >= 0.98 * len(clear) and len(clear) >= 0.5 * len(both), (
        f"{agree_clear}/{len(clear)} decisions outside the noise band agree"
    )
    assert agree >= 0.9 * len(both), f"{agree}/{len(both)} decisions agree"
    assert max(abs(a[k][1] - b[k][1]) for k in both) < NOISE

    # Killed mid-run, after the first bio's verdicts are cached. The run starts from the
    # generations of the one above (resumed from a cache that holds them), so that it
    # spends its time on the verification it is killed in.
    cache, out = tmp_path / "r.db", tmp_path / "r.jsonl"
    shutil.copy(tmp_path / "s.db", cache)
    with sqlite3.connect(cache) as conn:
        conn.execute("DELETE FROM results WHERE kind != 'generate'")
    assert cached_keys(cache, "generate") and not cached_keys(cache, "true_false")
    run = subprocess.Popen(eval_command(db_index, src, url, cache, out),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 1200
    while not cached_keys(cache, "true_false") and run.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    llama_server.kill()
    _, stderr = run.communicate(timeout=300)
    assert run.returncode == 2, stderr[-3000:]
    assert f"the LM server at {url} cannot be reached" in stderr
    before = cached_keys(cache, "true_false")
    assert before and len(out.read_text().splitlines()) < len(served_rows)

    llama_server.start()
    _, resumed_rows = run_eval(db_index, src, url, cache, out)
    after = cached_keys(cache, "true_false")
    assert before < after
    record = json.loads((tmp_path / "r.jsonl.record.json").read_text())
    assert record["cache"]["hits"] >= len(before) + len(cached_keys(cache, "generate"))
    # the rows of the uninterrupted run: the same facts and decisions (a margin within the
    # server's run-to-run noise of the threshold may fall either side)
    c = decisions(resumed_rows)
    assert [r["topic"] for r in resumed_rows] == [r["topic"] for r in served_rows]
    assert set(c) == set(b)
    for k in b:
        assert abs(c[k][1] - b[k][1]) < 0.08, k
        assert c[k][0] == b[k][0] or abs(b[k][1] - threshold) < 0.08, k


def test_the_engine_queue_is_read_while_requests_are_in_flight():
    """The most requests waiting are sampled while the batch is in flight, not after it
    has come back (when the queue is empty again)."""
    from factscore_local.lm.server_backend import ServerLM
    from factscore_local.runtime.cache import ResultCache

    inner, state, lock = vllm_like(WordVocab()), {"in": 0, "slow": False}, threading.Lock()

    def respond(method, path, body):
        if path == "/metrics":
            return 200, f"vllm:num_requests_waiting {state['in']}.0\n".encode()
        if path == "/v1/completions" and state["slow"]:
            with lock:
                state["in"] += 1
            time.sleep(1.6)
            try:
                return inner(method, path, body)
            finally:
                with lock:
                    state["in"] -= 1
        return inner(method, path, body)

    with http_server(respond) as url:
        lm = ServerLM(url, prompts_per_request=1)
        state["slow"] = True
        lm.true_false([f"Q{i}?" for i in range(4)])
        peaks = lm.fingerprint(ResultCache(None))["server_metrics"]["peaks"]
    assert peaks["vllm:num_requests_waiting"] == 4.0
