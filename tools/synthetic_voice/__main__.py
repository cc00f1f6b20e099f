"""``python -m tools.synthetic_voice``: see :mod:`tools.synthetic_voice.cli`."""

import sys

from tools.synthetic_voice.cli import main

sys.exit(main())
