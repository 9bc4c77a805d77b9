"""How ``scripts.check`` replays a benchmark: which of its options point at scratch paths,
and the arguments a replay runs with. Kept apart from ``scripts.common`` so that the rule
reads on its own (it imports nothing of the benchmarks)."""

from __future__ import annotations

# Options a replay sets itself: a path option -> its placeholder ("" drops the option).
# A replay writes into scratch only: never the committed results, caches or shipped heads.
REPLAY_PATHS = {"--index": "{index}", "--demo-index": "{demo_index}",
                "--cache": "{tmp}/cache.db", "--out": "{tmp}/out.json",
                "--ship": "{tmp}/head.npz", "--rows": "", "--data": "", "--results": "",
                "--results-out": "", "--export": ""}  # fmt: skip


def replay_spec(argv: list[str]) -> dict | bool:
    """How ``scripts.check`` reruns a benchmark from its arguments: a run seeded from the
    committed caches (``--seed-cache``) is replayable, with its scratch paths and index as
    placeholders; any other run is recorded, not re-run (False).

    Example:
        >>> replay_spec(["--index", "dev-index", "--seed-cache", "c.jsonl.gz"])
        {'argv': ['--index', '{index}', '--seed-cache', 'c.jsonl.gz'], 'cached': True}
    """
    if "--seed-cache" not in argv:
        return False
    return {"argv": scratch_argv(argv), "cached": True}


def scratch_argv(argv: list[str]) -> list[str]:
    """The arguments with every option of ``REPLAY_PATHS`` set to its placeholder (or
    dropped); placeholders are kept, so a recorded replay's arguments pass unchanged."""
    out, it = [], iter(argv)
    for arg in it:
        name, eq, value = arg.partition("=")
        if name in REPLAY_PATHS:
            value = value if eq else next(it, "")
            if REPLAY_PATHS[name]:
                out += [name, REPLAY_PATHS[name]]
            continue
        out.append(arg)
    return out
