"""Collective algorithms expanded into rounds of point-to-point messages.

``schedule(op, algorithm, nprocs, nbytes, root)`` returns a list of rounds;
each round is a list of messages ``(src, dst, nbytes)`` (communicator ranks).
Messages of one round may proceed concurrently; a rank starts its round-``r``
messages once everything it sent or received in earlier rounds has finished.
The engine's *algorithmic* collective mode sends these messages through the
network model so that topology and contention act on them.

Sizes follow :mod:`netmodels.collective_costs` (``nbytes`` is the whole vector;
blocks are ``nbytes/P``); a size is an int when exact, else a float.

:func:`evaluate` is the contention-free reference timing of a schedule: a
message starts when its sender and its receiver have both finished their
earlier rounds and the sender's previous send and the receiver's previous
receive of this round are done (one send port and one receive port per
rank; sends and receives overlap); it takes ``p2p(nbytes)``.  On it every
schedule finishes at exactly the time of its analytic twin,
``chain(critical_path(op, algorithm, P, nbytes), p2p)`` -- the same float,
for any P (tests/test_schedules.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from .collective_algorithms import (
    ALGORITHMS,
    CollectiveSpecError,
    as_p2p,
    bruck_blocks,
    canonical_op,
    ceil_log2,
    default_algorithm,
    floor_pow2,
    resolve_algorithm,
    share,
)

__all__ = ["Message", "Round", "schedule", "evaluate", "schedule_time", "ALGORITHMS",
           "Part", "rank_parts", "linear_v_part"]

Message = tuple[int, int, Any]          # (src, dst, nbytes: int | float)
Round = list[Message]
#: One rank's part of a schedule: ``(round, sends, receives)`` with ``(peer, bytes)`` pairs.
Part = tuple[tuple[int, tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]], ...]
_Gen = Callable[[int, Any], list[Round]]


# -- building blocks (relative ranks: the root is rank 0) ------------------------------

def _binomial_down(P: int, size: Callable[[int, int], Any]) -> list[Round]:
    """Fan-out tree, farthest child first: rank r sends to r+mask (MPICH bcast/scatter)."""
    K = ceil_log2(P)
    rounds = []
    for i in range(K):
        mask = 1 << (K - 1 - i)
        rounds.append([(r, r + mask, size(r, mask))
                       for r in range(0, P, 2 * mask) if r + mask < P])
    return rounds


def _binomial_up(P: int, size: Callable[[int, int], Any]) -> list[Round]:
    """Fan-in tree, nearest child first: rank r+mask sends to r (MPICH reduce/gather)."""
    rounds = []
    for i in range(ceil_log2(P)):
        mask = 1 << i
        rounds.append([(r + mask, r, size(r, mask))
                       for r in range(0, P, 2 * mask) if r + mask < P])
    return rounds


def _gather_far_first(P2: int, n: Any) -> list[Round]:
    """Rabenseifner's reduce, second phase: the binomial gather of the reduced pieces to
    rank 0, farthest first, the piece doubling as the distance halves: ranks ``[m, 2m)``
    send ``n / 2m`` to ``v - m`` for ``m = P2/2, ..., 1`` (the mirror of
    :func:`_halving`; MPICH's reduce_intra_reduce_scatter_gather.c, ``mask`` from
    ``pof2/2`` down, ``pof2 / (mask * 2)`` blocks a step)."""
    rounds = []
    m = P2 >> 1
    while m:
        rounds.append([(v + m, v, share(n, 1, 2 * m)) for v in range(m)])
        m >>= 1
    return rounds


def _subtree(P: int, n: Any) -> Callable[[int, int], Any]:
    """Bytes for the subtree [r+mask, min(r+2*mask, P)) of a scatter/gather tree."""
    return lambda r, mask: share(n, min(mask, P - r - mask), P)


def _ring(P: int, size: Any, nrounds: int) -> list[Round]:
    return [[(r, (r + 1) % P, size) for r in range(P)] for _ in range(nrounds)]


def _exchange(P: int, sizes: Sequence[Any], masks: Sequence[int]) -> list[Round]:
    """Pairwise exchanges ``v <-> v ^ mask`` among P (a power of two) ranks."""
    return [[(v, v ^ mask, size) for v in range(P)] for size, mask in
            zip(sizes, masks, strict=True)]


def _folded(P: int, pre: Any, body: Callable[[int], list[Round]], post: Any) -> list[Round]:
    """Run *body* on ``P2 = floor_pow2(P)`` ranks; fold the ``r = P - P2`` extra ranks.

    Rank ``2i+1`` (i < r) first sends its *pre* bytes to ``2i`` and drops out;
    afterwards ``2i`` sends *post* bytes back (no post round if *post* is None).
    Virtual rank v is real rank ``2v`` for ``v < r``, else ``v + r``.  MPICH
    folds the even ranks into the odd ones; folding odd into even keeps rank 0
    (a root) in the body and costs the same.
    """
    P2 = floor_pow2(P)
    r = P - P2

    def real(v: int) -> int:
        return 2 * v if v < r else v + r

    rounds: list[Round] = [[(2 * i + 1, 2 * i, pre) for i in range(r)]] if r else []
    rounds += [[(real(s), real(d), n) for s, d, n in rnd] for rnd in body(P2)]
    if r and post is not None:
        rounds.append([(2 * i, 2 * i + 1, post) for i in range(r)])
    return rounds


def _halving(P2: int, n: Any) -> list[Round]:
    """Recursive halving: distance 1, 2, ..., P2/2 while the data halves n/2 ... n/P2."""
    K2 = P2.bit_length() - 1
    return _exchange(P2, [share(n, 1, 2 << k) for k in range(K2)], [1 << k for k in range(K2)])


def _halving_far_first(P2: int, n: Any, r: int = 0) -> list[Round]:
    """Recursive halving as MPICH's reduce_scatter runs it: distance P2/2, P2/4, ..., 1
    while the data halves n/2 ... n/P2 (``MPIR_Reduce_scatter_intra_recursive_halving``;
    Thakur, Rabenseifner and Gropp 2005).  Rabenseifner's allreduce and reduce
    halve at distance 1 first (:func:`_halving`, as MPICH's).

    After a fold of *r* ranks (``P = P2 + r``, blocks ``b = n/P``) survivor ``v < r``
    carries two blocks and the others one (MPICH's ``newcnts``); a rank in a window of
    ``w`` survivors (aligned, holding it) sends the half of the window that is not its
    own, so the two messages of a pair differ: P = 6, first step 2b from the lower half
    and 4b from the upper, then 2b and 2b (survivors 0, 1), b and b (2, 3)."""
    K2 = P2.bit_length() - 1
    if not r:
        return _exchange(P2, [share(n, 1, 2 << k) for k in range(K2)],
                         [P2 >> (k + 1) for k in range(K2)])
    P = P2 + r
    before = [min(v, r) + v for v in range(P2 + 1)]   # blocks carried by survivors < v
    rounds = []
    for k in range(K2):
        half = P2 >> (k + 1)
        rnd = []
        for v in range(P2):
            lo = v - v % (2 * half) + (0 if v & half else half)   # the half it sends
            rnd.append((v, v ^ half, share(n, before[lo + half] - before[lo], P)))
        rounds.append(rnd)
    return rounds


def _doubling_back(P2: int, n: Any) -> list[Round]:
    """The mirror of :func:`_halving`: data n/P2 ... n/2, distance P2/2 ... 1."""
    K2 = P2.bit_length() - 1
    ks = range(K2 - 1, -1, -1)
    return _exchange(P2, [share(n, 1, 2 << k) for k in ks], [1 << k for k in ks])


def _rd_allgather(P: int, n: Any) -> list[Round]:
    K = ceil_log2(P)
    return _exchange(P, [share(n, 1 << k, P) for k in range(K)], [1 << k for k in range(K)])


# -- the algorithms ----------------------------------------------------------------------

def _linear_out(P: int, size: Any) -> list[Round]:
    return [[(0, d, size) for d in range(1, P)]]


def _linear_in(P: int, size: Any) -> list[Round]:
    return [[(s, 0, size) for s in range(1, P)]]


def _dissemination(P: int, n: Any) -> list[Round]:
    return [[(r, (r + (1 << k)) % P, 0) for r in range(P)] for k in range(ceil_log2(P))]


def _scan_rd(P: int, n: Any) -> list[Round]:
    """MPICH's scan and exscan (scan_intra_recursive_doubling.c): at ``mask`` = 1, 2, 4,
    ... every rank exchanges its partial result with ``rank ^ mask`` when that rank
    exists, both ways (a Sendrecv), so every rank waits for the others."""
    return [[(r, r ^ (1 << k), n) for r in range(P) if r ^ (1 << k) < P]
            for k in range(ceil_log2(P))]


def _scan_linear(P: int, n: Any) -> list[Round]:
    return [[(i, i + 1, n)] for i in range(P - 1)]


def _bruck_allgather(P: int, n: Any) -> list[Round]:
    return [[(r, (r - (1 << k)) % P, share(n, min(1 << k, P - (1 << k)), P)) for r in range(P)]
            for k in range(ceil_log2(P))]


def _bruck_alltoall(P: int, n: Any) -> list[Round]:
    rounds = []
    for k in range(ceil_log2(P)):
        blocks = bruck_blocks(P, k)
        rounds.append([(r, (r + (1 << k)) % P, share(n, blocks, P)) for r in range(P)])
    return rounds


def _pairwise(P: int, n: Any) -> list[Round]:
    b = share(n, 1, P)
    return [[(r, (r + k) % P, b) for r in range(P)] for k in range(1, P)]


def _rd_allreduce(P: int, n: Any) -> list[Round]:
    def body(P2: int) -> list[Round]:
        K2 = P2.bit_length() - 1
        return _exchange(P2, [n] * K2, [1 << k for k in range(K2)])
    return _folded(P, n, body, n)


_SCHEDULES: dict[tuple[str, str], _Gen] = {
    ("barrier", "dissemination"): _dissemination,
    ("barrier", "linear"): lambda P, n: _linear_in(P, 0) + _linear_out(P, 0),
    ("bcast", "binomial"): lambda P, n: _binomial_down(P, lambda r, m: n),
    ("bcast", "linear"): _linear_out,
    ("bcast", "scatter_ring_allgather"):
        lambda P, n: _binomial_down(P, _subtree(P, n)) + _ring(P, share(n, 1, P), P - 1),
    ("bcast", "scatter_doubling_allgather"):
        lambda P, n: _binomial_down(P, _subtree(P, n)) + _rd_allgather(P, n),
    ("reduce", "binomial"): lambda P, n: _binomial_up(P, lambda r, m: n),
    ("reduce", "linear"): _linear_in,
    ("reduce", "rabenseifner"): lambda P, n: _folded(
        P, n, lambda P2: _halving(P2, n) + _gather_far_first(P2, n), None),
    ("allreduce", "recursive_doubling"): _rd_allreduce,
    ("allreduce", "rabenseifner"): lambda P, n: _folded(
        P, n, lambda P2: _halving(P2, n) + _doubling_back(P2, n), n),
    ("allreduce", "ring"): lambda P, n: _ring(P, share(n, 1, P), 2 * (P - 1)),
    ("allreduce", "reduce_bcast"): lambda P, n: (_binomial_up(P, lambda r, m: n)
                                                 + _binomial_down(P, lambda r, m: n)),
    ("gather", "binomial"): lambda P, n: _binomial_up(P, _subtree(P, n)),
    ("gather", "linear"): lambda P, n: _linear_in(P, share(n, 1, P)),
    ("scatter", "binomial"): lambda P, n: _binomial_down(P, _subtree(P, n)),
    ("scatter", "linear"): lambda P, n: _linear_out(P, share(n, 1, P)),
    ("allgather", "recursive_doubling"): _rd_allgather,
    ("allgather", "bruck"): _bruck_allgather,
    ("allgather", "ring"): lambda P, n: _ring(P, share(n, 1, P), P - 1),
    ("alltoall", "pairwise"): _pairwise,
    ("alltoall", "bruck"): _bruck_alltoall,
    ("reduce_scatter", "recursive_halving"): lambda P, n: _folded(
        P, n, lambda P2: _halving_far_first(P2, n, P - P2), share(n, 1, P)),
    ("reduce_scatter", "pairwise"): _pairwise,
    ("reduce_scatter", "ring"): lambda P, n: _ring(P, share(n, 1, P), P - 1),
    ("scan", "recursive_doubling"): _scan_rd,
    ("scan", "linear"): _scan_linear,
    ("exscan", "recursive_doubling"): _scan_rd,
    ("exscan", "linear"): _scan_linear,
}

_ROOTED = ("bcast", "reduce", "gather", "scatter", "barrier")


def schedule(op: str, algorithm: str | None, nprocs: int, nbytes: Any,
             root: int = 0) -> list[Round]:
    """Rounds of ``(src, dst, nbytes)`` messages of *algorithm* for *op* on *nprocs* ranks.

    *algorithm* ``None`` or ``"default"`` picks MPICH's default
    (:func:`netmodels.collective_costs.default_algorithm`); power-of-two-only
    algorithms fall back as :func:`~netmodels.collective_costs.resolve_algorithm`
    says.  Rooted ops (bcast, reduce, gather, scatter; linear barrier) are
    built around *root*; the others ignore it.  ``nprocs == 1`` gives no
    rounds.  Raises :class:`CollectiveSpecError` for an unknown op or
    algorithm, a bad size, or a root outside ``[0, nprocs)``.
    """
    name = canonical_op(op)
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or nprocs < 1:
        raise CollectiveSpecError(f"nprocs must be an int >= 1, got {nprocs!r}")
    if not isinstance(nbytes, (int, float)) or isinstance(nbytes, bool) or not nbytes >= 0 \
            or nbytes == float("inf"):
        raise CollectiveSpecError(f"nbytes must be a finite number >= 0, got {nbytes!r}")
    if isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < nprocs:
        raise CollectiveSpecError(f"root must be a rank in [0, {nprocs}), got {root!r}")
    if algorithm is None or algorithm == "default":
        algorithm = default_algorithm(op, nprocs, nbytes)
    alg = resolve_algorithm(name, algorithm, nprocs)
    if nprocs == 1:
        return []
    rounds = _SCHEDULES[name, alg](nprocs, nbytes)
    if root and name in _ROOTED:
        rounds = [[((s + root) % nprocs, (d + root) % nprocs, n) for s, d, n in rnd]
                  for rnd in rounds]
    return [rnd for rnd in rounds if rnd]


def evaluate(rounds: Sequence[Sequence[Message]], p2p: Any, nprocs: int | None = None,
             start: Sequence[float] | None = None,
             pair_cost: Callable[[int, int, Any], float] | None = None) -> list[float]:
    """Per-rank finish times of *rounds* on a contention-free network (see module doc).

    *p2p* is the time of one message as for the collective models; *start*
    gives each rank's arrival time (default all 0.0); *nprocs* defaults to
    ``len(start)`` or one more than the largest rank named.  With
    *pair_cost* ``(src, dst, nbytes) -> seconds`` each message costs what its
    own pair costs (a topology: the algorithm's real partners) and *p2p* is
    ignored.  A rank's finish is the end of its last message (its start if it
    has none).  Raises ``ValueError`` for a self-message, a rank out of range
    or a negative size.
    """
    if pair_cost is None:
        one = as_p2p(p2p)

        def pair_cost(src: int, dst: int, nbytes: Any) -> float:
            return one(nbytes)
    if nprocs is None:
        nprocs = len(start) if start is not None else 1 + max(
            (max(s, d) for rnd in rounds for s, d, _ in rnd), default=0)
    ready = [0.0] * nprocs if start is None else [float(t) for t in start]
    if len(ready) != nprocs:
        raise ValueError(f"start has {len(ready)} entries for {nprocs} ranks")
    for index, rnd in enumerate(rounds):
        send_free = ready[:]           # each rank's send port, from its round start
        recv_free = ready[:]           # each rank's receive port
        for src, dst, nbytes in rnd:
            if src == dst or not (0 <= src < nprocs and 0 <= dst < nprocs) or nbytes < 0:
                _bad_message(index, src, dst, nbytes, nprocs)
            # send_free[src] >= ready[src] and recv_free[dst] >= ready[dst] always;
            # ``a if a > b else b`` is max(a, b) for these times, without the call
            s, r = send_free[src], recv_free[dst]
            end = (s if s > r else r) + pair_cost(src, dst, nbytes)
            send_free[src] = end
            recv_free[dst] = end
        ready = [s if s > r else r for s, r in zip(send_free, recv_free, strict=True)]
    return ready


def _bad_message(index: int, src: int, dst: int, nbytes: Any, nprocs: int) -> None:
    """Raise ``ValueError`` for a self-message or a rank out of range, else a negative size."""
    if src == dst or not (0 <= src < nprocs and 0 <= dst < nprocs):
        raise ValueError(f"round {index}: bad message {src} -> {dst} for {nprocs} ranks")
    raise ValueError(f"round {index}: negative size {nbytes} ({src} -> {dst})")


def schedule_time(op: str, algorithm: str | None, nprocs: int, nbytes: Any, p2p: Any,
                  root: int = 0) -> float:
    """The latest finish of :func:`evaluate` on :func:`schedule` (0.0 for one rank)."""
    rounds = schedule(op, algorithm, nprocs, nbytes, root)
    return max(evaluate(rounds, p2p, nprocs), default=0.0)


@lru_cache(maxsize=256)
def rank_parts(op: str, alg: str, nprocs: int, nbytes: float, root: int) -> tuple[Part, ...]:
    """Each rank's rounds of :func:`schedule` (sizes as ints): ``(round, sends, receives)``
    with ``(peer, bytes)`` pairs.  A pure function of its arguments, kept for the next call
    of the same collective (an iterative program repeats it: building it is O(P log P))."""
    rounds = schedule(op, alg, nprocs, nbytes, root)
    per_rank: list[list[Any]] = [[] for _ in range(nprocs)]
    for index, rnd in enumerate(rounds):
        touched: dict[int, tuple[list[tuple[int, int]], list[tuple[int, int]]]] = {}
        for src, dst, nb in rnd:
            n = int(nb)
            touched.setdefault(src, ([], []))[0].append((dst, n))
            touched.setdefault(dst, ([], []))[1].append((src, n))
        for r, (sends, recvs) in touched.items():
            per_rank[r].append((index, tuple(sends), tuple(recvs)))
    return tuple(tuple(p) for p in per_rank)


def linear_v_part(fan_in: bool, root: int, me: int, counts: Sequence[float] | None,
                  own: float) -> Part:
    """Member *me*'s part of MPICH's linear Gatherv (*fan_in*) or Scatterv, as
    :func:`rank_parts` gives a part (one round, numbered 0).

    The root posts one receive (Gatherv) or send (Scatterv) per other member whose block
    in *counts* is not empty, in rank order ``0 .. P-1``, then waits for all
    (gatherv_allcomm_linear.c: ``if (recvcounts[i])``; scatterv_allcomm_linear.c:
    ``if (sendcounts[i])``); a non-root sends or receives its own block *own* unless it
    is empty (``if (sendcount)``, ``if (recvcount)``), so a member with nothing to move
    takes no part.  Sizes are the blocks' bytes."""
    if me == root:
        msgs = tuple((j, int(c)) for j, c in enumerate(counts or ()) if j != root and c)
        return (((0, (), msgs) if fan_in else (0, msgs, ())),) if msgs else ()
    if not own:
        return ()
    one = ((root, int(own)),)
    return ((0, one, ()) if fan_in else (0, (), one),)
