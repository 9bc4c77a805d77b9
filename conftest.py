"""pytest's configuration for the whole checkout: the tests' kinds (``unit``, ``e2e``,
``scripts``) are told apart by ``tests/kinds.py``; the tests' own fixtures are in
``tests/conftest.py``."""

pytest_plugins = ["tests.kinds"]
