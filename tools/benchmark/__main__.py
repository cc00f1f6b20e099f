"""``python -m tools.benchmark``: see :mod:`tools.benchmark.cli`."""

import sys

from tools.benchmark.cli import main

sys.exit(main())
