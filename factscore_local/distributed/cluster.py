"""Connecting to Ray and running work items on a pool of actors that survives crashes.

Two things every Ray engine of this package needs: a connection (a local cluster, or a
running one at ``auto`` / ``HOST:PORT``) that fails fast with one clear line when the
cluster cannot be reached, and a scheduler that hands items to actors one at a time and
gets each item's result exactly once, whatever happens to the actors on the way.

Faults are handled at two levels. Each actor is created with ``max_restarts`` and
``max_task_retries``: when its process dies (killed, out of memory, a lost node), Ray
starts it again (the actor reloads its model) and re-runs the call that was in flight.
If that is not enough (the restarts are used up, or the node is gone for good), the
scheduler gives the item to another live actor. Results are keyed by item, so an item
that was computed twice is still delivered once.
"""

from __future__ import annotations

import os
import socket
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from factscore_local.runtime.cores import usable_cores

# Restarts of one actor, and re-runs of one call on a restarted actor, before the scheduler
# moves the item to another actor; then tries of one item on other actors.
MAX_RESTARTS = 3
MAX_TASK_RETRIES = 3
MAX_ITEM_TRIES = 3
CONNECT_TIMEOUT_S = 5.0
START_TIMEOUT_S = 900.0  # workers that are still not up by then (no free CPU or GPU)


class RayEngineError(RuntimeError):
    """The Ray engine cannot run (no Ray, no cluster, a worker that cannot start); the
    message is one line that says why and what to do."""


