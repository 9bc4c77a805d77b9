"""The name an LM goes by, resolved here once, with no request to any server.

A name is what the fitted defaults (``data/model-defaults.json``) and the shipped heads are
keyed by: an embedded model's name, a GGUF file's name without ``.gguf``, a directory's
name, or the name of the model a server serves. A server's model is only known here when
the run names it (``--lm-model``); otherwise the connected ``ServerLM`` reports it
(``ServerLM.model_name``), and the run's plan applies that model's defaults
(``pipeline/plan.py``).
"""

from __future__ import annotations

from pathlib import Path

from factscore_local.lm.server_client import is_server_spec


def served_name(model: str) -> str:
    """The name of a model as a server lists it (a path or a name) or as a spec gives it."""
    return Path(model).name.removesuffix(".gguf")


def known_name(spec: str | None, lm_model: str | None = None) -> str | None:
    """The name of the LM a spec gives, without asking any server: the default embedded
    model's for None; for a server, ``lm_model``'s, or None (known once connected)."""
    from factscore_local.model_store import DEFAULT_LM

    if spec is None:
        return DEFAULT_LM
    if is_server_spec(spec):
        return served_name(lm_model) if lm_model is not None else None
    return served_name(spec)
