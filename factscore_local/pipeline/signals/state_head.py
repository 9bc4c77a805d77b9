"""A head on the verdict's hidden state: a small model over the LM's final hidden state at
the position where True/False is read (``runtime/states.py``), giving the log-odds that a
fact is supported. It is read in the verification pass (no pass of its own) and becomes
the ``head`` signal a fitted rule can weigh.

A head is a logistic regression or a one-hidden-layer MLP (ReLU), trained with scikit-learn
on human labels (``labels/heads.py``) and applied here with numpy alone: the states are
standardised, then each layer is ``x @ W + b``. It is kept as an ``.npz`` file of its
arrays and a JSON record of what it was fitted on (model, data, seed, commit).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from factscore_local.data import data_file

HEAD_KINDS = ("logistic", "mlp")
HEADS_DIR = data_file("heads")


@dataclass(frozen=True)
class StateHead:
    """Standardisation, then ``layers`` of (weights, bias) with ReLU between them. A
    fact's head has one output, the log-odds of supported; a head over labels (the stance
    head, ``record["labels"]``) has one logit per label."""

    kind: str
    mean: np.ndarray
    scale: np.ndarray
    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    record: dict = field(default_factory=dict)  # what it was fitted on

    def __post_init__(self) -> None:
        if self.kind not in HEAD_KINDS:
            raise ValueError(f"a head is one of {HEAD_KINDS}; got {self.kind!r}")
        if not self.layers:
            raise ValueError("a head has at least one layer")

    @property
    def width(self) -> int:
        """The length of the states it reads."""
        return int(self.mean.shape[0])

    @property
    def outputs(self) -> int:
        return int(self.layers[-1][0].shape[1])

    def score(self, states: np.ndarray) -> np.ndarray:
        """Log-odds of supported, one per state (rows of ``states``)."""
        if self.outputs != 1:
            raise ValueError(f"this head gives {self.outputs} label logits, not one score")
        return self.logits(states)[:, 0].astype(float)

    def logits(self, states: np.ndarray) -> np.ndarray:
        """The last layer's outputs, one row per state."""
        x = np.atleast_2d(np.asarray(states, dtype=np.float32))
        if x.shape[1] != self.width:
            raise ValueError(
                f"this head reads states of {self.width} numbers (model "
                f"{self.record.get('model', '?')}); the LM gives {x.shape[1]}"
            )
        x = (x - self.mean) / self.scale
        for i, (weights, bias) in enumerate(self.layers):
            x = x @ weights + bias
            if i < len(self.layers) - 1:
                x = np.maximum(x, 0.0)
        return x

    def save(self, path: Path) -> Path:
        """Writes the head as ``.npz`` (arrays, and the record as JSON)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {"mean": self.mean, "scale": self.scale}
        for i, (weights, bias) in enumerate(self.layers):
            arrays[f"w{i}"], arrays[f"b{i}"] = weights, bias
        meta = json.dumps({"kind": self.kind, "layers": len(self.layers), **self.record})
        with path.open("wb") as f:
            np.savez_compressed(f, meta=np.asarray(meta), **arrays)
        return path

    @classmethod
    def load(cls, path: Path) -> StateHead:
        """A head written by ``save``; a clear error for anything else."""
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                layers = tuple(
                    (data[f"w{i}"].astype(np.float32), data[f"b{i}"].astype(np.float32))
                    for i in range(int(meta.pop("layers")))
                )
                return cls(
                    meta.pop("kind"),
                    data["mean"].astype(np.float32),
                    data["scale"].astype(np.float32),
                    layers,
                    meta,
                )
        except FileNotFoundError:
            raise ValueError(f"head file not found: {path}") from None
        except (OSError, KeyError, ValueError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path} is not a state head (write one with 'fscore "
                             f"calibrate --head'): {exc}") from None  # fmt: skip


def shipped_head_path(model: str) -> Path:
    """Where the head fitted for an embedded model ships (it may not exist)."""
    return HEADS_DIR / f"{model}.npz"


@lru_cache(maxsize=8)
def load_head(path: str) -> StateHead:
    """A head file, read once per process."""
    return StateHead.load(Path(path))
