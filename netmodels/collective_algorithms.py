"""Collective algorithms: which one MPICH picks, and the critical path of each.

``critical_path(op, algorithm, P, nbytes)`` lists the messages on the longest
chain of an algorithm (binomial tree, recursive doubling, Rabenseifner, ring,
Bruck, pairwise, ...) as ``(message bytes, how many in a row)``; ``chain``
prices them with the point-to-point time of one message.  The cost models of
:mod:`netmodels.collective_costs` and the message schedules of
:mod:`netmodels.collective_schedules` both use them.

**Size convention** (Chan et al. 2007; Thakur, Rabenseifner, Gropp 2005):
``nbytes`` is the size of the whole vector the collective works on --
the bcast buffer; the reduce/allreduce/scan vector; the root's buffer of
gather/scatter (``P`` blocks); one rank's receive buffer of allgather and
send buffer of alltoall (``P`` blocks); the input vector of reduce_scatter
(each rank keeps ``nbytes/P``).  The v-variants (gatherv, allgatherv, ...)
are costed as their plain op with the same total bytes.  barrier ignores it.

``p2p`` is the time of one uncontended message as a function of its size:
a callable ``(nbytes) -> seconds``, an object with ``latency`` and
``bandwidth`` (Hockney ``l + s/w``), or a network model (its
``cost(0, 1, nbytes)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .spec import SpecError

__all__ = [
    "OPS", "ALGORITHMS", "DEFAULT_THRESHOLDS", "CollectiveSpecError", "canonical_op", "as_p2p",
    "ceil_log2", "floor_pow2", "is_pow2", "share", "bruck_blocks", "resolve_algorithm",
    "V_FIXED", "default_algorithm", "critical_path", "chain", "check_call", "Steps", "P2P",
    "SimTime", "LINEAR_ROOTED", "member_messages",
]

SimTime = float
P2P = Callable[[float], float]
#: The critical path of an algorithm: (message bytes, how many in a row).
Steps = list[tuple[float, int]]

OPS = ("barrier", "bcast", "reduce", "allreduce", "gather", "scatter", "allgather",
       "alltoall", "reduce_scatter", "scan", "exscan")
_ALIASES = {"gatherv": "gather", "scatterv": "scatter", "allgatherv": "allgather",
            "alltoallv": "alltoall", "alltoallw": "alltoall",
            "reduce_scatter_block": "reduce_scatter"}

#: Algorithms per op; the first of each is only a listing order, not the default.
ALGORITHMS: dict[str, tuple[str, ...]] = {
    "barrier": ("dissemination", "linear"),
    "bcast": ("binomial", "scatter_doubling_allgather", "scatter_ring_allgather", "linear"),
    "reduce": ("binomial", "rabenseifner", "linear"),
    "allreduce": ("recursive_doubling", "rabenseifner", "ring", "reduce_bcast"),
    "gather": ("binomial", "linear"),
    "scatter": ("binomial", "linear"),
    "allgather": ("recursive_doubling", "bruck", "ring"),
    "alltoall": ("bruck", "pairwise"),
    "reduce_scatter": ("recursive_halving", "pairwise", "ring"),
    "scan": ("recursive_doubling", "linear"),
    "exscan": ("recursive_doubling", "linear"),
}

#: MPICH 3.x defaults of the MPIR_CVAR_* size thresholds (bytes) used by
#: :func:`default_algorithm`.
DEFAULT_THRESHOLDS = {
    "bcast_short": 12288, "bcast_long": 524288, "bcast_min_procs": 8,
    "reduce_short": 2048, "allreduce_short": 2048,
    "allgather_short": 81920, "allgather_long": 524288,
    "alltoall_short": 256, "alltoall_min_procs": 8,
    "redscat_long": 524288,
}


class CollectiveSpecError(SpecError):
    """A collective model, op, algorithm or parameter is unknown or invalid."""


# -- small shared arithmetic (also used by netmodels.collective_schedules) --------------

def ceil_log2(n: int) -> int:
    """``ceil(log2 n)`` for ``n >= 1`` (0 for 1), exact on integers."""
    return (n - 1).bit_length()


def floor_pow2(n: int) -> int:
    """The largest power of two ``<= n`` (``n >= 1``)."""
    return 1 << (n.bit_length() - 1)


def is_pow2(n: int) -> bool:
    """True if *n* is a power of two (1 included)."""
    return n > 0 and n & (n - 1) == 0


def share(nbytes: float, parts: int, whole: int) -> int | float:
    """``nbytes * parts / whole``: an int when exact, else a float."""
    if isinstance(nbytes, int):
        q, r = divmod(nbytes * parts, whole)
        if r == 0:
            return q
    return nbytes * parts / whole


def bruck_blocks(nprocs: int, k: int) -> int:
    """How many of the indices ``0 .. nprocs-1`` have bit *k* set (Bruck alltoall round k)."""
    period = 1 << (k + 1)
    return (nprocs // period) * (1 << k) + max(0, nprocs % period - (1 << k))


def canonical_op(op: str) -> str:
    """The op name in :data:`OPS` for *op* (case-insensitive; ``MPI_`` prefix and
    v-variants accepted: ``"Allgatherv"`` -> ``"allgather"``)."""
    if not isinstance(op, str):
        raise CollectiveSpecError(f"collective op must be a string, got {op!r}")
    name = op.strip().lower()
    if name.startswith("mpi_"):
        name = name[4:]
    name = _ALIASES.get(name, name)
    if name not in OPS:
        raise CollectiveSpecError(
            f"unknown collective op {op!r}; valid: {', '.join(OPS)} (and {', '.join(_ALIASES)})")
    return name


def as_p2p(p2p: Any) -> P2P:
    """Normalise *p2p* to a callable ``(nbytes) -> seconds`` (see module docstring)."""
    if callable(p2p):
        return p2p
    if hasattr(p2p, "latency") and hasattr(p2p, "bandwidth"):
        latency, bandwidth = float(p2p.latency), float(p2p.bandwidth)
        return lambda nbytes: latency + nbytes / bandwidth
    if hasattr(p2p, "cost"):
        return lambda nbytes: p2p.cost(0, 1, nbytes)
    raise CollectiveSpecError(
        f"p2p must be a callable (nbytes) -> seconds, an object with latency and bandwidth, "
        f"or a network model; got {p2p!r}")


def check_call(nprocs: int, nbytes: float) -> None:
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or nprocs < 1:
        raise CollectiveSpecError(f"nprocs must be an int >= 1, got {nprocs!r}")
    if (isinstance(nbytes, bool) or not isinstance(nbytes, (int, float))
            or not math.isfinite(nbytes) or nbytes < 0):
        raise CollectiveSpecError(f"nbytes must be a finite number >= 0, got {nbytes!r}")


# -- algorithms: choice and critical path ---------------------------------------------

def resolve_algorithm(op: str, algorithm: str, nprocs: int) -> str:
    """The algorithm actually run for *algorithm* on *nprocs* ranks.

    Raises :class:`CollectiveSpecError` for an unknown algorithm.  Two
    power-of-two-only algorithms fall back as MPICH's selection would:
    allgather ``recursive_doubling`` -> ``bruck`` and bcast
    ``scatter_doubling_allgather`` -> ``scatter_ring_allgather``.
    """
    op = canonical_op(op)
    if algorithm not in ALGORITHMS[op]:
        raise CollectiveSpecError(
            f"unknown {op} algorithm {algorithm!r}; valid: {', '.join(ALGORITHMS[op])}")
    if not is_pow2(nprocs):
        if op == "allgather" and algorithm == "recursive_doubling":
            return "bruck"
        if op == "bcast" and algorithm == "scatter_doubling_allgather":
            return "scatter_ring_allgather"
    return algorithm


#: MPICH's v-variants that do not select by size (``MPIR_Gatherv``, ``MPIR_Scatterv``:
#: "Since the array of recvcounts is valid only on the root, we cannot do a tree
#: algorithm ... we simply use a linear algorithm"; ``MPIR_Alltoallv``/``Alltoallw``:
#: "we don't know the total message size for all processes without additional
#: communication. Therefore we simply use the 'middle of the road' isend/irecv
#: algorithm", whose contention-free cost is pairwise exchange's).
V_FIXED = {"gatherv": "linear", "scatterv": "linear", "alltoallv": "pairwise",
           "alltoallw": "pairwise"}


def default_algorithm(op: str, nprocs: int, nbytes: float | None) -> str:
    """MPICH 3.x's default algorithm for *op* (thresholds in :data:`DEFAULT_THRESHOLDS`).

    v-variants (MPICH's own selection, :data:`V_FIXED`): gatherv and scatterv linear,
    alltoallv and alltoallw pairwise, whatever the size; allgatherv and
    reduce_scatter(_block) as their plain op on the total (every rank knows the counts).

    *nbytes* ``None``: not every member knows the size (a v-variant's counts, Python
    objects whose pickles differ), so an algorithm chosen from it could differ between
    members, whose schedules would then not match.  The choice then does not look at
    the size: :data:`V_FIXED` for the v names, pairwise for alltoall (MPICH's
    alltoallv), and for every other op the short-message choice below (``nbytes = 0``:
    binomial bcast, reduce, gather and scatter; recursive doubling allreduce, scan and
    exscan; allgather recursive doubling, or bruck when ``P`` is not a power of two;
    recursive halving reduce_scatter; dissemination barrier).

    bcast: binomial if ``nbytes < 12288`` or ``P < 8``; else scatter +
    recursive-doubling allgather if ``nbytes < 524288`` and ``P`` is a power of
    two; else scatter + ring allgather.  reduce: rabenseifner if
    ``nbytes > 2048`` and ``nbytes >= pof2(P)`` (MPICH: ``count >= pof2``;
    we count bytes), else binomial.  allreduce: recursive doubling if
    ``nbytes <= 2048`` or ``nbytes < pof2(P)``, else rabenseifner.  allgather
    (total bytes): recursive doubling if ``< 524288`` and ``P`` a power of two,
    else bruck if ``< 81920``, else ring.  alltoall (bytes per destination):
    bruck if ``<= 256`` and ``P >= 8``, else pairwise (MPICH's medium
    isend/irecv algorithm has the same contention-free cost).
    reduce_scatter: recursive halving if ``nbytes < 524288``, else pairwise.
    barrier: dissemination; gather/scatter: binomial; scan/exscan: recursive
    doubling.
    """
    fixed = V_FIXED.get(op.strip().lower().removeprefix("mpi_")) \
        if isinstance(op, str) else None
    op = canonical_op(op)
    if nbytes is None:
        if fixed is not None or op == "alltoall":
            return fixed or "pairwise"
        nbytes = 0
    check_call(nprocs, nbytes)
    if fixed is not None:
        return fixed
    th, P, n = DEFAULT_THRESHOLDS, nprocs, nbytes
    if op == "bcast":
        if n < th["bcast_short"] or P < th["bcast_min_procs"]:
            return "binomial"
        if n < th["bcast_long"] and is_pow2(P):
            return "scatter_doubling_allgather"
        return "scatter_ring_allgather"
    if op == "reduce":
        return "rabenseifner" if n > th["reduce_short"] and n >= floor_pow2(P) else "binomial"
    if op == "allreduce":
        if n <= th["allreduce_short"] or n < floor_pow2(P):
            return "recursive_doubling"
        return "rabenseifner"
    if op == "allgather":
        if n < th["allgather_long"] and is_pow2(P):
            return "recursive_doubling"
        return "bruck" if n < th["allgather_short"] else "ring"
    if op == "alltoall":
        block = n / P
        return "bruck" if block <= th["alltoall_short"] and P >= th["alltoall_min_procs"] \
            else "pairwise"
    if op == "reduce_scatter":
        return "recursive_halving" if n < th["redscat_long"] else "pairwise"
    return {"barrier": "dissemination", "gather": "binomial", "scatter": "binomial",
            "scan": "recursive_doubling", "exscan": "recursive_doubling"}[op]


def critical_path(op: str, algorithm: str, nprocs: int, nbytes: float) -> Steps:
    """The messages on the critical path of *algorithm*, in order, run-length coded.

    The cost of the collective on a contention-free network is the sum of
    ``p2p(size)`` over this list (:func:`chain`).  It is exactly the finish
    time of the round-by-round evaluation of the twin schedule in
    :mod:`netmodels.collective_schedules`.  Notation: ``K = ceil(log2 P)``,
    ``P2 = floor_pow2(P)``, ``K2 = log2 P2``, ``b = nbytes/P``; non-powers
    of two fold ``r = P - P2`` ranks into partners first (``fold``).

    Recursive-halving reduce_scatter on a non-power of two (MPICH's
    ``reduce_scatter_intra_recursive_halving.c``): after the fold the first ``r`` of
    the ``P2`` survivors carry two blocks (``newcnts``), so the halves differ in size;
    a window of ``w`` survivors sends ``w/2 + min(r, w/2)`` blocks from its lower half
    to its upper half, the larger message of the pair.  The path is
    ``t(n) + sum_{w = P2, P2/2, ..., 2} t((w/2 + min(r, w/2)) b) + t(b)``: P = 6,
    ``t(6b) + t(4b) + t(2b) + t(b)``.  Rank 0's window is the largest at every step and
    it starts last (it waited for the fold), so its chain is the longest for any
    message cost that grows with size.  Powers of two halve evenly, ``n/2 ... n/P``.
    """
    op = canonical_op(op)
    check_call(nprocs, nbytes)
    alg = resolve_algorithm(op, algorithm, nprocs)
    P, n = nprocs, nbytes
    if P == 1:
        return []
    K = ceil_log2(P)
    P2 = floor_pow2(P)
    K2 = P2.bit_length() - 1
    b = share(n, 1, P)
    fold: Steps = [(n, 1)] if P != P2 else []
    halving: Steps = [(share(n, 1, 1 << k), 1) for k in range(1, K2 + 1)]
    subtrees: Steps = [(share(n, min(1 << i, P - (1 << i)), P), 1) for i in range(K)]
    if alg == "linear":
        if op == "barrier":
            return [(0, 2 * (P - 1))]
        return [(b if op in ("gather", "scatter") else n, P - 1)]
    if (op, alg) in (("bcast", "binomial"), ("reduce", "binomial"),
                     ("scan", "recursive_doubling"), ("exscan", "recursive_doubling")):
        return [(n, K)]
    if op == "barrier":                                      # dissemination
        return [(0, K)]
    if op == "gather" or (op, alg) == ("allgather", "bruck"):
        return subtrees
    if op == "scatter":
        return subtrees[::-1]
    if op == "bcast":
        if alg == "scatter_ring_allgather":
            return subtrees[::-1] + [(b, P - 1)]
        return subtrees[::-1] + [(share(n, 1 << i, P), 1) for i in range(K)]
    if op == "allgather":
        if alg == "ring":
            return [(b, P - 1)]
        return [(share(n, 1 << i, P), 1) for i in range(K)]   # recursive doubling
    if op == "alltoall":
        if alg == "pairwise":
            return [(b, P - 1)]
        # Bruck: round k forwards every block whose index has bit k set.
        return [(share(n, bruck_blocks(P, k), P), 1) for k in range(K)]
    if op == "reduce_scatter":
        if alg in ("pairwise", "ring"):
            return [(b, P - 1)]
        if not fold:                                         # recursive halving
            return halving
        # MPICH's fold leaves r survivors carrying two blocks each, the first r of the P2
        # (newcnts); rank 0's half-window holds the most of them at every step
        return fold + [(share(n, (w >> 1) + min(P - P2, w >> 1), P), 1)
                       for w in (P2 >> k for k in range(K2))] + [(b, 1)]
    if op == "reduce":                                      # rabenseifner
        return fold + halving + halving[::-1]
    # allreduce
    if alg == "recursive_doubling":
        return fold + [(n, K2)] + fold
    if alg == "rabenseifner":
        return fold + halving + halving[::-1] + fold
    if alg == "ring":
        return [(b, 2 * (P - 1))]
    return [(n, 2 * K)]                                      # reduce_bcast


#: Ops whose ``linear`` algorithm is rooted: fan-ins (a non-root sends one message to the
#: root) and fan-outs (the root sends one message to each non-root in turn).
LINEAR_ROOTED = {"gather": "in", "reduce": "in", "scatter": "out", "bcast": "out"}


def member_messages(op: str, algorithm: str, nprocs: int, nbytes: float,
                    member: int) -> list[tuple[int, int, int | float]] | None:
    """The messages that end at non-root *member* of a rooted linear algorithm, in order,
    as ``(src, dst, bytes)`` relative to the root (the root is 0); None for the root, for
    other algorithms, or on one rank (the member then pays :func:`critical_path`).

    MPICH's linear algorithms (``MPIR_Gatherv``/``MPIR_Scatterv``: the root posts one
    irecv or isend per rank, in turn, then waits for all) make a member's part its own
    messages, not the root's whole loop:

    * fan-in (gather, reduce): the member sends one message, its block ``nbytes/P`` of
      gather's vector or reduce's whole vector.  Time ``t(m)``: one latency, where the
      root's critical path is ``(P-1) t(b)``.
    * fan-out (scatter, bcast): relative rank ``k`` receives the root's ``k``-th message,
      which leaves after the root's ``k - 1`` earlier ones: under the port model of
      :func:`~netmodels.collective_schedules.evaluate` (a rank sends one message at a
      time) it ends at ``k t(m)``, ``m = nbytes/P`` (scatter) or ``nbytes`` (bcast); the
      root ends at ``(P-1) t(m)``.
    * the names ``gatherv`` and ``scatterv``: *nbytes* is the member's own block and the
      list holds only its own message, none for an empty block (MPICH's
      gatherv_allcomm_linear.c and scatterv_allcomm_linear.c skip zero counts at both
      ends).  A Scatterv member's time also counts the root's earlier sends, whose
      blocks differ: the caller adds them (``bsim.engine.collective_costs``).
    """
    kind = LINEAR_ROOTED.get(canonical_op(op))
    if kind is None or algorithm != "linear" or nprocs <= 1 or member % nprocs == 0:
        return None
    name = canonical_op(op)
    k = member % nprocs
    if op.strip().lower().removeprefix("mpi_") in ("gatherv", "scatterv"):
        return ([] if not nbytes else [(k, 0, nbytes)] if kind == "in"
                else [(0, k, nbytes)])
    if kind == "in":
        size = nbytes if name == "reduce" else share(nbytes, 1, nprocs)
        return [(k, 0, size)]
    size = nbytes if name == "bcast" else share(nbytes, 1, nprocs)
    return [(0, j, size) for j in range(1, k + 1)]


def chain(steps: Steps, p2p: Any) -> SimTime:
    """Sum ``p2p(size)`` along *steps*, left to right (the order the evaluator adds)."""
    cost = as_p2p(p2p)
    t = 0.0
    for size, count in steps:
        c = cost(size)
        for _ in range(count):
            t += c
    return t
