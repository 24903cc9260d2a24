"""``python -m memquill_mcp``: the same as the ``memquill-mcp`` command."""

import sys

from memquill_mcp.cli import main

if __name__ == "__main__":
    sys.exit(main())
