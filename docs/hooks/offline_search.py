"""MkDocs hook: search that works when the site is opened from a file (file://).

mkdocs-material's ``offline`` plugin inlines the search index into a script and turns
directory URLs off, but it starts the search worker through a shim fetched from a CDN,
which an offline machine cannot reach. This hook drops that remote script and puts a local
one in its place (``file_worker.js`` beside this file, with the theme's search worker source
written into it), so the worker starts from a blob on file:// and from its file elsewhere.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

SHIM = Path(__file__).with_name("file_worker.js")
SHIM_URL = "assets/javascripts/file-worker.js"  # where the build writes it, site-relative
PLACEHOLDER = "__SEARCH_WORKER_SOURCE__"


@event_priority(-100)  # after the offline plugin has added its remote shim
def on_config(config: Any, **_: Any) -> Any:
    """Replaces every remote polyfill (the offline plugin's CDN shim) with the local one."""
    polyfills = [p for p in config.extra.get("polyfills", []) if "://" not in str(p)]
    config.extra["polyfills"] = [*polyfills, SHIM_URL]
    return config


def worker_script(site_dir: Path) -> str:
    """The local shim with the theme's search worker source in it.

    Args:
        site_dir: The built site, holding ``assets/javascripts/workers/search.*.min.js``.

    Returns:
        The shim's JavaScript.

    Raises:
        FileNotFoundError: The theme wrote no search worker (or more than one).
    """
    workers = sorted((site_dir / "assets" / "javascripts" / "workers").glob("search.*.min.js"))
    if len(workers) != 1:
        raise FileNotFoundError(f"expected one search worker in {site_dir}, found {workers}")
    source = workers[0].read_text("utf-8")
    # A JSON string is a JavaScript string; "</" is escaped so no script tag can close early.
    literal = json.dumps(source).replace("</", "<\\/")
    return SHIM.read_text("utf-8").replace(PLACEHOLDER, literal)


def on_post_build(config: Any, **_: Any) -> None:
    """Writes the shim next to the theme's scripts."""
    site = Path(config.site_dir)
    target = site / SHIM_URL
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(worker_script(site), "utf-8")
