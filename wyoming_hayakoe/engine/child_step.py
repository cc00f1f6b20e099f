"""First-load work on a voice's prepared models, run in a child process that then exits.

python -m wyoming_hayakoe.engine.child_step self-check REQUEST_JSON   (self_check_child.py)
python -m wyoming_hayakoe.engine.child_step calibrate REQUEST_JSON    (calibration.py)

Each writes its result atomically where the request says.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from ..runtime.model_cache import write_atomically
from .calibration import CalibrationRequest, calibrate
from .self_check_child import CheckRequest, run_check


def main(argv: Sequence[str]) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    step, text = argv
    if step == "self-check":
        request = CheckRequest.from_json(text)
        write_atomically(request.record, run_check(request).to_json())
    elif step == "calibrate":
        calibrate(CalibrationRequest.from_json(text))
    else:
        raise SystemExit(f"unknown step {step!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