def require_ray():
    """The ``ray`` module, or a clear error when the optional extra is not installed."""
    try:
        import ray
    except ImportError:
        raise RayEngineError(
            "the Ray engine needs Ray: pip install 'factscore-local[ray]' (or pip install ray)"
        ) from None
    return ray


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of ``HOST:PORT`` or ``ray://HOST:PORT``; None for other forms."""
    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return None
    return host.strip("[]"), int(port)


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Raises RayEngineError when nothing listens at ``HOST:PORT`` (Ray itself would retry
    for minutes before it gives up).

    Args:
        address: ``HOST:PORT`` or ``ray://HOST:PORT``; other forms are left to Ray.
        timeout: seconds to wait for the TCP connection.

    Example:
        >>> check_reachable("auto")  # not a HOST:PORT: nothing to check here
    """
    target = _host_port(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=timeout):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise RayEngineError(
            f"cannot reach a Ray cluster at {address} ({reason}); start one with "
            "'ray start --head', or give its address (HOST:PORT, or 'auto' on a node of it)"
        ) from None


@contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None) -> Iterator[Any]:
    """Ray, connected: to a new local cluster (``address`` None) or to a running one
    (``auto``, ``HOST:PORT``, ``ray://HOST:PORT``). A connection this call made is closed
    on exit; one that was open before is used and left open.

    Args:
        address: where the cluster is; None starts a local one on this machine.
        num_cpus: CPUs a new local cluster offers (default: the usable cores).

    Yields:
        The ``ray`` module.

    Raises:
        RayEngineError: Ray is not installed, or the cluster cannot be reached.
    """
    ray = require_ray()
    if ray.is_initialized():
        yield ray
        return
    if address:
        check_reachable(address)
    # Workers print their model loading to their own log files, not to this terminal.
    kwargs: dict[str, Any] = {"log_to_driver": False, "logging_level": "ERROR"}
    if address:
        kwargs["address"] = address
    else:
        # Ray runs its workers at nice 15; on a machine shared with other work they would
        # then wait behind it, where the single process would not.
        os.environ.setdefault("RAY_worker_niceness", "0")
        kwargs.update(address="local", num_cpus=num_cpus or usable_cores(), include_dashboard=False)
    try:
        ray.init(**kwargs)
    except (ConnectionError, TimeoutError, RuntimeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        where = address or "a new local cluster"
        raise RayEngineError(f"cannot connect to Ray ({where}): {first}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def error_line(exc: BaseException) -> str:
    """One line for an exception raised in a worker (its cause, not Ray's traceback)."""
    cause = getattr(exc, "cause", None) or exc
    # Ray's own errors hold a traceback after their first line.
    lines = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {lines[0]}" if lines else type(cause).__name__


def worker_device(device: str, gpus_per_worker: float) -> str:
    """The device a worker runs on: the CPU unless Ray gives it a GPU (a GPU device
    without GPUs per worker is refused: Ray would not reserve the card)."""
    if gpus_per_worker > 0:
        return device
    if device.startswith("cuda"):
        raise RayEngineError(
            f"--device {device} with the Ray engine needs --gpus-per-worker (at least 1)"
        )
    return "cpu"


def local_cpus(workers: int, threads_per_worker: int) -> int:
    """CPUs a new local cluster offers: the cores this process may use, or as many as the
    workers ask for (more threads than cores is the user's choice, not a run that never
    starts)."""
    return max(usable_cores(), workers * threads_per_worker)


def actor_options(threads: int, gpus: float, name: str | None = None) -> dict:
    """Ray options of a worker actor: its CPUs and GPUs, and restarts on a crash."""
    options = {
        "num_cpus": threads,
        "num_gpus": gpus,
        "max_restarts": MAX_RESTARTS,
        "max_task_retries": MAX_TASK_RETRIES,
        # Two calls at once: a small status call (``pid``) is answered while it computes.
        "max_concurrency": 2,
    }
    if name:
        options["name"] = name
    return options


def start_actors(ray, actors: Sequence[Any], what: str, timeout: float = START_TIMEOUT_S) -> list:
    """Calls ``prepare()`` on every actor (each loads its model) and returns what each
    says; a worker that cannot load, or none that starts in ``timeout`` seconds, stops the
    run with one line."""
    refs = [a.prepare.remote() for a in actors]
    ready, waiting = ray.wait(refs, num_returns=len(refs), timeout=timeout)
    if waiting:
        resources = ray.cluster_resources()
        have = f"{resources.get('CPU', 0):g} CPUs, {resources.get('GPU', 0):g} GPUs"
        raise RayEngineError(
            f"{len(waiting)} of {len(refs)} {what} workers did not start in {timeout:g} s; "
            f"the cluster has {have}: ask for fewer workers, threads or GPUs per worker"
        )
    infos = []
    for i, ref in enumerate(refs):
        try:
            infos.append(ray.get(ref))
        except Exception as exc:  # noqa: BLE001 - any worker failure ends the run the same way
            raise RayEngineError(f"{what} worker {i} could not start: {error_line(exc)}") from None
    return infos


@dataclass
class PoolStats:
    """What happened to the work items: retries on other actors, actors lost."""

    resubmitted: int = 0
    actors_lost: int = 0
    seconds: float = 0.0
    attempts: dict[int, int] = field(default_factory=dict)


def run_items(
    ray,
    actors: Sequence[Any],
    items: Sequence[Any],
    call: Callable[[Any, Any], Any],
    on_result: Callable[[int, Any], None],
    what: str,
) -> PoolStats:
    """Runs ``call(actor, item)`` (which returns an ObjectRef) for every item, one item per
    actor at a time; ``on_result(index, value)`` gets each item's value exactly once.

    An actor that dies has its item moved to another live actor (at most
    ``MAX_ITEM_TRIES`` tries an item); an error raised by the work itself stops the run
    with one line.

    Raises:
        RayEngineError: an item failed in the worker, or no worker is left.
    """
    from ray.exceptions import RayActorError, RayTaskError

    stats = PoolStats()
    start = time.perf_counter()
    todo = deque(range(len(items)))
    idle = deque(range(len(actors)))
    alive = set(range(len(actors)))
    running: dict[Any, tuple[int, int]] = {}  # ObjectRef -> (item, actor)
    delivered: set[int] = set()
    while todo or running:
        while todo and idle:
            item, actor = todo.popleft(), idle.popleft()
            stats.attempts[item] = stats.attempts.get(item, 0) + 1
            running[call(actors[actor], items[item])] = (item, actor)
        done, _ = ray.wait(list(running), num_returns=1)
        for ref in done:
            item, actor = running.pop(ref)
            try:
                value = ray.get(ref)
            except RayActorError as exc:
                # The actor's process is gone for good (its restarts are used up).
                alive.discard(actor)
                stats.actors_lost += 1
                if not alive:
                    raise RayEngineError(
                        f"every {what} worker died; the last: {error_line(exc)}"
                    ) from None
                if stats.attempts[item] >= MAX_ITEM_TRIES:
                    raise RayEngineError(
                        f"{what} item {item} failed on {MAX_ITEM_TRIES} workers: {error_line(exc)}"
                    ) from None
                stats.resubmitted += 1
                todo.appendleft(item)
                continue
            except RayTaskError as exc:
                raise RayEngineError(f"a {what} worker failed: {error_line(exc)}") from None
            idle.append(actor)
            if item not in delivered:  # a value computed twice is delivered once
                delivered.add(item)
                on_result(item, value)
    stats.seconds = time.perf_counter() - start
    return stats


def kill_actors(ray, actors: Sequence[Any]) -> None:
    """Ends the workers (their models are freed); ones already dead are skipped."""
    for actor in actors:
        with suppress(Exception):  # an actor already gone needs no killing
            ray.kill(actor, no_restart=True)
