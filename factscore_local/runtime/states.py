"""Hidden states as the result cache keeps them: float16, base64 in a JSON string.

A verdict's state is the model's final hidden state (after its output norm) at the
position where True/False is read: 1,536 numbers for the 1.5B embedded model, 896 for the
0.5B. Stored as float16 it costs 2 bytes a number (4 KB of base64 a fact for the 1.5B). A
state is always used as it is stored (rounded to float16), so a score read from a cached
state equals the one from a fresh pass.
"""

from __future__ import annotations

import base64

import numpy as np


def encode_state(state: np.ndarray) -> str:
    """A state as a cache value: its float16 bytes, base64."""
    half = np.asarray(state, dtype=np.float32).astype(np.float16)
    if not np.all(np.isfinite(half)):
        raise ValueError("a hidden state with values beyond float16's range")
    return base64.b64encode(half.tobytes()).decode("ascii")


def decode_state(value: str) -> np.ndarray:
    """The float32 array of a cached state."""
    return np.frombuffer(base64.b64decode(value), dtype=np.float16).astype(np.float32)


def rounded(state: np.ndarray) -> np.ndarray:
    """A fresh state as it reads back from the cache."""
    return decode_state(encode_state(state))
