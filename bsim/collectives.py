"""Collective operations in the engine: dependency rules, costs, mismatch detection.

Every collective call on a communicator is the k-th collective of the calling
rank on that communicator; the calls with the same k form one *instance*
(:class:`CollInstance`), where ranks register their arrival time (their clock)
and contribution.  Timing follows DESIGN.md "Collectives" (after seed 004,
Sec. 2.C):

* **all** (barrier, allreduce, allgather, alltoall, reduce_scatter, scan,
  exscan, and communicator creation): every rank completes at
  ``max(arrivals) + T``; its wait is ``max(arrivals) - own arrival``.
* **fan-out** (bcast, scatter): the root completes at ``own + T``; a non-root
  at ``max(own, root arrival) + T``, waiting ``max(0, root - own)``.
* **fan-in** (reduce, gather): a non-root completes at ``own + T``; the root
  at ``max(arrivals) + T``.

``T = T(op, P, nbytes)`` comes from the run's collective cost source
(:class:`CollectiveCosts`): ``analytic`` formulas, seed 000's ``clog``
(``c + d*log2 P``), a measured ``table`` (seed 004's PRIMEQUEST method), or
``algorithmic``: the collective is expanded into the point-to-point messages
of a named algorithm (``netmodels.schedules``) which go through the network
model, so topology, contention and the protocol act on them and the rules
above emerge from the messages.  Nonblocking collectives use the analytic
twin of the algorithm when the source is algorithmic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from netmodels.collectives import (
    Analytic,
    CollectiveModel,
    build_collective_model,
    canonical_op,
)
from netmodels.collectives import default_algorithm as _default_algorithm
from netmodels.schedules import schedule as _schedule

from .errors import CollectiveMismatchError
from .matching import Message, post_receive
from .requests import RECV, SEND, Request

if TYPE_CHECKING:
    from .comm import Comm
    from .engine import Engine
    from .rank import VirtualRank

__all__ = ["ALL", "FANOUT", "FANIN", "CollectiveCosts", "CollInstance", "arrive"]

ALL, FANOUT, FANIN = 0, 1, 2


class CollectiveCosts:
    """The per-run choice of collective cost source, with per-operation overrides.

    *spec* is a source spec (``"analytic"``, ``"analytic:allreduce=ring"``,
    ``"clog:c=1e-6,d=2e-6"``, ``"table:path=t.csv"``, ``"algorithmic"``,
    ``"algorithmic:allreduce=ring"``) or a dict ``{"default": spec, op: spec}``.
    """

    def __init__(self, spec: str | dict[str, str] | CollectiveModel | None = None) -> None:
        if spec is None:
            spec = "analytic"
        specs = dict(spec) if isinstance(spec, dict) else {"default": spec}
        self.specs = {k: (v if isinstance(v, str) else v.spec()) for k, v in specs.items()}
        self._models: dict[str, CollectiveModel | None] = {}
        self._algorithms: dict[str, dict[str, str]] = {}
        for key, value in specs.items():
            op = key if key == "default" else canonical_op(key)
            if isinstance(value, str) and value.split(":", 1)[0].strip() == "algorithmic":
                algs = {}
                rest = value.split(":", 1)[1] if ":" in value else ""
                for item in filter(None, (x.strip() for x in rest.split(","))):
                    name, _, alg = item.partition("=")
                    algs[canonical_op(name)] = alg.strip()
                self._models[op] = None
                self._algorithms[op] = algs
            else:
                self._models[op] = build_collective_model(value)
        self._cost_cache: dict[tuple[Any, ...], float] = {}
        self._p2p_cache: dict[Any, Callable[[float], float]] = {}
        self.any_algorithmic = any(m is None for m in self._models.values())

    def spec(self) -> str:
        """A readable form of the configuration."""
        if list(self.specs) == ["default"]:
            return self.specs["default"]
        return ";".join(f"{k}={v}" for k, v in self.specs.items())

    def _entry(self, op: str) -> str:
        return op if op in self._models else "default"

    def algorithm(self, op: str, nprocs: int, nbytes: float) -> str | None:
        """The algorithm to expand *op* into, or None when the source is a formula."""
        entry = self._entry(op)
        if self._models[entry] is not None:
            return None
        algs = self._algorithms[entry]
        alg = algs.get(op)
        return alg if alg else _default_algorithm(op, nprocs, nbytes)

    def p2p_for(self, engine: Engine, comm: Comm,
                group: tuple[int, ...]) -> Callable[[float], float]:
        """One message's time for formulas on *comm*: the worst of a few member pairs.

        The pairs are (member 0, member k) for k in {1, P/2, P-1}: enough to
        see the intra/inter-node and near/far distinction of topologies
        without a P-sized scan.
        """
        key = comm._cctx
        fn = self._p2p_cache.get(key)
        if fn is None:
            net = engine.network
            P = len(group)
            pairs = sorted({(group[0], group[k]) for k in (1, P // 2, P - 1) if 0 < k < P})
            if not pairs:
                pairs = [(group[0], group[0])]

            def fn(nbytes: float, _net: Any = net, _pairs: list[tuple[int, int]] = pairs) -> float:
                n = int(nbytes)
                return max(_net.cost(a, b, n) for a, b in _pairs)

            self._p2p_cache[key] = fn
        return fn

    def cost(self, engine: Engine, comm: Comm, group: tuple[int, ...], op: str,
             nbytes: float) -> float:
        """``T(op, P, nbytes)`` on *comm* from the configured source (cached)."""
        P = len(group)
        if P <= 1:
            return 0.0
        key = (comm._cctx, op, nbytes)
        t = self._cost_cache.get(key)
        if t is None:
            entry = self._entry(op)
            model = self._models[entry]
            if model is None:   # algorithmic source asked for a formula: its analytic twin
                model = Analytic({op: self.algorithm(op, P, nbytes)})  # type: ignore[dict-item]
            t = model.time(op, P, nbytes, self.p2p_for(engine, comm, group))
            self._cost_cache[key] = t
        return t


class CollInstance:
    """One collective call across the members of a communicator."""

    __slots__ = ("key", "op", "kind", "root", "size", "sig", "sig_rank", "arrived", "times",
                 "values", "reqs", "max_t", "root_t", "T", "finalized", "result", "nbytes",
                 "rounds", "extra")

    def __init__(self, key: Any, op: str, kind: int, root: int, size: int) -> None:
        self.key = key
        self.op = op
        self.kind = kind
        self.root = root
        self.size = size
        self.sig: tuple[Any, ...] | None = None
        self.sig_rank = -1
        self.arrived = 0
        self.times: list[float | None] = [None] * size
        self.values: list[Any] = [None] * size
        self.reqs: list[Request | None] = [None] * size
        self.max_t = float("-inf")
        self.root_t: float | None = None
        self.T = 0.0
        self.finalized = 0
        self.result: Any = None
        self.nbytes: list[float] = [0.0] * size
        self.rounds: Any = None
        self.extra: Any = None


def _mismatch(vr: VirtualRank, comm: Comm, seq: int, inst: CollInstance,
              sig: tuple[Any, ...]) -> CollectiveMismatchError:
    def show(s: tuple[Any, ...]) -> str:
        op, root, extra = s
        parts = [op]
        if root >= 0:
            parts.append(f"root={root}")
        parts += [f"{k}={v}" for k, v in extra]
        return f"{parts[0]}({', '.join(parts[1:])})"
    return CollectiveMismatchError(
        f"collective mismatch on {comm!r} at its collective #{seq}: rank "
        f"{inst.sig_rank} called {show(inst.sig)}, rank {comm._me(vr)} called "  # type: ignore[arg-type]
        f"{show(sig)} (world ranks {comm._world(inst.sig_rank, vr)} and {vr.rank})")


def arrive(vr: VirtualRank, comm: Comm, op: str, kind: int, root: int, nbytes: float,
           value: Any, extra: tuple[Any, ...] = (), blocking: bool = True,
           cost_bytes: Callable[[CollInstance, int], float] | None = None,
           cost_op: str | None = None) -> tuple[CollInstance, int, Request | None]:
    """Register the calling rank's arrival at its next collective on *comm*.

    Returns the instance, the rank's communicator rank and its request
    (``None`` when the collective was run algorithmically and is already
    complete).  *extra* are ``(name, value)`` pairs that must agree across
    ranks (operation, sizes); *cost_bytes* computes the size that sets ``T``
    once all the arrivals it needs are known (default: this rank's *nbytes*);
    *cost_op* is the collective whose cost applies when *op* is not one
    (communicator creation).
    """
    cop = cost_op or op
    eng = vr.engine
    cctx = comm._cctx_of(vr)
    seqs = vr.coll_seq
    if seqs is None:
        seqs = vr.coll_seq = {}
    seq = seqs.get(cctx, 0)
    seqs[cctx] = seq + 1
    key = (cctx, seq)
    me = comm._me(vr)
    size = comm._size(vr)
    inst = eng.colls.get(key)
    sig = (op, root, extra)
    if inst is None:
        inst = eng.colls[key] = CollInstance(key, op, kind, root, size)
        inst.sig, inst.sig_rank = sig, me
    elif inst.sig != sig:
        raise _mismatch(vr, comm, seq, inst, sig)
    t = vr.clock
    inst.times[me] = t
    inst.values[me] = value
    inst.nbytes[me] = nbytes
    inst.arrived += 1
    if t > inst.max_t:
        inst.max_t = t
    if me == root:
        inst.root_t = t
    vr.ops += 1
    costs = eng.collective_costs
    alg = (costs.algorithm(cop, size, nbytes)
           if costs.any_algorithmic and blocking and size > 1 else None)
    if alg is not None:
        _run_algorithm(vr, comm, key, inst, me, cop, alg, nbytes)
        return inst, me, None
    req = Request(vr, RECV, op)
    inst.reqs[me] = req

    def T_of(rank: int) -> float:
        nb = cost_bytes(inst, rank) if cost_bytes is not None else inst.nbytes[rank]
        return costs.cost(eng, comm, comm._members(vr), cop, nb)

    if kind == ALL:
        if inst.arrived == size:
            m = inst.max_t
            T = T_of(me)
            inst.T = T
            for r in inst.reqs:
                r._resolve(m, T, m)  # type: ignore[union-attr]
    elif kind == FANOUT:
        if me == root:
            T = inst.T = T_of(root)
            rt = t
            for r in inst.reqs:
                if r is not None:
                    r._resolve(rt, T, rt)
        elif inst.root_t is not None:
            req._resolve(inst.root_t, inst.T, inst.root_t)
    else:  # FANIN
        if me != root:
            T = T_of(me)
            req._resolve(t, T, t)
        if inst.arrived == size and inst.root_t is not None:
            T = inst.T = T_of(root)
            rreq = inst.reqs[root]
            m = inst.max_t
            rreq._resolve(m, T, m)  # type: ignore[union-attr]
    return inst, me, req


def finalize(vr: VirtualRank, comm: Comm, inst: CollInstance) -> None:
    """Count a member done with *inst*; drop the instance when all are."""
    inst.finalized += 1
    if inst.finalized == inst.size:
        vr.engine.colls.pop(inst.key, None)


def _run_algorithm(vr: VirtualRank, comm: Comm, key: tuple[Any, ...], inst: CollInstance,
                   me: int, op: str, alg: str, nbytes: float) -> None:
    """Execute this rank's part of the algorithm's schedule as real messages."""
    if inst.rounds is None:
        size = inst.size
        root = inst.root if inst.root >= 0 else 0
        rounds = _schedule(op, alg, size, nbytes, root)
        per_rank: list[list[tuple[int, list[tuple[int, int]], list[tuple[int, int]]]]] = \
            [[] for _ in range(size)]
        for index, rnd in enumerate(rounds):
            touched: dict[int, tuple[list[tuple[int, int]], list[tuple[int, int]]]] = {}
            for src, dst, nb in rnd:
                n = int(nb)
                touched.setdefault(src, ([], []))[0].append((dst, n))
                touched.setdefault(dst, ([], []))[1].append((src, n))
            for r, (sends, recvs) in touched.items():
                per_rank[r].append((index, sends, recvs))
        inst.rounds = per_rank
    eng = vr.engine
    proto = eng.protocol
    ctx: Any = key       # messages of this instance only match each other
    for k, sends, recvs in inst.rounds[me]:   # k: the global round, used as the tag
        reqs = []
        for src, _size in recvs:   # receive sizes are implied by the matching sends
            req = Request(vr, RECV, inst.op)
            req._ctx, req._src, req._tag = ctx, comm._world(src, vr), k
            req._t_post = vr.clock
            post_receive(vr, req)
            reqs.append(req)
        for dst, n in sends:
            world = comm._world(dst, vr)
            req = Request(vr, SEND, inst.op)
            msg = Message(ctx, vr.rank, world, me, k, n, None, False)
            vr.msgs += 1
            vr.nbytes += n
            proto.send(vr, eng.ranks[world], msg, req, False)
            reqs.append(req)
        vr.settle(reqs, f"{inst.op} (algorithmic {comm!r})")
