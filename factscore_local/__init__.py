"""factscore-local: an offline FActScore estimator grounded in a local Wikipedia index.

The Python API (the ``fscore`` command line is a thin layer over it)::

    from factscore_local import build_index, evaluate

    build_index("enwiki-excerpt.xml.bz2", "my-index")
    result = evaluate("bios.jsonl", index="my-index")
    print(result.score, result.respond_ratio, result.facts_per_response)

The names are imported on first use, so ``import factscore_local`` loads no model library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Public name -> the module that defines it.
_API = {
    "evaluate": "factscore_local.api",
    "build_index": "factscore_local.api",
    "validate": "factscore_local.api",
    "calibrate": "factscore_local.api",
    "load_config": "factscore_local.api",
    "read_generations": "factscore_local.api",
    "run_config": "factscore_local.api",
    "EvalResult": "factscore_local.results",
    "EvalConfig": "factscore_local.config",
}
__all__ = [
    "EvalConfig",
    "EvalResult",
    "__version__",
    "build_index",
    "calibrate",
    "evaluate",
    "load_config",
    "read_generations",
    "run_config",
    "validate",
]

if TYPE_CHECKING:
    from factscore_local.api import (
        build_index,
        calibrate,
        evaluate,
        load_config,
        read_generations,
        run_config,
        validate,
    )
    from factscore_local.config import EvalConfig
    from factscore_local.results import EvalResult


def __getattr__(name: str) -> Any:
    if name in _API:
        import importlib

        value = getattr(importlib.import_module(_API[name]), name)
        globals()[name] = value  # looked up once
        return value
    raise AttributeError(f"module 'factscore_local' has no attribute {name!r}")
