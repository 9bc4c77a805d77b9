"""Files the package reads at run time (installed as ``factscore_local.data``).

The repository keeps them in the top-level ``data/`` folder; ``pyproject.toml`` maps that
folder to this package so that a wheel ships them. Read them with :func:`data_file`.
"""

from importlib.resources import files
from pathlib import Path


def data_file(name: str) -> Path:
    """The path of a shipped data file, e.g. ``data_file("demos.json")``."""
    return Path(str(files(__name__) / name))
