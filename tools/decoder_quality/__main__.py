"""``python -m tools.decoder_quality``: see :mod:`tools.decoder_quality.cli`."""

import sys

from tools.decoder_quality.cli import main

sys.exit(main())
