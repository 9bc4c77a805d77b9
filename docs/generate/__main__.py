"""``python -m docs.generate``: writes the benchmark pages, the guides' generated blocks and
the README's tables from the results records (``docs.generate.pages``)."""

from docs.generate.pages import main

raise SystemExit(main())
