"""Every command that reaches an LM server, given one that nothing listens on (a closed
loopback port), ends with one line naming the URL and exit status 2: no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import click

from factscore_local.cli import main as fscore
from factscore_local.index.builder import BuildOptions, build_index
from scripts.llama_server import free_port

# Commands with an --lm that names a model without asking any server.
NO_SERVER = {
    "ship-rule": "names the model a rule ships for",
    "ship-head": "names the model a head ships for",
}


def _inputs(tmp_path: Path) -> dict[str, list[str]]:
    """Each command's smallest valid arguments (but --lm), over a one-page index."""
    pages = tmp_path / "pages.jsonl"
    pages.write_text(json.dumps({"title": "Ada Lovelace", "text": "Ada Lovelace was an "
                                 "English mathematician born in 1815."}) + "\n")  # fmt: skip
    index = tmp_path / "index"
    build_index(BuildOptions(source=pages, out=index, dense=None, bm25=False, progress=False))
    facts = [{"text": "Ada Lovelace was born in 1815.", "label": "S"}]
    sentence = {
        "text": "Ada Lovelace was born in 1815.",
        "is-relevant": True,
        "model-atomic-facts": [{"text": facts[0]["text"]}],
        "human-atomic-facts": facts,
    }
    bios = tmp_path / "bios.jsonl"
    bios.write_text(json.dumps({"topic": "Ada Lovelace", "output": sentence["text"],
                                "annotations": [sentence]}) + "\n")  # fmt: skip
    claims = tmp_path / "claims.jsonl"
    claims.write_text(json.dumps({"claim": "Ada Lovelace was born in 1815.", "label": "true",
                                  "revised_claim": ""}) + "\n")  # fmt: skip
    responses = tmp_path / "responses.jsonl"
    responses.write_text(json.dumps({"response": sentence["text"]}) + "\n")
    common = ["--index", str(index)]
    return {
        "eval": [*common, "--input", str(bios), "--quiet"],
        "calibrate": [
            *common,
            "--input",
            str(bios),
            "--use-atomic-facts",
            "--quiet",
            "--out",
            str(tmp_path / "settings.json"),
        ],  # fmt: skip
        "verifiers": [],
        "factcheck": [*common, "--claims", str(claims), "--out", str(tmp_path / "fc"), "--quiet"],
        "veriscore": [
            *common,
            "--input",
            str(responses),
            "--out",
            str(tmp_path / "vs.jsonl"),
            "--quiet",
        ],  # fmt: skip
        "demo": ["--out", str(tmp_path / "demo")],
    }


def _with_lm() -> set[str]:
    """The commands that take --lm."""
    ctx = click.Context(fscore)
    return {
        name
        for name in fscore.list_commands(ctx)
        if any("--lm" in p.opts for p in fscore.get_command(ctx, name).params)
    }


def _run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "factscore_local.cli", *args],
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def _one_line_error(done: subprocess.CompletedProcess, url: str) -> str | None:
    """What is wrong with a run's ending (None: one error line naming the URL, status 2)."""
    lines = done.stderr.strip().splitlines()
    if done.returncode != 2 or "Traceback" in done.stderr:
        return f"exit {done.returncode}: {done.stderr[-600:]}"
    if not lines or not lines[-1].startswith("error: ") or url not in lines[-1]:
        return f"last line: {lines[-1:]}"
    return None


def test_every_command_that_reaches_a_server_stops_with_one_line(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    commands = _inputs(tmp_path)
    assert _with_lm() == set(commands) | set(NO_SERVER)  # a new command is listed here
    # rerun: a record whose LM is the server (from a run that needs no LM)
    record = tmp_path / "scored.jsonl.record.json"
    made = _run(["eval", *commands["eval"], "--use-atomic-facts", "--verifier",
                 "always-supported", "--out", str(tmp_path / "scored.jsonl")])  # fmt: skip
    assert made.returncode == 0, made.stderr[-2000:]
    data = json.loads(record.read_text())
    data["settings"] |= {"lm": url, "verifier": "retrieve-lm"}
    record.write_text(json.dumps(data))
    runs = {name: [name, *args, "--lm", url] for name, args in commands.items()}
    runs["rerun"] = ["rerun", str(record), "--quiet", "--out", str(tmp_path / "again.jsonl")]
    with ThreadPoolExecutor(len(runs)) as pool:  # each waits out the client's retries
        done = dict(zip(runs, pool.map(_run, runs.values()), strict=True))
    wrong = {name: _one_line_error(d, url) for name, d in done.items()}
    assert {name: w for name, w in wrong.items() if w} == {}
    assert not (tmp_path / "demo").exists()  # stopped before its build
