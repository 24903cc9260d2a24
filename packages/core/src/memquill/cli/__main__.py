"""``python -m memquill.cli``: the ``memquill`` command (git's merge driver runs it this way)."""

import sys

from memquill.cli import main

if __name__ == "__main__":
    sys.exit(main())
