"""Closed-form performance models from the papers of ``docs/references.md``.

These are the analytic models the skeletons are checked against, not the
skeletons themselves.  Each module holds one application's model:

* :mod:`skeletons.models.sweep3d`: the modeling tutorial's pipelined
  wavefront model of Sweep3D, with its octant ordering table.
* :mod:`skeletons.models.milc`: the MILC paper's su3_rmd model, Eqs. 1-5.
* :mod:`skeletons.models.hpl`: the HPL scalability model (netlib) and the
  BSIM paper's dgemm time fit.
* :mod:`skeletons.models.phase`: the BSIM paper's PHASE zgemm block time (Fig. 3)
  with its scale factors.

Every function takes and returns SI units: seconds, bytes, bytes/second.
``docs/models.md`` lists each formula with its source.
"""

from __future__ import annotations

from . import hpl, milc, phase, sweep3d

__all__ = ["hpl", "milc", "phase", "sweep3d"]
