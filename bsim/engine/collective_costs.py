# cython: annotation_typing=False
"""The per-run collective cost source (``--collectives``), with per-operation overrides.

``T = T(op, P, nbytes)`` for the timing rules of ``bsim/engine/collective_rules.py``:
``analytic`` formulas, the MILC paper's ``clog`` (``c + d*log2 P``), a measured
``table`` (the BSIM paper's PRIMEQUEST method) or ``algorithmic`` (the collective
expanded into point-to-point messages, ``docs/collectives.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from netmodels.collective_algorithms import LINEAR_ROOTED, member_messages
from netmodels.collective_costs import (
    Analytic,
    CollectiveModel,
    build_collective_model,
    canonical_op,
    resolve_algorithm,
)
from netmodels.collective_costs import default_algorithm as _default_algorithm

from .network_noise import NoisyNetwork

if TYPE_CHECKING:
    from .surface import Comm
    from .core import Engine

__all__ = ["CollectiveCosts", "SHAPE_LIMIT"]

SHAPE_LIMIT = 4096
"""Largest group whose shape keys the cost cache (:meth:`CollectiveCosts._place`)."""


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
                    name, alg = canonical_op(name), alg.strip()
                    resolve_algorithm(name, alg, 1)   # an unknown name fails here, not in a rank
                    algs[name] = alg
                self._models[op] = None
                self._algorithms[op] = algs
            else:
                self._models[op] = build_collective_model(value)
        self._cost_cache: dict[tuple[Any, ...], float] = {}
        self._places: dict[Any, int] = {}      # a communicator's context: its place's number
        self._place_ids: dict[Any, int] = {}   # a place: its number (one per distinct place)
        self._p2p_cache: dict[Any, Callable[[float], float]] = {}
        self.any_algorithmic = any(m is None for m in self._models.values())
        self._names: dict[str, str] = {}
        self._chosen: dict[tuple[str, int, float | None], tuple[str, str] | None] = {}
        self.calls: dict[tuple[str, int, float | None], int] = {}
        """Collective calls of this process by ``(op, P, size every member knows or None)``,
        counted at communicator member 0 (``collective_rules.arrive``): the key the
        algorithm is chosen from, resolved to names only for the result
        (:meth:`algorithm_record`)."""

    def lower_bound(self) -> tuple[float, str, str] | None:
        """``(seconds, op, spec)``: the least time a priced (not expanded) collective on
        two or more ranks can take, its op and its source's spec; None when every source
        prices from the network's messages (``analytic``, ``algorithmic``)."""
        found = [(*bound, model.spec()) for model in self._models.values()
                 if model is not None and (bound := model.lower_bound()) is not None]
        return min(found) if found else None

    def spec(self) -> str:
        """A readable form of the configuration."""
        if list(self.specs) == ["default"]:
            return self.specs["default"]
        return ";".join(f"{k}={v}" for k, v in self.specs.items())

    def _name(self, op: str) -> str:
        """The op's name in :data:`~netmodels.collective_algorithms.OPS` (``gatherv`` ->
        ``gather``), kept: an engine call names its op on every arrival."""
        name = self._names.get(op)
        if name is None:
            name = self._names[op] = canonical_op(op)
        return name

    def _entry(self, op: str) -> str:
        name = self._name(op)
        return name if name in self._models else "default"

    def algorithm(self, op: str, nprocs: int, nbytes: float | None) -> str | None:
        """The algorithm to expand *op* into, or None when the source is a formula.

        *nbytes* is a size every member knows, or None when the members' sizes may differ
        (``default_algorithm``'s size-free choice): one instance runs one schedule.  An
        override names the plain op and applies to its v-variants too."""
        entry = self._entry(op)
        if self._models[entry] is not None:
            return None
        alg = self._algorithms[entry].get(self._name(op))
        return alg if alg else _default_algorithm(op, nprocs, nbytes)

    def chosen(self, op: str, nprocs: int, nbytes: float | None) -> tuple[str, str] | None:
        """``(op, algorithm)`` that prices or runs *op* on *nprocs* ranks (resolved as
        ``resolve_algorithm`` falls back), or None when the source names no algorithm
        (``clog``, ``table``).  *nbytes* as for :meth:`algorithm`: the expansion's choice
        under ``algorithmic``, the formula's (an override, else MPICH's default) under
        ``analytic``.  Kept per key."""
        key = (op, nprocs, nbytes)
        if key in self._chosen:
            return self._chosen[key]
        name = self._name(op)
        model = self._models[self._entry(op)]
        alg: str | None
        if model is None:
            alg = self.algorithm(op, nprocs, nbytes)
        elif isinstance(model, Analytic):
            alg = model.algorithms.get(name) or _default_algorithm(op, nprocs, nbytes)
        else:
            alg = None
        out = None if alg is None else (name, resolve_algorithm(name, alg, nprocs))
        self._chosen[key] = out
        return out

    def algorithm_record(self) -> dict[str, dict[str, int]]:
        """``{op: {algorithm: calls}}`` of :attr:`calls` (sorted by name): which algorithm
        shaped each collective call's price or messages (``Result.collective_algorithms``).
        Calls priced by a source without algorithms (``clog``, ``table``) are left out."""
        out: dict[str, dict[str, int]] = {}
        for (op, nprocs, nbytes), n in self.calls.items():
            pair = self.chosen(op, nprocs, nbytes)
            if pair is not None:
                per_op = out.setdefault(pair[0], {})
                per_op[pair[1]] = per_op.get(pair[1], 0) + n
        return {op: dict(sorted(algs.items())) for op, algs in sorted(out.items())}

    @staticmethod
    def message_time(engine: Engine) -> Callable[[int, int, int], float]:
        """``(src, dst, nbytes) -> seconds``: one message of a formula, priced as the run's
        protocol charges a lone message (its envelope, overheads and rendezvous
        handshake: ``Protocol.message_time``) on the network without its noise (a
        formula's price is computed once and kept: it draws no message's delay)."""
        net: Any = engine.network
        while isinstance(net, NoisyNetwork):
            net = net.inner
        proto = engine.protocol

        def one(src: int, dst: int, nbytes: int) -> float:
            return proto.message_time(net, src, dst, nbytes)
        return one

    def p2p_for(self, engine: Engine, comm: Comm,
                group: tuple[int, ...]) -> Callable[[float], float]:
        """One message's time for formulas on *comm*: the worst of a few member pairs.

        The pairs are (member 0, member k) for k in {1, P/2, P-1}, each priced by
        :meth:`message_time`.  On a topology the analytic source prices each message
        by its own pair instead (``Analytic.time_on_pairs``); this single time is the
        fallback for schedules past its budget (an upper bound there: every step pays
        the farthest sampled pair) and the ``p2p`` of the other sources.
        """
        key = comm.coll_ctx
        fn = self._p2p_cache.get(key)
        if fn is None:
            one = self.message_time(engine)
            P = len(group)
            pairs = sorted({(group[0], group[k]) for k in (1, P // 2, P - 1) if 0 < k < P})
            if not pairs:
                pairs = [(group[0], group[0])]

            def fn(nbytes: float, _pairs: list[tuple[int, int]] = pairs) -> float:
                n = int(nbytes)
                return max(one(a, b, n) for a, b in _pairs)

            self._p2p_cache[key] = fn
        return fn

    def _place(self, engine: Engine, comm: Comm, group: tuple[int, ...]) -> int:
        """What a collective's cost on *comm* depends on besides the op, size and root.

        The communicator, or where the network says its costs are invariant under
        translation (``group_shape``: a torus), the group's shape, so that communicators
        placed alike share one price (HPL's process rows: one evaluation for 64 rows).
        Groups above :data:`SHAPE_LIMIT` members keep the communicator (a shape that large
        is rarely repeated and costs memory).  Returned as a number, one per distinct
        place: the cost cache's key hashes it at every call, a shape's tuple of P members'
        offsets would be hashed whole.
        """
        ctx = comm.coll_ctx
        place = self._places.get(ctx)
        if place is None:
            shape_of = getattr(engine.network, "group_shape", None)
            where = (("shape", shape_of(group)) if shape_of is not None
                     and len(group) <= SHAPE_LIMIT else ("ctx", ctx))
            place = self._places[ctx] = self._place_ids.setdefault(where,
                                                                   len(self._place_ids))
        return place

    def shared_cost(self, engine: Engine, comm: Comm, group: tuple[int, ...], op: str,
                    inst: Any, size_of: Callable[[Any], float], root: int,
                    sized: bool) -> Callable[[int], float]:
        """A collective instance's ``T`` for a member when every member pays the same,
        priced on ``size_of(inst)`` (e.g. the largest contribution): evaluated once per
        set of arrivals, so a collective's cost is O(P) to compute rather than O(P^2)."""
        memo: list[Any] = [-1, 0.0]

        def member_cost(rank: int) -> float:
            if memo[0] != inst.arrived:   # new arrivals may change the size
                memo[0] = inst.arrived
                memo[1] = self.cost(engine, comm, group, op, size_of(inst), root, sized)
            return float(memo[1])
        return member_cost

    def member_cost(self, engine: Engine, comm: Comm, group: tuple[int, ...], op: str,
                    inst: Any, size_of: Callable[[Any, int], float] | None, root: int,
                    sized: bool, linear: str | None,
                    blocks: Callable[[Any], Sequence[float] | None] | None = None
                    ) -> Callable[[int], float]:
        """A collective instance's ``T`` for a member priced on its own size,
        ``size_of(inst, rank)`` (default: its contribution); members of one size pay one
        price.  *linear* (``"in"``/``"out"``, :meth:`linear_kind`): the instance runs a
        rooted linear algorithm, whose non-roots pay their own messages (:meth:`cost`'s
        *member*) and whose fan-in root receives theirs one after another, ``sum over
        k = 1 .. P-1 of t(m_k)`` in the order it posts them (every member has arrived
        when the fan-in rule asks for the root's ``T``).

        A fan-out with *blocks* (Scatterv: each member's block, from the root's arrival)
        follows MPICH's scatterv_allcomm_linear.c: the root sends the non-empty blocks
        one after another in rank order ``0 .. P-1``, so member ``j`` with a block pays
        ``sum over i <= j, i != root, c_i > 0 of t(c_i)`` (the port model of
        ``evaluate``), a member with an empty block nothing, the root the whole sum."""
        P = len(group)
        if linear == "out" and blocks is not None:
            ends: list[Any] = [None]   # each member's end, once the root's blocks are known

            def fan_out(rank: int) -> float:
                done = ends[0]
                if done is None:
                    done = ends[0] = self._scatterv_ends(engine, comm, group, op, root,
                                                         sized, blocks(inst))
                return float(done[rank])
            return fan_out
        if linear is not None:
            def by_member(rank: int) -> float:
                k = (rank - root) % P
                if k == 0 and linear == "in":   # the messages the root receives, in turn
                    t = 0.0
                    for j in range(1, P):
                        t += by_member((root + j) % P)
                    return t
                nb = size_of(inst, rank) if size_of is not None else inst.nbytes[rank]
                return self.cost(engine, comm, group, op, nb, root, sized, k)
            return by_member
        last: list[Any] = [None, 0.0]   # the last size and its cost: members share sizes

        def member_cost(rank: int) -> float:
            nb = size_of(inst, rank) if size_of is not None else inst.nbytes[rank]
            if nb != last[0]:
                last[0], last[1] = nb, self.cost(engine, comm, group, op, nb, root, sized)
            return float(last[1])
        return member_cost

    def _scatterv_ends(self, engine: Engine, comm: Comm, group: tuple[int, ...], op: str,
                       root: int, sized: bool, counts: Sequence[float] | None) -> list[float]:
        """Each member's ``T`` in a linear Scatterv with the root's *counts*
        (:meth:`member_cost`); each message is priced on its own pair (:meth:`cost`'s
        *member*: the name ``scatterv`` prices the member's own block, ``0`` if empty)."""
        P = len(group)
        if counts is None:   # the root passed no blocks: equal ones of nothing
            counts = [0] * P
        ends = [0.0] * P
        t = 0.0
        for j in range(P):
            if j != root and counts[j]:
                t += self.cost(engine, comm, group, op, counts[j], root, sized, (j - root) % P)
                ends[j] = t
        ends[root] = t
        return ends

    def linear_kind(self, op: str, nprocs: int, nbytes: float | None) -> str | None:
        """``"in"`` (gather, reduce) or ``"out"`` (scatter, bcast) when *op* on *nprocs*
        ranks runs a rooted linear algorithm (MPICH's Gatherv and Scatterv), whose members
        each pay their own messages
        (:func:`~netmodels.collective_algorithms.member_messages`); else None.  *nbytes*
        as for :meth:`algorithm`."""
        pair = self.chosen(op, nprocs, nbytes)
        return LINEAR_ROOTED.get(pair[0]) if pair is not None and pair[1] == "linear" \
            else None

    def _formula(self, op: str, nprocs: int, nbytes: float, sized: bool) -> CollectiveModel:
        """The model that prices *op*: the configured one, or under ``algorithmic`` the
        analytic twin of the algorithm; unsized, the algorithm chosen without the size."""
        model = self._models[self._entry(op)]
        if model is None:   # algorithmic source asked for a formula: its analytic twin
            alg = self.algorithm(op, nprocs, nbytes if sized else None)
            assert alg is not None   # an algorithmic source always names one
            return Analytic({op: alg})
        if not sized and isinstance(model, Analytic):   # the expansion's choice too
            name = self._name(op)
            return Analytic({name: model.algorithms.get(name)
                             or _default_algorithm(op, nprocs, None)})
        return model

    def cost(self, engine: Engine, comm: Comm, group: tuple[int, ...], op: str,
             nbytes: float, root: int = 0, sized: bool = True, member: int = 0) -> float:
        """``T(op, P, nbytes)`` on *comm* from the configured source (cached); *root* is the
        communicator rank a rooted collective's schedule starts from (its partners, and so
        their distances on a topology, follow the root).  *sized* False: the call does not
        carry its size in its signature, so the members may not all know it: an
        ``analytic`` source (and an algorithmic one's twin formula) then prices the
        algorithm chosen without the size, the one the expansion runs (:meth:`algorithm`).

        *member* (relative to the root, ``0`` for the root) prices a non-root member of a
        rooted linear algorithm by its own messages: a gather's or reduce's sender its one
        message, a scatter's or bcast's receiver the root's first *member* sends, one after
        another (the port model of ``evaluate``; ``docs/collectives.md``).  The root, and
        every member of other algorithms, pays the critical path."""
        P = len(group)
        if P <= 1:
            return 0.0
        key = (self._place(engine, comm, group), op, nbytes, root, sized, member)
        t = self._cost_cache.get(key)
        if t is None:
            model = self._formula(op, P, nbytes, sized)
            topology = isinstance(model, Analytic) and hasattr(engine.network, "node_of")
            priced: dict[tuple[int, int, Any], float] = {}
            one = self.message_time(engine)

            def pair_cost(a: int, b: int, n: Any, _g: tuple[int, ...] = group) -> float:
                c = priced.get((a, b, n))
                if c is None:
                    c = priced[a, b, n] = one(_g[a], _g[b], int(n))
                return c
            t = None
            msgs = (member_messages(op, model.algorithm(op, P, nbytes), P, nbytes, member)
                    if member and isinstance(model, Analytic) else None)
            if msgs is not None:   # one member's own messages, in the root's order
                p2p = None if topology else self.p2p_for(engine, comm, group)
                t = 0.0
                for src, dst, n in msgs:
                    t += (pair_cost((src + root) % P, (dst + root) % P, n) if p2p is None
                          else p2p(n))
            elif topology:
                # a topology (or nodes): price each step by the algorithm's real partners;
                # a schedule repeats its pairs (a ring: P pairs, P - 1 times each)
                assert isinstance(model, Analytic)
                t = model.time_on_pairs(op, P, nbytes, pair_cost, root)
            if t is None:
                t = model.time(op, P, nbytes, self.p2p_for(engine, comm, group))
            self._cost_cache[key] = t
        return t
