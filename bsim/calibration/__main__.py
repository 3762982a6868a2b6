"""``python -m bsim.calibration {calibrate,fit} ...`` (same commands as ``bsim``).

Warnings (a calibration's flags) print as ``bsim: warning: MESSAGE``, one line,
as under the ``bsim`` command.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

from ..cli.calibrate import main


def _one_line_warning(message: Any, category: Any, filename: str, lineno: int,
                      file: Any = None, line: Any = None) -> None:
    """``bsim: warning: MESSAGE`` on standard error (no source line)."""
    print(f"bsim: warning: {message}", file=sys.stderr if file is None else file)


with warnings.catch_warnings():
    warnings.showwarning = _one_line_warning
    status = main()
raise SystemExit(status)
