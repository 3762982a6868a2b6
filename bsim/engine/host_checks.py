"""What refuses, before it starts, a run that cannot be split over host processes exactly.

:func:`check_same_run` compares the host processes' settings (every one must simulate
the same run); :func:`check_distributable` refuses the models whose state or timing a
window exchange cannot carry (``docs/distributed.md``, "Limits").
"""

from __future__ import annotations

from typing import Any

from ..errors import DistributedError, LookaheadError
from .core import Engine

__all__ = ["check_distributable", "check_same_run"]


def check_same_run(hosts: Any, settings: dict[str, str]) -> None:
    """Refuse, on every host process alike, a run whose host processes were started with
    different *settings* (an MPMD launch mistake: each would simulate another run, and
    their windows would not fit together); the first setting that differs is named."""
    every = hosts.allgather(settings)
    for h, other in enumerate(every):
        for key, value in every[0].items():
            if other.get(key) != value:
                raise DistributedError(
                    f"host processes 0 and {h} were started with different runs: {key} "
                    f"{value!r} against {other.get(key)!r}; start every host process with "
                    f"the same command")


def check_distributable(engine: Engine) -> None:
    """Refuse, naming the cause, what cannot be split over host processes exactly."""
    net, proto = engine.network, engine.protocol
    if not engine.lookahead > 0.0:
        raise LookaheadError(
            f"network {net.spec()!r} under protocol {proto.name!r} has zero lookahead "
            f"(no minimum message time: min_cost()/min_wire() is 0); a distributed run "
            f"needs a positive one: run it in one process")
    cheapest = engine.collective_costs.lower_bound()
    if cheapest is not None and cheapest[0] < engine.lookahead:
        seconds, op, spec = cheapest
        raise LookaheadError(
            f"collective model {spec!r} prices {op} on 2 ranks at {seconds:g} s, below the "
            f"lookahead {engine.lookahead:g} s (the least message time of {net.spec()!r} "
            f"under {proto.name!r}): a distributed run needs every collective to take at "
            f"least that; run it in one process, or with --collectives analytic")
    reason = getattr(net, "shared_state", "")
    if reason:
        raise DistributedError(f"network model {net.name!r} cannot be split over host "
                               f"processes: {reason}; run it in one process")
    if engine.fabric is not None:
        raise DistributedError("contention 'fluid' shares the state of every link between "
                               "all ranks and cannot be split over host processes; run it "
                               "in one process")
    if engine.tracer is not None:
        raise DistributedError("tracing is not supported in distributed runs; run it in "
                               "one process")
    if engine.measure is not None:
        raise DistributedError("compute='measure' times the host and is not reproducible "
                               "across host processes; run it in one process")
