"""The offline bundle (scripts/bundle.sh) and its installer, on a small real bundle:
factscore-local's own wheel, the embedded 0.5B model, the packaged source and the dump
excerpt, with no dependencies (their wheels would be a GB; the whole bundle was run end to
end once, the airgap record: scripts/results/airgap.json). Nothing here needs the network:
the installer runs in a namespace without one where the machine allows it (root and
unshare)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from factscore_local import model_store
from factscore_local.index.demo_data import EXCERPT, find_dump
from factscore_local.index.open_domain import installed_source

ROOT = Path(__file__).resolve().parents[1]
BUNDLE_SH = ROOT / "scripts" / "bundle.sh"
SMALL = model_store.SMALL_LM


def bash(*args: str | Path, env: dict | None = None, offline: bool = False):
    command = ["bash", *map(str, args)]
    if offline and os.geteuid() == 0 and shutil.which("unshare"):
        command = ["unshare", "-n", "--", *command]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    if model_store.installed_path(SMALL) is None:
        pytest.skip(f"{SMALL} is not installed (scripts/setup.sh installs it)")
    if installed_source() is None:
        pytest.skip("the vital-articles source is not installed (scripts/setup.sh)")
    try:
        find_dump(EXCERPT, download=False)
    except FileNotFoundError:
        pytest.skip("the dump excerpt is neither in shared/data nor in the cache")
    out = tmp_path_factory.mktemp("bundle")
    done = bash(BUNDLE_SH, out, "--no-deps", "--models", SMALL)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.slow
def test_manifest_lists_every_file_with_size_and_sha256(bundle):
    manifest = json.loads((bundle / "manifest.json").read_text())
    listed = {f["path"]: f for f in manifest["files"]}
    on_disk = {
        p.relative_to(bundle).as_posix()
        for p in bundle.rglob("*")
        if p.is_file() and p.name not in ("manifest.json", "SHA256SUMS")
    }
    assert set(listed) == on_disk
    for rel, entry in listed.items():
        assert (bundle / rel).stat().st_size == entry["size"], rel
    gguf = f"models/{SMALL}.gguf"
    assert listed[gguf]["sha256"] == model_store.EMBEDDED_MODELS[SMALL].sha256
    wheel = next(r for r in listed if r.startswith("wheels/factscore_local-"))
    assert listed[wheel]["sha256"] == sha256(bundle / wheel)
    assert manifest["total_bytes"] == sum(f["size"] for f in listed.values())
    sums = dict(line.split("  ")[::-1] for line in (bundle / "SHA256SUMS").read_text().split("\n")
                if line)  # fmt: skip
    assert sums == {rel: f["sha256"] for rel, f in listed.items()}
    assert manifest["requirement"] == "factscore-local[all]==0.1.0"


@pytest.mark.slow
def test_install_offline_puts_models_where_the_store_reads(bundle, tmp_path, monkeypatch):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "FSCORE_"))}
    env |= {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHON": sys.executable}
    venv = tmp_path / "venv"
    done = bash(bundle / "install.sh", venv, env=env, offline=True)
    assert done.returncode == 0, done.stderr
    assert "files match SHA256SUMS" in done.stderr
    assert "fscore eval --index" in done.stdout
    version = subprocess.run(
        [venv / "bin" / "python", "-c",
         "import importlib.metadata as m; print(m.version('factscore-local'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert version == "0.1.0"
    # The model store of this process, pointed at the same cache, finds the copied model.
    monkeypatch.delenv("FSCORE_MODEL_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert model_store.resolve_lm(SMALL) == model_store.model_dir() / f"{SMALL}.gguf"
    cache = tmp_path / "cache" / "factscore-local"
    assert (cache / "wiki-dumps" / EXCERPT).is_file()
    assert any((cache / "sources").glob("*.whl"))
    # A second run keeps what is there and installs nothing new.
    again = bash(bundle / "install.sh", venv, "--no-verify", env=env, offline=True)
    assert again.returncode == 0, again.stderr


@pytest.mark.slow
def test_models_in_place_and_model_dir_variable(bundle, tmp_path, monkeypatch):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "FSCORE_"))}
    env |= {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHON": sys.executable}
    done = bash(bundle / "install.sh", tmp_path / "venv", "--no-verify", "--models-in-place",
                env=env, offline=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"export FSCORE_MODEL_DIR={bundle / 'models'}" in done.stdout
    assert not (tmp_path / "cache" / "factscore-local" / "models").exists()
    monkeypatch.setenv("FSCORE_MODEL_DIR", str(bundle / "models"))
    assert model_store.resolve_lm(SMALL) == bundle / "models" / f"{SMALL}.gguf"


@pytest.mark.slow
def test_a_damaged_bundle_is_refused(bundle, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(bundle, copy, ignore=shutil.ignore_patterns("*.gguf"))
    sums = copy / "SHA256SUMS"  # the copy leaves the model out: so does its list
    sums.write_text("".join(x for x in sums.read_text().splitlines(True) if ".gguf" not in x))
    wheel = next((copy / "wheels").glob("factscore_local-*.whl"))
    data = bytearray(wheel.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte
    wheel.write_bytes(bytes(data))
    env = {**os.environ, "PYTHON": sys.executable, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = bash(copy / "install.sh", tmp_path / "venv", env=env)
    assert done.returncode != 0
    assert "damaged" in done.stderr
    assert not (tmp_path / "venv").exists()


def test_bundle_refuses_a_folder_inside_the_repository():
    done = bash(BUNDLE_SH, ROOT / "bundle-here", "--no-deps")
    assert done.returncode == 2
    assert "inside the repository" in done.stderr
    assert not (ROOT / "bundle-here").exists()


def test_bundle_rejects_bad_options(tmp_path):
    assert "usage" in bash(BUNDLE_SH).stderr
    done = bash(BUNDLE_SH, tmp_path / "b", "--frobnicate")
    assert done.returncode == 2 and "unknown option --frobnicate" in done.stderr
    done = bash(BUNDLE_SH, tmp_path / "b", "--python", "three")
    assert done.returncode == 2 and "give X.Y" in done.stderr
