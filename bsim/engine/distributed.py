"""Distributed runs: one simulation spread over K host processes, identical results.

``mpiexec -n K python -m bsim run ...`` (or :func:`bsim.simulate` with
``hosts=MPI.COMM_WORLD`` of real mpi4py) gives each host process a share of
the virtual ranks (:func:`partition`) and runs the engine's event loop in
*windows* of simulated time, conservatively (Chandy-Misra-Bryant style, with
a global window barrier as in YAWNS):

1. host h processes its events earlier than its window's end ``E_h``: no
   effect of one rank on another arrives sooner than the run's lookahead
   ``δ`` (``engine.lookahead``) after the event that causes it
   (``docs/protocols.md``, "Visibility"), so nothing created elsewhere in the
   window falls before ``E_h`` (:func:`window_ends`);
2. the hosts swap what they created for each other (``alltoall``): envelopes
   of messages, ``loggp`` clear-to-send and data arrivals, and collective
   arrivals; each keeps the key it was created with, so the receiver orders it
   exactly as a single process would;
3. from the earliest event ``N_g`` each host g now holds (sent with the
   exchange), every host computes every ``E_h = min(N_g + δ for g != h,
   N_h + 2δ)``, which skips idle stretches.

The run ends when no host has an event left.  If ranks are still unfinished
it is a deadlock, reported with every blocked rank of every host; an
exception on any host is reported to all at the next exchange, and all raise
the error of the failing virtual rank.  ``docs/distributed.md`` has the
argument for identity with K = 1 and a worked example.
"""

from __future__ import annotations

import math
import os
import pickle
import sys
import time
from dataclasses import dataclass
from typing import Any

from .. import errors
from ..errors import BsimError, DeadlockError, RankError, SimulationError
from .collective_rules import arrival_info
from .core import LIVELOCK_POLLS, Engine
from .events import PRIO_NET
from .loggp_events import ClearToSend, DataArrival
from .matching import Message
from .rank import VirtualRank
from .synchronous import SyncAck

__all__ = ["partition", "run_distributed", "DistStats", "PARTITIONS", "host_processes",
           "exchange_blobs"]

PARTITIONS = ("block", "cyclic", "node")
CYCLIC_BLOCKS = 16      # blocks a host process gets under partition 'cyclic' by default
EXCHANGE_TAG = 0x5B51   # the window exchange's messages between host processes
HOST_TIMEOUT = 120.0    # seconds a host process waits for another at an exchange


def host_timeout() -> float:
    """Seconds to wait for another host process at a window exchange (``BSIM_HOST_TIMEOUT``)."""
    text = os.environ.get("BSIM_HOST_TIMEOUT", "")
    try:
        value = float(text) if text else HOST_TIMEOUT
    except ValueError:
        value = HOST_TIMEOUT
    return value if value > 0 else HOST_TIMEOUT


@dataclass
class DistStats:
    """What a distributed run did on the host side."""

    processes: int
    partition: str
    windows: int = 0
    shipped: int = 0          # events and arrivals sent to other host processes
    # per host process: seconds processing events, and seconds at the window exchanges
    # (waiting for the others, mostly: a measure of load imbalance between the hosts)
    busy: tuple[float, ...] = ()
    exchange: tuple[float, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"processes": self.processes, "partition": self.partition,
                "windows": self.windows, "shipped": self.shipped,
                "busy_seconds": [round(x, 3) for x in self.busy],
                "exchange_seconds": [round(x, 3) for x in self.exchange]}


