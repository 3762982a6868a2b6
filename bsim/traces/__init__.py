"""From a real run to a prediction: record an MPI program's calls, replay them on another
machine, and turn them into an editable skeleton.

* :func:`record` (``bsim record -- mpiexec -n N ./app``): a PMPI library preloaded into
  an unmodified program writes each rank's calls (:mod:`.build`, :mod:`.rawlog`);
* :func:`load_trace` reads it back, or an OTF2 archive, or SimGrid's time-independent
  trace (:mod:`.otf2io`, :mod:`.ti`);
* :func:`replay` (``bsim replay``) simulates it on any network, protocol and collectives;
* :func:`write_skeleton` (``bsim skeleton``) writes a Python skeleton of it.
"""

from __future__ import annotations

from .load import load_trace
from .model import Trace
from .record import record, write_trace
from .replay import replay

__all__ = ["Trace", "load_trace", "record", "write_trace", "replay"]
