"""pytest's configuration for the whole checkout: the tests' kinds (``unit``, ``e2e``,
``scripts``) are told apart by ``tests/kinds.py``; the tests' own fixtures are in
``tests/conftest.py``."""

import os


def pin_xdist_worker() -> None:
    """Under pytest-xdist (scripts/test.sh runs a worker per core) binds this worker, and
    the processes it starts, to one core with one OpenMP thread: the models' threads
    default to the cores a process may use, so two workers never share a core."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw") or not hasattr(os, "sched_setaffinity"):
        return
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[int(worker[2:]) % len(cores)]})
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = "1"


pin_xdist_worker()  # before numpy, torch or llama.cpp start their thread pools

pytest_plugins = ["tests.kinds"]