def partition(nranks: int, hosts: int, mode: str = "block", network: Any = None) -> list[int]:
    """The host process of each world rank.

    ``block``: contiguous blocks of ``nranks / hosts`` ranks (the first
    ``nranks % hosts`` hosts get one more).  ``cyclic`` or ``cyclic:block=B``:
    blocks of ``B`` consecutive ranks dealt to the hosts in turn (block-cyclic;
    default ``B = ceil(nranks / (16 hosts))``, 16 blocks a host), which spreads a
    wavefront (Sweep3D) over every host at each moment.  ``node``: whole
    simulated nodes (``network.node_of``), in node order, cut into blocks of about
    ``nranks / hosts`` ranks, so that a node's ranks share a host process.
    """
    if hosts < 1:
        raise ValueError(f"need at least 1 host process, got {hosts}")
    if hosts > nranks:
        raise ValueError(f"{hosts} host processes for {nranks} virtual ranks: "
                         f"use at most one host process per virtual rank")
    if mode == "block":
        base, extra = divmod(nranks, hosts)
        out: list[int] = []
        for h in range(hosts):
            out += [h] * (base + (1 if h < extra else 0))
        return out
    if mode == "cyclic" or mode.startswith("cyclic:"):
        size = cyclic_block(mode, nranks, hosts)
        return [(r // size) % hosts for r in range(nranks)]
    if mode != "node":
        raise ValueError(f"unknown partition {mode!r}; valid: {', '.join(PARTITIONS)} "
                         f"(cyclic:block=B sets the block)")
    node_of = getattr(network, "node_of", None)
    if node_of is None:
        raise ValueError(f"partition 'node' needs a network model with nodes; "
                         f"{getattr(network, 'name', network)!r} has none (use 'block')")
    by_node: dict[int, list[int]] = {}
    for r in range(nranks):
        by_node.setdefault(int(node_of(r)), []).append(r)
    if len(by_node) < hosts:
        raise ValueError(f"partition 'node': {len(by_node)} simulated nodes cannot fill "
                         f"{hosts} host processes (use 'block')")
    out = [0] * nranks
    done = 0
    nodes = sorted(by_node)
    for i, node in enumerate(nodes):
        # host h takes the nodes whose first rank count falls in [h, h+1) * nranks/hosts,
        # keeping at least one node for each later host
        h = min(done * hosts // nranks, hosts - 1)
        h = max(h, hosts - (len(nodes) - i))
        for r in by_node[node]:
            out[r] = h
        done += len(by_node[node])
    return out


def cyclic_block(mode: str, nranks: int, hosts: int) -> int:
    """Ranks per block of partition ``cyclic`` / ``cyclic:block=B`` (ValueError if bad)."""
    _, colon, opts = mode.partition(":")
    if not colon:
        return max(1, -(-nranks // (CYCLIC_BLOCKS * hosts)))
    key, eq, value = opts.partition("=")
    if key != "block" or not eq or not value.isdigit() or int(value) < 1:
        raise ValueError(f"partition {mode!r}: expected cyclic:block=B with B >= 1 ranks")
    if int(value) * (hosts - 1) >= nranks:
        raise ValueError(f"partition {mode!r}: blocks of {value} ranks leave host process "
                         f"{hosts - 1} of {hosts} without ranks ({nranks} virtual ranks)")
    return int(value)


_LAUNCHER_VARS = ("PMI_SIZE", "PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE",
                  "MV2_COMM_WORLD_SIZE", "MPI_LOCALNRANKS")


def host_processes() -> Any | None:
    """Real mpi4py's ``COMM_WORLD`` when ``mpiexec`` started this process among
    several, else None (a plain run, or ``mpiexec -n 1``).

    Looks at the launcher's environment first, so that a plain run never
    initialises MPI.
    """
    if not any(k in os.environ for k in _LAUNCHER_VARS):
        return None
    try:
        from mpi4py import MPI as real
    except ImportError:
        raise errors.DistributedError(
            "this process was started by an MPI launcher but mpi4py is not installed "
            "(pip install mpi4py mpich): distributed runs use it") from None
    comm = real.COMM_WORLD
    return comm if comm.Get_size() > 1 else None


def setup(engine: Engine, host_of: list[int], host: int, hosts: int) -> None:
    """Make *engine* run only the ranks of host process *host*."""
    engine.host_of = host_of
    engine.host = host
    engine.local_ranks = [vr for vr in engine.ranks if host_of[vr.rank] == host]
    engine.outbox = [[] for _ in range(hosts)]


def run_distributed(engine: Engine, program: Any, comm: Any, stats: DistStats) -> None:
    """Run *program* on this host's ranks of *engine*, synchronised over mpi4py *comm*."""
    if not engine.lookahead > 0.0:
        raise errors.LookaheadError("zero lookahead: distributed runs need a positive "
                                    "minimum message time")
    hosts, me = comm.Get_size(), comm.Get_rank()
    window = engine.lookahead
    engine.start(program)
    waited = [0.0]
    try:
        _loop(engine, comm, hosts, me, window, stats, waited)
    finally:
        engine.finish()
    counts = comm.allgather((engine.shipped, engine.host_seconds, waited[0]))
    stats.shipped = int(sum(c[0] for c in counts))
    stats.busy = tuple(float(c[1]) for c in counts)
    stats.exchange = tuple(float(c[2]) for c in counts)


def _loop(engine: Engine, comm: Any, hosts: int, me: int, window: float,
          stats: DistStats, waited: list[float]) -> None:
    ends = window_ends([0.0] * hosts, window, engine.max_sim_time)
    failure: tuple[Any, ...] | None = None
    own_exc: BaseException | None = None
    timeout = host_timeout()
    while True:
        if failure is None:
            engine.window_ends = ends
            try:
                engine.run_until(ends[me])
            except BaseException as exc:   # reported to every host at this exchange
                own_exc = exc
                failure = _describe(engine, me, exc)
        stats.windows += 1
        nxt = engine.next_time()
        outbox = engine.outbox
        ships = [min((ev[0] for ev in box), default=math.inf) for box in outbox]
        # this host can only poll, or wait: nothing of its own in flight or shipped (its
        # ranks finished or blocked, or polling in vain; the livelock check)
        quiet = min(nxt, *ships) == math.inf or (
            engine.poll_streak >= LIVELOCK_POLLS and not any(outbox) and engine.only_polling())
        status = (nxt, ships, engine.unfinished, failure, engine._now, engine.events, quiet)
        blobs = []
        for h in range(hosts):
            try:
                blobs.append(pickle.dumps((status, outbox[h] if h != me else []),
                                          pickle.HIGHEST_PROTOCOL))
            except Exception as exc:   # an unpicklable payload: report, do not hang
                own_exc = exc
                failure = _describe(engine, me, exc)
                status = (nxt, ships, engine.unfinished, failure, engine._now, engine.events,
                          False)
                blobs = [pickle.dumps((status, []), pickle.HIGHEST_PROTOCOL)] * hosts
                break
        engine.outbox = [[] for _ in range(hosts)]
        clock = time.perf_counter()
        received = exchange_blobs(comm, blobs, hosts, me, timeout)
        waited[0] += time.perf_counter() - clock
        statuses = []
        incoming = []
        for blob in received:
            st, events = pickle.loads(blob)
            statuses.append(st)
            incoming.append(events)
        if failure is None:
            try:
                for events in incoming:
                    _insert(engine, events)
            except BaseException as exc:
                own_exc = exc
                failure = _describe(engine, me, exc)
                if not any(st[3] is not None for st in statuses):
                    continue   # the others learn of it at the next exchange
                # another host failed at this exchange too: decide as it does, from the
                # failures every host saw (it may stop now and join no other exchange)
        # the earliest event each host holds now: its queue and what was shipped to it;
        # a host that failed runs nothing more
        nexts = [math.inf if st[3] is not None else st[0] for st in statuses]
        for st in statuses:
            for h, first in enumerate(st[1]):
                if first < nexts[h] and statuses[h][3] is None:
                    nexts[h] = first
        t = min(nexts)
        failures = [st[3] for st in statuses if st[3] is not None]
        if failures:
            first_failure = min(failures)
            stop = min(engine.max_sim_time, first_failure[0])
            if not t < stop:
                _raise_failure(engine, first_failure, own_exc, me)
            # the other hosts still hold events before it (their windows ended elsewhere):
            # they run them first, as one process would, and may fail earlier
            ends = window_ends(nexts, window, stop)
            continue
        unfinished = sum(st[2] for st in statuses)
        last = max(st[4] for st in statuses)
        if t == math.inf:
            if unfinished == 0:
                return
            _global_deadlock(engine, comm, last)
        if t >= engine.max_sim_time and not unfinished:
            return   # what is left lies past the limit, where one process stops too
        if unfinished and all(st[6] for st in statuses):
            _global_stop(engine, comm, "livelock", last)
        if unfinished and t >= engine.max_sim_time:
            _global_stop(engine, comm, f"simulated time reached the limit "
                                       f"max_sim_time={engine.max_sim_time!r} s", last)
        if unfinished and 0 < engine.max_events <= sum(st[5] for st in statuses):
            _global_stop(engine, comm, f"the run reached the limit "
                                       f"max_events={engine.max_events:,}", last)
        ends = window_ends(nexts, window, engine.max_sim_time)


def window_ends(nexts: list[float], lookahead: float, limit: float) -> list[float]:
    """Where each host's next window ends, from the earliest event each host holds.

    Host h processes its events earlier than ``min(nexts[g] + δ for g != h,
    nexts[h] + 2 δ)``: whatever reaches h later is caused by an event of another
    host g, at ``nexts[g]`` or later, or by one that h's own shipments cause there,
    at ``nexts[h] + δ`` or later, and lands at least the lookahead ``δ`` after its
    cause (``docs/distributed.md``).  Capped at *limit* (``max_sim_time``, or the
    time of a failure another host reported).
    """
    order = sorted(range(len(nexts)), key=nexts.__getitem__)
    first = nexts[order[0]]
    second = nexts[order[1]] if len(order) > 1 else math.inf
    return [min((second if h == order[0] else first) + lookahead, nexts[h] + 2 * lookahead,
                limit) for h in range(len(nexts))]


def exchange_blobs(comm: Any, blobs: list[bytes], hosts: int, me: int,
              timeout: float) -> list[bytes]:
    """Every host sends ``blobs[h]`` to host h and receives one blob from each (an alltoall).

    Point-to-point with a deadline instead of ``alltoall``: a host process that died
    or stopped answering is found within *timeout* seconds of waiting, reported on
    stderr naming it, and the whole job is aborted (``MPI_Abort``), whatever the
    launcher does.
    """
    # mpi4py's module is not imported here: inside a run ``mpi4py.MPI`` names bsim's
    # namespace, so only methods of the real communicator and its objects are used
    out: list[bytes] = [b""] * hosts
    out[me] = blobs[me]
    sends = [comm.isend(blobs[h], dest=h, tag=EXCHANGE_TAG) for h in range(hosts) if h != me]
    waiting = [h for h in range(hosts) if h != me]
    idle = 0
    deadline = math.inf
    while waiting:
        for h in list(waiting):
            msg = comm.improbe(source=h, tag=EXCHANGE_TAG)
            if msg is not None:
                out[h] = msg.recv()
                waiting.remove(h)
                idle = 0
        if waiting:   # busy-poll, as MPI's own blocking calls do; look at the clock
            idle += 1   # only every 1,000 empty polls
            if idle % YIELD_EVERY == 0:
                _yield_core()
            if idle % 1000 == 0:
                now = time.monotonic()
                if deadline == math.inf:
                    deadline = now + timeout
                elif now > deadline:
                    _host_lost(comm, me, waiting, timeout)
    idle, deadline = 0, math.inf
    while not all(req.Test() for req in sends):   # a peer that never receives: same limit
        idle += 1
        if idle % YIELD_EVERY == 0:
            _yield_core()
        if idle % 1000 == 0:
            now = time.monotonic()
            if deadline == math.inf:
                deadline = now + timeout
            elif now > deadline:
                _host_lost(comm, me, [h for h in range(hosts) if h != me], timeout)
    return out


YIELD_EVERY = 16
"""Empty polls at a window exchange between two offers of the core to another process:
with more host processes than free cores, the one a waiting host needs may be queued
behind it (a window took about 6 ms for K = 3 on 2 cores without it)."""
_yield_core = getattr(os, "sched_yield", lambda: time.sleep(0))


def _host_lost(comm: Any, me: int, hosts: list[int], timeout: float) -> None:
    """Report host processes that stopped answering and end the whole job."""
    message = (f"bsim: error: host process {me}: host process(es) "
               f"{', '.join(map(str, hosts))} did not answer within {timeout:g} s at a "
               f"window exchange (dead or stopped); aborting the run "
               f"(BSIM_HOST_TIMEOUT sets the limit)\n")
    sys.stderr.flush()
    os.write(2, message.encode())
    time.sleep(0.5)   # let the launcher forward the line before the abort ends the job
    comm.Abort(3)


def _insert(engine: Engine, events: list[tuple[float, int, tuple[Any, ...]]]) -> None:
    """Add events shipped by another host to this host's queue (with their keys)."""
    for t, key, data in events:
        tag = data[0]
        if tag == "M":
            engine.deliver_at(t, Message.from_wire(data))   # its key travels with it
        elif tag == "A":
            arrival_info(engine, data)
        elif tag == "C":
            engine.push(t, PRIO_NET, key, ClearToSend.from_wire(data))
        elif tag == "D":
            engine.push(t, PRIO_NET, key, DataArrival.from_wire(data))
        elif tag == "S":
            engine.push(t, PRIO_NET, key, SyncAck.from_wire(data))
        else:   # pragma: no cover - a programming error
            raise SimulationError(f"unknown shipped event {tag!r}")


def _describe(engine: Engine, host: int, exc: BaseException) -> tuple[Any, ...]:
    """A picklable report of *exc*, ordered by simulated time then host."""
    rank = getattr(exc, "rank", None)
    blocked = getattr(exc, "blocked", None)
    return (engine._now, host, type(exc).__name__, str(exc), rank, blocked)


def _raise_failure(engine: Engine, failure: tuple[Any, ...], own: BaseException | None,
                   me: int) -> None:
    """Tear down and raise the chosen failure on every host (its own on the failing one)."""
    engine._teardown()
    _, host, name, message, rank, blocked = failure
    if host == me and own is not None:
        raise own
    cls = getattr(errors, name, None)
    if cls is RankError:
        raise RankError(message, rank)
    if cls is DeadlockError:
        raise DeadlockError(message, blocked or [])
    if isinstance(cls, type) and issubclass(cls, BsimError):
        raise cls(message)
    if rank is not None:
        raise RankError(message, rank)
    raise SimulationError(f"host process {host} failed: {name}: {message}")


def _global_stop(engine: Engine, comm: Any, what: str, last: float) -> None:
    """A livelock or a limit seen by every host alike: every host raises the same error."""
    blocked = sorted(b for part in comm.allgather(engine.blocked_ranks()) for b in part)
    engine._now = last
    if what == "livelock":
        engine.livelock_error(blocked)
    engine.limit_error(what, blocked)


def _global_deadlock(engine: Engine, comm: Any, last: float) -> None:
    """Every host is idle and ranks are unfinished: report all blocked ranks."""
    mine = {vr.rank: vr.clock for vr in engine.local_ranks if not vr.finished}
    parts = comm.allgather((engine.blocked_ranks(), mine))
    blocked = sorted(b for part, _ in parts for b in part)
    engine._now = last
    engine.deadlock_error(blocked, engine.nranks,
                          {rank: clock for _, clocks in parts for rank, clock in clocks.items()})


def gather_accounts(engine: Engine, comm: Any) -> None:
    """Copy every rank's final account onto every host's engine (for the Result), and every
    rank's ``calc_excess`` (the noise beyond its modelled compute, for the peak check)."""
    mine = [(vr.rank, vr.clock, vr.calc, vr.wait, vr.comm, vr.ops, vr.msgs, vr.nbytes,
             engine.returns.get(vr), vr.open_requests) for vr in engine.local_ranks]
    left = {vr.rank: len(vr.box.unexpected) for vr in engine.local_ranks
            if vr.box is not None and vr.box.unexpected}
    costs = engine.collective_costs
    events = comm.allgather((mine, engine.events, engine.host_seconds, left, costs.calls,
                             engine.calc_excess))
    total_events = 0
    wall = 0.0
    ranks = engine.ranks
    unreceived: dict[int, int] = {}
    calls: dict[Any, int] = {}   # each call was counted on the host of its member 0
    excess: dict[int, float] = {}   # each rank's noise stretch, from its own host
    for accounts, ev, secs, host_left, host_calls, host_excess in events:
        excess.update(host_excess)
        total_events += ev
        wall = max(wall, secs)
        unreceived.update(host_left)
        for key, n in host_calls.items():
            calls[key] = calls.get(key, 0) + n
        for rank, clock, calc, wait, comm_t, ops, msgs, nbytes, retval, open_reqs in accounts:
            vr: VirtualRank = ranks[rank]
            vr.clock, vr.calc, vr.wait, vr.comm = clock, calc, wait, comm_t
            vr.ops, vr.msgs, vr.nbytes = ops, msgs, nbytes
            if retval is not None:
                engine.returns[vr] = retval
            vr.open_requests = open_reqs
    engine.events = total_events
    engine.host_seconds = wall
    engine.unreceived = dict(sorted(unreceived.items()))
    costs.calls = calls
    engine.calc_excess = excess
