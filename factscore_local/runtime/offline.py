"""Keep every model library off the network.

``enforce_offline()`` is called by the CLI before anything else and by each loader right
before it imports a Hugging Face library: those libraries read these variables at import
time, so they must be set first. Calling it again is harmless.
"""

import os

OFFLINE_VARIABLES = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}


def enforce_offline() -> None:
    for name, value in OFFLINE_VARIABLES.items():
        os.environ.setdefault(name, value)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")
