"""``python -m factscore_local.cli``: the same as ``fscore``."""

from factscore_local.cli import main

if __name__ == "__main__":
    main()
