"""The model level of a run that names none, and what naming only part of it means.

A level is a pair: the point-to-point rules (``protocol``) and the sharing of links
(``contention``).  ``docs/validation.md`` ("Model levels") measures every level against
SimGrid SMPI and picks the default by one rule: the most accurate level whose host time,
summed over the differential set, is at most twice the fastest level's.

* :data:`PAPER_PROTOCOL`: the BSIM paper's rules (Susukita et al., SC08, Sec. III.D: the
  receiver pays ``max(tp, ts) + l + s/w``), without contention: the papers' level, which
  their checks use;
* :data:`SMPI_PROTOCOL` with :data:`SMPI_CONTENTION`: SimGrid SMPI's point-to-point rule
  (LogGP's parameters from the network model, bytes matched before they move, a send
  detached below 65,536 bytes) and its CM02 sharing (max-min fair, weighted by the inverse
  of the route latency, bytes moving once the latency has passed; Velho and Legrand,
  SIMUTools 2009).

:func:`model_settings` fills in what a run did not name: no protocol and no contention is
the default level; a protocol named alone runs without contention (``--protocol bsim`` is
the paper's level, one flag away); a contention named alone goes with the default protocol.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PAPER_PROTOCOL", "SMPI_PROTOCOL", "SMPI_CONTENTION", "DEFAULT_PROTOCOL",
           "DEFAULT_CONTENTION", "model_settings"]

PAPER_PROTOCOL = "bsim"
#: SMPI's rule: SMPI's send is detached below ``smpi/send-is-detached-thresh`` (65,536
#: bytes: ``size < 65536``), bsim's eager up to ``eager_limit`` inclusive, hence 65,535.
SMPI_PROTOCOL = "loggp:injection=parallel,data=match,envelope=16,eager_limit=65535"
#: CM02's sharing: latency-weighted, bytes moving after the latency.
SMPI_CONTENTION = "fluid:share=latency,start=after_latency"

#: The default level: the papers' (``docs/validation.md``, "Model levels", says why SMPI's
#: level, the most accurate, is not yet the default: its host time, and runs spread over
#: host processes, which refuse contention).
DEFAULT_PROTOCOL = PAPER_PROTOCOL
DEFAULT_CONTENTION = "none"


def model_settings(protocol: Any, contention: str | None) -> tuple[Any, str]:
    """``(protocol, contention)`` of a run given *protocol* and *contention* (``None``: not
    named): the default level when neither is named, no contention beside a named
    protocol, the default protocol beside a named contention."""
    if protocol is None:
        return DEFAULT_PROTOCOL, DEFAULT_CONTENTION if contention is None else contention
    return protocol, "none" if contention is None else contention
