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

:data:`LEVELS` names both (``--level paper|smpi``, ``simulate(level=...)``), so that either
is one short flag away.  :func:`model_settings` fills in what a run did not name: no
protocol and no contention is the default level; a protocol named alone runs without
contention (``--protocol bsim`` is the paper's level); a contention named alone goes with
the default protocol.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PAPER_PROTOCOL", "SMPI_PROTOCOL", "SMPI_CONTENTION", "DEFAULT_PROTOCOL",
           "DEFAULT_CONTENTION", "LEVELS", "model_settings"]

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


#: The named levels: ``(protocol, contention)`` by name.
LEVELS: dict[str, tuple[str, str]] = {
    "paper": (PAPER_PROTOCOL, "none"),
    "smpi": (SMPI_PROTOCOL, SMPI_CONTENTION),
}


def model_settings(protocol: Any, contention: str | None,
                   level: str | None = None) -> tuple[Any, str]:
    """``(protocol, contention)`` of a run given *protocol*, *contention* and *level*
    (``None``: not named): the named level (:data:`LEVELS`), given alone; else the default
    level when neither is named, no contention beside a named protocol, the default
    protocol beside a named contention.

    Raises ``ValueError`` for an unknown level or one given beside a protocol or a
    contention (which would contradict it or silently lose to it)."""
    if level is not None:
        pair = LEVELS.get(level) if isinstance(level, str) else None
        if pair is None:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
        given = [f"{name} {value!r}" for name, value in (("protocol", protocol),
                                                        ("contention", contention))
                 if value is not None]
        if given:
            raise ValueError(f"level {level!r} names the protocol and the contention "
                             f"({pair[0]}; {pair[1]}); it was given with "
                             f"{' and '.join(given)}: give the level alone, or the protocol "
                             f"and contention without it")
        return pair
    if protocol is None:
        return DEFAULT_PROTOCOL, DEFAULT_CONTENTION if contention is None else contention
    return protocol, "none" if contention is None else contention
