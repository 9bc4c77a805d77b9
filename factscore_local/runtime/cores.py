"""The CPU cores this process may use: what the build's threads and workers default to, so
that a big server is used whole and a container limited to a few cores is not oversubscribed."""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")


def cgroup_quota(root: Path = CGROUP) -> float | None:
    """The CPU quota of this process's cgroup in cores (``docker --cpus 3`` gives 3.0), or
    None where none is set or none can be read (cgroup v2's ``cpu.max``, else v1's
    ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``)."""
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        try:
            quota = (root / "cpu" / "cpu.cfs_quota_us").read_text().strip()
            period = (root / "cpu" / "cpu.cfs_period_us").read_text().strip()
        except OSError:
            return None
    try:
        cores = int(quota) / int(period)
    except ValueError:  # "max": no quota
        return None
    return cores if cores > 0 else None  # v1 writes -1 for none


def usable_cores(root: Path = CGROUP) -> int:
    """The cores this process may run on: its CPU affinity (``taskset``, a container's
    cpuset), capped by its cgroup's CPU quota rounded up; at least 1.

    Example:
        >>> usable_cores() >= 1
        True
    """
    if hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:  # not Linux
        cores = os.cpu_count() or 1
    quota = cgroup_quota(root)
    if quota is not None:
        cores = min(cores, math.ceil(quota))
    return max(1, cores)


def first_cores(count: int) -> str:
    """The first ``count`` cores this process may run on, as a list for an OpenMP binding
    ("0,1"; vLLM's ``VLLM_CPU_OMP_THREADS_BIND``): a process bound to core 1 gives "1".

    Example:
        >>> first_cores(1) in {str(c) for c in range(os.cpu_count() or 1)}
        True
    """
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    return ",".join(str(c) for c in (allowed or range(count))[:count])
