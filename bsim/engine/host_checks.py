"""What refuses, before it starts, a run that cannot be split over host processes exactly.

:func:`check_same_run` is where the host processes first meet: each sends the others its
settings (every one must simulate the same run), or, through :func:`fail_together`, the
error that stopped it before (a file one host cannot read, a bad value), so that every
host raises instead of waiting for one that will never come.  :func:`check_distributable`
refuses the models whose state or timing a window exchange cannot carry
(``docs/distributed.md``, "Limits").
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import DistributedError, LookaheadError
from .core import Engine
from .distributed import exchange_blobs, host_timeout

__all__ = ["check_distributable", "check_same_run", "fail_together", "start_of_run",
           "fails_together"]

F = TypeVar("F", bound=Callable[..., Any])
_met: set[int] = set()   # id() of the host communicators whose processes have met this run


def start_of_run(hosts: Any) -> None:
    """A run over *hosts* begins: its processes have not met yet."""
    _met.discard(id(hosts))


def _meet(hosts: Any, kind: str, value: Any) -> list[tuple[str, Any]]:
    """Every host process's ``(kind, value)``, exchanged with the window exchange's
    deadline (a host that never comes is reported and the job aborted, not waited for)."""
    _met.add(id(hosts))
    blob = pickle.dumps((kind, value))
    size = hosts.Get_size()
    return [pickle.loads(b) for b in exchange_blobs(hosts, [blob] * size, size, hosts.Get_rank(),
                                               host_timeout())]


def fail_together(hosts: Any, exc: BaseException) -> None:
    """This host process failed with *exc* before the host processes met: send the others
    its error at the meeting, so that they raise too (each then raises its own error or
    the first host's).  Nothing once they have met (a later error is reported by the
    window exchanges), nor for an interrupt (every process gets it)."""
    if id(hosts) in _met or not isinstance(exc, Exception):
        return
    _meet(hosts, "error", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")


def fails_together(run: F) -> F:
    """Decorate a function taking ``hosts=``: an error it raises before the host processes
    meet is sent to the others (:func:`fail_together`)."""
    @functools.wraps(run)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        hosts = kwargs.get("hosts")
        if hosts is None or hosts.Get_size() < 2:
            return run(*args, **kwargs)
        start_of_run(hosts)
        try:
            return run(*args, **kwargs)
        except BaseException as exc:
            fail_together(hosts, exc)
            raise
    return wrapper  # type: ignore[return-value]


def check_same_run(hosts: Any, settings: dict[str, str]) -> None:
    """Refuse, on every host process alike, a run whose host processes were started with
    different *settings* (an MPMD launch mistake: each would simulate another run, and
    their windows would not fit together; the first setting that differs is named), or
    one of which failed before (:func:`fail_together`)."""
    met = _meet(hosts, "settings", settings)
    for h, (kind, value) in enumerate(met):
        if kind == "error":
            raise DistributedError(f"host process {h} failed before the run: {value}")
    every = [value for _, value in met]
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
            f"collective model {spec!r} prices {op} at {seconds:g} s on 2 ranks or more, "
            f"below the lookahead {engine.lookahead:g} s (the least message time of "
            f"{net.spec()!r} under {proto.name!r}): a distributed run needs every "
            f"collective to take at least that; run it in one process, or with "
            f"--collectives analytic")
    reason = getattr(net, "shared_state", "")
    if reason:
        raise DistributedError(f"network model {net.name!r} cannot be split over host "
                               f"processes: {reason}; run it in one process")
    if engine.fabric is not None:
        raise DistributedError("contention 'fluid' shares the state of every link between "
                               "all ranks and cannot be split over host processes; run it "
                               "in one process, or run a level without it (a protocol "
                               "named alone has none: --protocol bsim, or --level paper, "
                               "is the papers' level)")
    if engine.tracer is not None:
        raise DistributedError("tracing is not supported in distributed runs; run it in "
                               "one process")
    if engine.measure is not None:
        raise DistributedError("compute='measure' times the host and is not reproducible "
                               "across host processes; run it in one process")
