"""A test that needs ../shared/data skips without it, and fails under the strict switch CI
sets (FSCORE_REQUIRE_DATA=1 in .ci/run), so CI cannot pass by skipping."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import conftest

ROOT = Path(__file__).resolve().parents[1]
# Taken before a unit test runs (tests/kinds.py makes conftest.require fail in one): this
# test calls it on paths of its own, no data.
check_data = conftest.require


@pytest.mark.unit
def test_a_missing_file_skips_or_fails_under_the_switch(tmp_path, monkeypatch):
    missing = tmp_path / "not-there.db"
    monkeypatch.delenv(conftest.REQUIRE_DATA, raising=False)
    with pytest.raises(pytest.skip.Exception, match="needs ../shared/data"):
        check_data(missing)
    monkeypatch.setenv(conftest.REQUIRE_DATA, "1")
    with pytest.raises(pytest.fail.Exception, match="FSCORE_REQUIRE_DATA=1"):
        check_data(missing)
    assert check_data(tmp_path) == tmp_path


def test_ci_sets_the_switch_before_the_readmes_test_command():
    lines = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    switch = lines.index('export FSCORE_REQUIRE_DATA="${FSCORE_REQUIRE_DATA:-1}"')
    assert lines[switch + 1 :] == ["exec bash scripts/test.sh"]
