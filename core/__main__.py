"""``python -m core``: the same as the ``chunkscope`` command."""

import sys

from core.cli.main import main

sys.exit(main())
