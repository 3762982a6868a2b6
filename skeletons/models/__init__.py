"""Closed-form performance models from the papers in ``seeds/``.

These are the analytic models the skeletons are checked against, not the
skeletons themselves.  Each module holds one application's model:

* :mod:`skeletons.models.sweep3d`: the tutorial's (seed 002) pipelined
  wavefront model of Sweep3D, with its octant ordering table.
* :mod:`skeletons.models.milc`: seed 000's su3_rmd model, Eqs. 1-5.
* :mod:`skeletons.models.hpl`: the HPL scalability model (netlib) and seed
  004's dgemm time fit.
* :mod:`skeletons.models.phase`: seed 004's PHASE zgemm block time (Fig. 3)
  with its scale factors.

Every function takes and returns SI units: seconds, bytes, bytes/second.
``docs/models.md`` lists each formula with its source.
"""

from __future__ import annotations

from . import hpl, milc, phase, sweep3d

__all__ = ["hpl", "milc", "phase", "sweep3d"]
