"""The command-line options of the Ray engine, shared by ``fscore eval`` and ``fscore
build-index`` (one decorator each command applies, and one call that reads them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from factscore_local.distributed.engine import ENGINES, RayOptions

RAY_PARAMS = ("engine", "ray_address", "ray_workers", "threads_per_worker", "gpus_per_worker")


def ray_options(workers_flag: str = "--ray-workers") -> Callable:
    """Adds ``--engine``, ``--ray-address``, the workers' count (``workers_flag``; eval's
    old ``--workers`` is a deprecated alias there), ``--threads-per-worker`` and
    ``--gpus-per-worker``.

    Args:
        workers_flag: the flag of the Ray workers' count.

    Returns:
        A decorator of a click command.

    Example:
        >>> @click.command()
        ... @ray_options()
        ... def run(**opts):
        ...     click.echo(pop_ray_options(opts))
    """
    options = [
        click.option(
            "--engine",
            type=click.Choice(ENGINES),
            default="local",
            show_default=True,
            help="'ray': run on a Ray cluster (pip install 'factscore-local[ray]'); "
            "'local': this process.",
        ),
        click.option(
            "--ray-address",
            default=None,
            help="With --engine ray: a running cluster (HOST:PORT, or 'auto' on one "
            "of its nodes); default: a local cluster for this run.",
        ),
        click.option(
            workers_flag,
            "ray_workers",
            type=click.IntRange(min=1),
            default=2,
            show_default=True,
            help="With --engine ray: workers, each with its own copy of the model.",
        ),
        click.option(
            "--threads-per-worker",
            type=click.IntRange(min=1),
            default=1,
            show_default=True,
            help="With --engine ray: CPU threads of each worker.",
        ),
        click.option(
            "--gpus-per-worker",
            type=click.FloatRange(min=0),
            default=0.0,
            show_default=True,
            help="With --engine ray: GPUs of each worker (0: the CPU).",
        ),
    ]

    def decorate(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def pop_ray_options(opts: dict[str, Any]) -> RayOptions | None:
    """Removes the Ray engine's parameters from a command's ``opts``; returns where to run
    (None: the local engine).

    Args:
        opts: the command's parameters (changed in place).

    Returns:
        The Ray options with ``--engine ray``, else None.
    """
    values = {name: opts.pop(name, None) for name in RAY_PARAMS}
    if values["engine"] != "ray":
        return None
    return RayOptions(
        address=values["ray_address"],
        workers=values["ray_workers"] or 2,
        threads_per_worker=values["threads_per_worker"] or 1,
        gpus_per_worker=values["gpus_per_worker"] or 0,
    )
