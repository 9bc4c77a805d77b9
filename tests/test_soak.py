"""A small slice of the soak (scripts/soak.py): an eval killed with SIGKILL and run
to its end, beside a second process on the same cache, gives the uninterrupted run's rows
(real 0.5B model). The full soak, with more bios and kills and a Ray worker killed, writes
scripts/results/soak.json."""

from __future__ import annotations

import pytest

from scripts.soak import soak
from tests.conftest import SHARED, require_model

# heavy (a minute and more): the kill and resume of one run is tests/test_resume.py's, and
# processes sharing a cache tests/test_cache.py's; the full soak writes its record
pytestmark = pytest.mark.heavy


def test_killed_and_shared_runs_give_the_reference_rows(db_index, tmp_path, monkeypatch):
    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    # The runs take turns for the cores as a user's would (the suite turns that off), in a
    # folder of their own: no run may wait for slots that the soak itself holds.
    monkeypatch.setenv("FSCORE_MODEL_LOCK", "1")
    monkeypatch.setenv("FSCORE_LOCK_DIR", str(tmp_path / "cores"))
    out = soak(db_index, SHARED, tmp_path, n_bios=2, kills=1, seed=1, sentences=1)
    assert out["kills"] >= 1, out  # a kill landed before the run could finish
    assert out["cache_integrity"] == "ok"
    for run in ("killed", "beside"):
        assert out[run] == {"rows": 2, "each_bio_once": True, "identical_rows": 2}, out
