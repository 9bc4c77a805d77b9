"""Shared fixtures: real data from ../shared/data, and indexes built once per session."""

from __future__ import annotations

import bz2
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from factscore_local.index.builder import BuildOptions, build_index
from factscore_local.runtime.offline import enforce_offline

enforce_offline()  # before any test imports a Hugging Face library

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
EXCERPT = (
    SHARED / "wiki-dumps" / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)
TABLES = SHARED / "wiki-dumps" / "enwiki-table-markup.xml.bz2"
DEV_DB = SHARED / "enwiki-20230401" / "enwiki-20230401-dev.db"

# The suite's own process holds a model while the commands it starts load theirs: turn the
# machine-wide turn-taking of model processes off (tests/test_core_slots.py tests it).
os.environ.setdefault("FSCORE_MODEL_LOCK", "0")
# A server that does not answer stops a run after 2 retries (1.5 s), not 5 (15.5 s): the
# suite kills servers on purpose, and the retries' own behaviour is test_server_lm's.
os.environ.setdefault("FSCORE_SERVER_RETRIES", "2")


# The files that take minutes (a vLLM server started twice, Ray clusters, a long batched
# schedule) come first, so that pytest-xdist's workers (scripts/test.sh) start them at once
# and finish together, rather than one worker running the last long file alone.
LONG_FILES = ("test_vllm_server.py", "test_ray.py", "test_batch_schedule.py", "test_eval_e2e.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(Path(str(item.fspath)).name, len(rank)))


# CI sets FSCORE_REQUIRE_DATA=1 (.ci/run): there a missing file of ../shared/data fails the
# test that needs it instead of skipping it, so a run without the data cannot pass.
REQUIRE_DATA = "FSCORE_REQUIRE_DATA"


def require(path: Path) -> Path:
    """``path`` when it exists; else the test is skipped, or fails under
    ``FSCORE_REQUIRE_DATA=1``."""
    if not path.exists():
        message = f"real test data not available: {path} (needs ../shared/data)"
        if os.environ.get(REQUIRE_DATA) == "1":
            pytest.fail(f"{message}; {REQUIRE_DATA}=1 makes that a failure", pytrace=False)
        pytest.skip(message)
    return path


def xml_pages(path: Path) -> list[dict]:
    """Independent reading of a dump, to check the builder against."""
    pages = []
    with bz2.open(path, "rb") as f:
        for _, elem in ET.iterparse(f):
            if elem.tag.rsplit("}", 1)[-1] != "page":
                continue
            rec = {"title": None, "ns": None, "redirect": None, "text": None}
            for node in elem.iter():
                tag = node.tag.rsplit("}", 1)[-1]
                if tag in ("title", "ns", "text") and rec[tag] is None:
                    rec[tag] = node.text
                elif tag == "redirect":
                    rec["redirect"] = node.get("title")
            pages.append(rec)
            elem.clear()
    return pages


@pytest.fixture(scope="session")
def xml_index(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("xml-index")
    build_index(BuildOptions(source=require(EXCERPT), out=out, dense=None, progress=False))
    return out


@pytest.fixture(scope="session")
def db_index(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("db-index")
    build_index(BuildOptions(source=require(DEV_DB), out=out, dense=None, progress=False))
    return out


def require_model(name: str) -> Path:
    """An embedded model's installed file, or a skip naming how to install it: a failure
    under ``FSCORE_REQUIRE_DATA=1`` (CI, where scripts/setup.sh installs both models)."""
    from factscore_local.model_store import installed_path

    path = installed_path(name)
    if path is None:
        message = f"{name} not installed (fscore models install)"
        if os.environ.get(REQUIRE_DATA) == "1":
            pytest.fail(f"{message}; {REQUIRE_DATA}=1 makes that a failure", pytrace=False)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def small_lm_export() -> Path:
    """The small GGUF's float32 safetensors export (``lm.export_hf``: written once beside
    the models; its GGUF hashed once per session), which vLLM serves and transformers loads."""
    from factscore_local.lm.export_hf import export_hf
    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    return export_hf(SMALL_LM)


@pytest.fixture(scope="session")
def hf_small_lm(small_lm_export):
    """The small GGUF's weights dequantized to float32 on the transformers backend, on the
    CPU: read from its export, seconds where transformers' own load of the GGUF takes a
    minute; the heavy test_export_hf checks that the export is that load."""
    pytest.importorskip("transformers")
    from factscore_local.lm import load_lm

    return load_lm(str(small_lm_export), backend="transformers", threads=2, device="cpu")


@contextmanager
def judged_prompts(raw) -> Iterator[list[str]]:
    """The verification prompts a loaded LM judges while the block runs."""
    captured: list[str] = []
    inner = raw.true_false_with_statement

    def spy(prompts, prefixes, spans, *labels):
        captured.extend(prompts)
        return inner(prompts, prefixes, spans, *labels)

    raw.true_false_with_statement = spy
    try:
        yield captured
    finally:
        raw.true_false_with_statement = inner


# --- a real browser (the report's page, the docs site) -------------------------------
CHROMIUM = Path("/usr/bin/chromium")  # Debian's package (scripts/setup.sh installs it)
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run",
                  "--disable-quic"]  # fmt: skip


@pytest.fixture
def browser_page():
    """A headless Chromium page that records console errors and uncaught exceptions. CI
    sets FSCORE_REQUIRE_BROWSER=1, where a missing browser fails instead of skipping."""
    missing = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = "playwright is not installed"
    if missing is None and not CHROMIUM.exists():
        missing = f"no Chromium at {CHROMIUM}"
    if missing:
        if os.environ.get("FSCORE_REQUIRE_BROWSER") == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.errors = []
        page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        yield page
        browser.close()
