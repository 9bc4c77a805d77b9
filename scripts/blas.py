"""The BLAS a benchmark computed with, and the same BLAS for its replay.

A head fitted by L-BFGS (scikit-learn's MLP and logistic regression) ends where its
rounding leads it. OpenBLAS picks its kernels by the CPU, or by ``OPENBLAS_CORETYPE`` when
that is set, and splits a product over its threads; either choice changes the last bits
of a product, and hundreds of iterations carry them into the weights and the figures (the
stance head's MLP, fitted on the same inputs with the Haswell kernels instead of the
SkylakeX ones, or with one thread instead of two, ends with other weights and other F1s).
So a record names the kernel and the thread count it ran with (``machine.blas``, from
``blas()``), and the checker replays it under them (``replay_env``).

Example:
    >>> env = replay_env({"machine": {"blas": {"kernel": "Haswell", "threads": 2}}}, {},
    ...                  flags=frozenset({"avx2", "fma"}))
    >>> env["OPENBLAS_CORETYPE"], env["OPENBLAS_NUM_THREADS"]
    ('Haswell', '2')
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping

# CPU flags (``/proc/cpuinfo``) a kernel needs, for the kernels a replay may be asked
# for; forcing a kernel the CPU cannot run would stop the replay on an illegal
# instruction. A kernel not named here is forced as recorded.
NEEDS_FLAGS = {
    "haswell": {"avx2", "fma"},
    "zen": {"avx2", "fma"},
    "skylakex": {"avx512f", "avx512bw", "avx512dq", "avx512vl"},
    "cooperlake": {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512_bf16"},
    "sapphirerapids": {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512_bf16",
                       "amx_bf16"},
}  # fmt: skip


def blas() -> dict | None:
    """OpenBLAS's kernel and thread count in this process (numpy's library, as
    ``threadpoolctl`` reads it), or None when no OpenBLAS is loaded or threadpoolctl is
    absent."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    found = [lib for lib in threadpool_info() if lib.get("internal_api") == "openblas"]
    if not found:
        return None
    numpy_first = sorted(found, key=lambda lib: "numpy" not in str(lib.get("filepath")))
    lib = numpy_first[0]
    return {"kernel": lib.get("architecture"), "threads": lib.get("num_threads")}


def cpu_flags() -> frozenset[str] | None:
    """This CPU's flags, None where ``/proc/cpuinfo`` does not list them."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def replay_env(
    record: dict,
    environ: Mapping[str, str] | None = None,
    say: Callable[[str], None] | None = None,
    flags: frozenset[str] | None = None,
) -> dict[str, str]:
    """The environment to replay ``record`` in: ``environ`` (default: this process's) with
    OpenBLAS set to the kernel and thread count the record names (``machine.blas``). A
    record that names none replays in ``environ`` as it is; a kernel this CPU lacks a
    flag for is left to OpenBLAS's choice, and ``say`` (stderr by default) tells, since
    a fitted figure may then differ. ``flags``: the CPU's (default: ``cpu_flags()``)."""
    env = dict(os.environ if environ is None else environ)
    pinned = (record.get("machine") or {}).get("blas") or {}
    say = say or (lambda line: print(line, file=sys.stderr, flush=True))
    kernel, threads = pinned.get("kernel"), pinned.get("threads")
    if kernel:
        needs = NEEDS_FLAGS.get(str(kernel).lower(), set())
        have = cpu_flags() if flags is None else flags
        if have is not None and not needs <= have:
            say(f"# {record.get('name', 'this record')}: recorded with OpenBLAS's {kernel} "
                f"kernels, which this CPU cannot run (no {', '.join(sorted(needs - have))}); "
                "replayed with OpenBLAS's own choice, so a fitted figure may differ")  # fmt: skip
        else:
            env["OPENBLAS_CORETYPE"] = str(kernel)
    if threads:
        env["OPENBLAS_NUM_THREADS"] = str(threads)
    return env
