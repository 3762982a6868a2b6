"""What ``bsim.add_time`` does when a skeleton runs under real ``mpiexec``.

Outside a simulation there is no simulated clock.  The mode is set by the
environment variable ``BSIM_ADD_TIME`` or :func:`set_mode`:

* ``skip`` (default): return at once; the skeleton runs as fast as it can;
* ``sleep``: ``time.sleep(seconds * scale)``, so real timings include the
  modeled compute (``BSIM_ADD_TIME_SCALE`` sets ``scale``, default 1).
"""

from __future__ import annotations

import math
import os
import time

__all__ = ["set_mode", "get_mode", "add_time"]

_MODES = ("skip", "sleep")
_mode = os.environ.get("BSIM_ADD_TIME", "skip").strip().lower() or "skip"
_scale = float(os.environ.get("BSIM_ADD_TIME_SCALE", "1"))


def set_mode(mode: str, scale: float = 1.0) -> None:
    """Choose ``skip`` or ``sleep`` for ``add_time`` outside a simulation."""
    global _mode, _scale
    if mode not in _MODES:
        raise ValueError(f"unknown add_time mode {mode!r}; valid: {', '.join(_MODES)}")
    if not (scale >= 0 and math.isfinite(scale)):
        raise ValueError(f"add_time scale must be finite and >= 0, got {scale!r}")
    _mode, _scale = mode, float(scale)


def get_mode() -> tuple[str, float]:
    """The current (mode, scale)."""
    return _mode, _scale


def add_time(seconds: float) -> None:
    """Real-mode ``add_time``: validate, then skip or sleep."""
    try:
        ok = seconds >= 0 and math.isfinite(seconds)
    except TypeError:
        ok = False
    if not ok:
        from .errors import AddTimeError
        raise AddTimeError(f"add_time({seconds!r}): duration must be a finite number of "
                           f"seconds >= 0")
    if _mode == "sleep" and seconds > 0:
        time.sleep(seconds * _scale)
