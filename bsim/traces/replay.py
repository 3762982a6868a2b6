"""Replay a recorded run on a machine it did not run on: a :class:`~.model.Trace` as a bsim
program.

Every virtual rank walks its recorded actions in order (the trace-driven method of
SimGrid's time-independent replay and of SST/macro's DUMPI/OTF2 replay): a compute
interval becomes ``bsim.add_time(seconds * scale)``, each MPI call the same call of
``bsim.MPI`` on placeholder buffers of the recorded size, so the run's network, protocol,
contention and collective models price it exactly as they price a skeleton, and the
answer is an ordinary :class:`~bsim.Result` (summary, JSON, trace, compare).

Compute rule: the recorded intervals are kept (``scale = 1``) unless both the recording
host's peak and the target's are known, then ``scale = host_peak / target_peak`` (per
core: ``peak_flops_per_core``), which assumes the compute runs at the same fraction of
peak on both (a compute-bound code; a memory-bound one follows memory bandwidth instead,
so the rule is stated in the result and can be overridden with *compute_scale*).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..outputs.result import Result
from ..simulate import simulate
from .load import load_trace
from .model import Action, Trace

__all__ = ["replay", "replay_program", "compute_rule"]


def compute_rule(machine: str | None, host_peak: float | None,
                 compute_scale: float | None) -> tuple[float, str]:
    """The factor applied to every recorded compute interval and its stated reason."""
    if compute_scale is not None:
        if not compute_scale > 0:
            raise ValueError(f"compute_scale must be > 0, got {compute_scale!r}")
        return compute_scale, f"recorded compute x {compute_scale:g} (given)"
    if machine is None or host_peak is None:
        return 1.0, "recorded compute intervals kept (x 1)"
    from ..machines import load_machine
    target = load_machine(machine, record=False).peak_flops_per_core
    if target is None:
        return 1.0, f"recorded compute kept (x 1): {machine} states no peak_flops_per_core"
    scale = host_peak / target
    return scale, (f"recorded compute x {scale:.4g} = host peak {host_peak:.4g} / "
                   f"{machine} peak {target:.4g} flop/s per core")


def replay_program(trace: Trace, scale: float = 1.0) -> Callable[[], None]:
    """The bsim program that replays *trace* (run it with ``bsim.simulate`` on
    ``trace.nranks`` ranks)."""
    ranks = trace.ranks

    def main() -> None:
        from .. import MPI, add_time
        from ..mpi.data.buffers import Buffer
        world = MPI.COMM_WORLD
        me = world.Get_rank()
        comms: dict[int, Any] = {0: world, 1: MPI.COMM_SELF}
        reqs: dict[int, Any] = {}
        bufs: dict[int, Buffer] = {}

        def buf(n: int) -> Buffer:
            b = bufs.get(n)
            if b is None:
                b = bufs[n] = Buffer(int(n))
            return b

        for a in ranks[me]:
            _do(a, comms, reqs, buf, MPI, add_time, scale)
        if reqs:   # requests never waited for: MPI_Finalize would complete them
            MPI.Request.Waitall(list(reqs.values()))

    main.__name__ = "replay"
    main.__qualname__ = "replay"
    return main


def _do(a: Action, comms: dict[int, Any], reqs: dict[int, Any], buf: Callable[[int], Any],
        MPI: Any, add_time: Callable[[float], None], scale: float) -> None:
    """Perform one action for the calling rank."""
    op = a[0]
    if op == "compute":
        add_time(a[1] * scale)
        return
    if op == "wait":
        MPI.Request.Waitall([reqs.pop(r) for r in a[1] if r in reqs])
        return
    c = comms.get(a[1])
    if c is None:
        raise ValueError(f"replay: {op} on communicator {a[1]}, which the recording did not "
                         "see made (made by a call bsim record does not wrap: "
                         "docs/traces.md)")
    if op == "isend":
        reqs[a[5]] = c.Isend(buf(a[4]), a[2], a[3])
    elif op == "irecv":
        reqs[a[5]] = c.Irecv(buf(a[4]), a[2], a[3])
    elif op == "issend":
        reqs[a[5]] = c.Issend(buf(a[4]), a[2], a[3])
    elif op == "send":
        c.Send(buf(a[4]), a[2], a[3])
    elif op == "ssend":
        c.Ssend(buf(a[4]), a[2], a[3])
    elif op == "recv":
        c.Recv(buf(a[4]), a[2], a[3])
    elif op == "sendrecv":
        c.Sendrecv(buf(a[4]), a[2], a[3], buf(a[7]), a[5], a[6])
    elif op == "allreduce":
        c.Allreduce(buf(a[2]), buf(a[2]), MPI.SUM)
    elif op == "bcast":
        c.Bcast(buf(a[2]), a[3])
    elif op == "barrier":
        c.Barrier()
    elif op == "reduce":
        c.Reduce(buf(a[2]), buf(a[2]), MPI.SUM, a[3])
    elif op == "scan":
        c.Scan(buf(a[2]), buf(a[2]), MPI.SUM)
    elif op == "exscan":
        c.Exscan(buf(a[2]), buf(a[2]), MPI.SUM)
    elif op == "gather":
        c.Gather(buf(a[2]), buf(a[2] * c.Get_size()), a[3])
    elif op == "scatter":
        c.Scatter(buf(a[2] * c.Get_size()), buf(a[2]), a[3])
    elif op == "allgather":
        c.Allgather(buf(a[2]), buf(a[2] * c.Get_size()))
    elif op == "alltoall":
        c.Alltoall(buf(a[2] * c.Get_size()), buf(a[2] * c.Get_size()))
    elif op == "reduce_scatter":
        c.Reduce_scatter_block(buf(a[2] * c.Get_size()), buf(a[2]), MPI.SUM)
    elif op == "split":
        made = c.Split(a[3] if a[2] >= 0 else MPI.UNDEFINED, max(a[4], 0))
        if a[2] >= 0:
            comms[a[2]] = made
    else:
        raise ValueError(f"replay: unknown action {op!r}")


def replay(trace: Trace | str | Path, machine: str | None = None, network: str | None = None,
           protocol: str | None = None, collectives: str | None = None,
           contention: str | None = None, host_peak: float | None = None,
           compute_scale: float | None = None, label: str | None = None,
           **kwargs: Any) -> Result:
    """Replay *trace* (a :class:`Trace` or a path :func:`~.load.load_trace` reads) on
    ``trace.nranks`` virtual ranks; return the :class:`~bsim.Result`.

    *machine*, *network*, *protocol* (None: :func:`bsim.simulate`'s default),
    *collectives* and *contention* are :func:`bsim.simulate`'s; *host_peak* (flop/s per
    core of the recording host) and *compute_scale* set the compute rule
    (:func:`compute_rule`, recorded in the result's ``kernel_model``); *label* names the
    trace in the result (default: its path); other keywords go to :func:`bsim.simulate`.
    """
    tr = trace if isinstance(trace, Trace) else load_trace(trace)
    source = label or (str(trace) if not isinstance(trace, Trace) else tr.source)
    scale, rule = compute_rule(machine, host_peak, compute_scale)
    params = {"trace": source, "trace_format": tr.source, "compute_scale": scale}
    if "wall" in tr.measured:
        params["measured_wall"] = tr.measured["wall"]
    if tr.measured.get("cpu"):
        params["measured_cpu"] = tr.measured["cpu"]
    if tr.measured.get("compute_clock"):
        params["compute_clock"] = tr.measured["compute_clock"]
    kwargs.setdefault("name", f"replay of {Path(source).name}")
    if protocol is not None:
        kwargs["protocol"] = protocol
    return simulate(replay_program(tr, scale), tr.nranks, network=network, machine=machine,
                    collectives=collectives, contention=contention, kernel_model=rule,
                    params=params, **kwargs)
