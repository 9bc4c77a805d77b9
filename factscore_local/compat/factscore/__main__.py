"""``python -m factscore_local.compat.factscore``: FActScore's command line, offline
(:mod:`factscore_local.compat.factscore.cli`)."""

import sys

from factscore_local.compat.factscore.cli import main

if __name__ == "__main__":
    sys.exit(main())
