"""Graph and distributed-graph topologies, and what every topology has (MPI 4.1, Ch. 8).

* ``Create_graph`` (MPI-1 ``MPI_Graph_create``): every rank passes the whole graph
  (``index``, ``edges``); ranks ``>= nnodes`` get ``COMM_NULL``.
* ``Create_dist_graph_adjacent``: each rank passes its own in- and out-neighbours
  (and weights); ``Create_dist_graph``: each rank passes any edges, and every rank
  learns the ones that start or end at it.
* ``Cart_map`` / ``Graph_map``: the rank a process would have in such a topology
  (bsim ignores ``reorder``, so a process keeps its rank, or gets ``UNDEFINED``).

The topology communicators are shared by their members, as every bsim communicator is
(:meth:`bsim.mpi.comms.comm.Comm.derive_topo`); a distributed graph keeps each member's own
adjacency in ``dist_adj`` under its rank.  :func:`routes` gives, for any topology, a
rank's in- and out-neighbours and the tags that pair each message with its receive,
which the neighbourhood collectives (``neighbor.py``, ``neighbor_buffers.py``) use.

Timing: creating a topology is ``Split`` of the parent (an allgather of the (color, key)
pairs, as for ``Create_cart``); ``Create_dist_graph`` adds an ``allgather`` of each
rank's edge list (pickled) on the new group, so every rank learns its adjacency as
MPICH's alltoall of edge counts and exchange of edges would tell it.  Inquiries are
local and free.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ...constants import CART, DIST_GRAPH, GRAPH, PROC_NULL, UNDEFINED
from ...engine.rank import current
from ...errors import MPIUsageError
from ..common.namespace import INT_CONSTANTS
from ..management import communicators as management
from .cartesian import Get_cart_rank, coords_of

if TYPE_CHECKING:
    from ..comms.comm import Comm, Distgraphcomm, Graphcomm

__all__ = ["UNWEIGHTED", "WEIGHTS_EMPTY", "DistAdjacency", "routes", "Create_graph",
           "Create_dist_graph_adjacent", "Create_dist_graph", "Cart_map", "Graph_map",
           "TopoInquiry", "GraphCalls", "DistGraphCalls"]

UNWEIGHTED: int = INT_CONSTANTS["UNWEIGHTED"]
WEIGHTS_EMPTY: int = INT_CONSTANTS["WEIGHTS_EMPTY"]


class DistAdjacency(NamedTuple):
    """One rank's part of a distributed graph: neighbours and weights (None: unweighted)."""

    sources: list[int]
    destinations: list[int]
    sourceweights: list[int] | None
    destweights: list[int] | None
    weighted: bool


def _ints(values: Any, what: str, call: str) -> list[int]:
    try:
        return [operator.index(v) for v in values]
    except TypeError:
        raise TypeError(f"{call}: {what} must be integers, got {values!r}") from None


def _is(value: Any, constant: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value == constant


def _weights(weights: Any, n: int, what: str, call: str) -> list[int] | None:
    """mpi4py's reading of a weights argument: None or ``UNWEIGHTED`` (no weights),
    ``WEIGHTS_EMPTY`` (weighted, no edges: ``ValueError`` for *n* > 0) or *n* integers."""
    if weights is None or _is(weights, UNWEIGHTED):
        return None
    if _is(weights, WEIGHTS_EMPTY):
        if n > 0:
            raise ValueError(f"{call}: empty weights but nonzero degree ({what})")
        return []
    out = _ints(weights, what, call)
    if len(out) != n:
        raise ValueError(f"{call}: expecting {n} {what}, got {len(out)}")
    return out


def _check_ranks(vr_rank: int, ranks: list[int], size: int, what: str, call: str) -> None:
    bad = [r for r in ranks if not 0 <= r < size]
    if bad:
        raise MPIUsageError(f"rank {vr_rank}: {call}: {what} {bad} outside the communicator's "
                            f"ranks 0..{size - 1}")


def _graph_arrays(index: Sequence[int], edges: Sequence[int], call: str
                  ) -> tuple[list[int], list[int]]:
    """``(index, edges)`` as MPI has them; mpi4py also takes the 'standard' adjacency
    form with a leading 0 (``index[0] == 0`` and ``index[-1] == len(edges)``)."""
    idx, edg = _ints(index, "index", call), _ints(edges, "edges", call)
    if idx and idx[0] == 0 and idx[-1] == len(edg):
        idx = idx[1:]
    return idx, edg


def _check_graph(vr_rank: int, idx: list[int], edg: list[int], size: int, call: str) -> None:
    nnodes = len(idx)
    if nnodes > size:
        raise MPIUsageError(f"rank {vr_rank}: {call}: a graph of {nnodes} nodes needs "
                            f"{nnodes} ranks, the communicator has {size}")
    prev = 0
    for i, end in enumerate(idx):
        if end < prev:
            raise MPIUsageError(f"rank {vr_rank}: {call}: index must be non-decreasing and "
                                f">= 0, got index[{i}] = {end} after {prev}")
        prev = end
    if nnodes and idx[-1] != len(edg):
        raise MPIUsageError(f"rank {vr_rank}: {call}: index ends at {idx[-1]} but "
                            f"{len(edg)} edges were given")
    _check_ranks(vr_rank, edg, nnodes, "edges name nodes", call)


# -- creation (bound as Intracomm methods) -------------------------------------------------
def Create_graph(comm: Comm, index: Sequence[int], edges: Sequence[int],
                 reorder: bool = False) -> Graphcomm:
    """A graph communicator over the first ``len(index)`` ranks (collective; the others
    get ``COMM_NULL``).  ``index[i]`` is the number of edges of nodes 0..i."""
    vr = current()
    call = "Create_graph"
    idx, edg = _graph_arrays(index, edges, call)
    _check_graph(vr.rank, idx, edg, comm.size_of(vr), call)
    me = comm.rank_of(vr)
    sub = management.Split(comm, 0 if me < len(idx) else UNDEFINED, me)
    if not sub:
        return cast("Graphcomm", sub)   # COMM_NULL
    ctx = ("graph", sub.context)

    def setup(new: Any) -> None:
        new.graph_index, new.graph_edges = tuple(idx), tuple(edg)

    return cast("Graphcomm", sub.derive_topo(vr, ctx, sub.members(vr),
                                             f"{comm.label}.graph", GRAPH, setup))


def _dist_graph(comm: Comm, call: str) -> tuple[Any, Distgraphcomm]:
    """The new distributed-graph communicator (all of *comm*'s ranks, in order)."""
    vr = current()
    me = comm.rank_of(vr)
    sub = management.Split(comm, 0, me)
    new = sub.derive_topo(vr, ("distgraph", sub.context), sub.members(vr),
                          f"{comm.label}.dist_graph", DIST_GRAPH,
                          lambda c: setattr(c, "dist_adj", {}))
    return sub, cast("Distgraphcomm", new)


def Create_dist_graph_adjacent(comm: Comm, sources: Sequence[int] | None,
                               destinations: Sequence[int] | None,
                               sourceweights: Any = None, destweights: Any = None,
                               info: Any = None, reorder: bool = False) -> Distgraphcomm:
    """A distributed graph where each rank names its own in- and out-neighbours
    (collective).  Weights: None or ``UNWEIGHTED``, ``WEIGHTS_EMPTY``, or one per edge."""
    vr = current()
    call = "Create_dist_graph_adjacent"
    src = _ints(sources, "sources", call) if sources is not None else []
    dst = _ints(destinations, "destinations", call) if destinations is not None else []
    sw = _weights(sourceweights, len(src), "sourceweights", call)
    dw = _weights(destweights, len(dst), "destweights", call)
    size = comm.size_of(vr)
    _check_ranks(vr.rank, src, size, "sources", call)
    _check_ranks(vr.rank, dst, size, "destinations", call)
    weighted = sw is not None or dw is not None
    if weighted:   # one side UNWEIGHTED: its weights read as 1 (mpi4py pre-fills 1)
        sw = sw if sw is not None else [1] * len(src)
        dw = dw if dw is not None else [1] * len(dst)
    _, new = _dist_graph(comm, call)
    new.dist_adj[new.rank_of(vr)] = DistAdjacency(src, dst, sw, dw, weighted)
    return new


def Create_dist_graph(comm: Comm, sources: Sequence[int], degrees: Sequence[int],
                      destinations: Sequence[int], weights: Any = None, info: Any = None,
                      reorder: bool = False) -> Distgraphcomm:
    """A distributed graph from edges any rank may name (collective): ``degrees[i]``
    edges leave ``sources[i]``, to the next entries of *destinations*.

    A rank's neighbours are listed by the rank that named the edge, then in that rank's
    order (MPI leaves the order to the implementation).
    """
    vr = current()
    call = "Create_dist_graph"
    src = _ints(sources, "sources", call)
    deg = _ints(degrees, "degrees", call)
    if len(deg) != len(src):
        raise ValueError(f"{call}: expecting {len(src)} degrees, got {len(deg)}")
    if any(d < 0 for d in deg):
        raise MPIUsageError(f"rank {vr.rank}: {call}: negative degree in {deg}")
    nedges = sum(deg)
    dst = _ints(destinations, "destinations", call)
    if len(dst) != nedges:
        raise ValueError(f"{call}: expecting {nedges} destinations, got {len(dst)}")
    w = _weights(weights, nedges, "weights", call)
    size = comm.size_of(vr)
    _check_ranks(vr.rank, src, size, "sources", call)
    _check_ranks(vr.rank, dst, size, "destinations", call)
    edges = []
    k = 0
    for s, d in zip(src, deg):
        for _ in range(d):
            edges.append((s, dst[k], w[k] if w is not None else 1))
            k += 1
    sub, new = _dist_graph(comm, call)
    everyone = sub.allgather(edges)   # each rank learns the edges that touch it
    me = new.rank_of(vr)
    ins = [(s, wt) for named in everyone for (s, d, wt) in named if d == me]
    outs = [(d, wt) for named in everyone for (s, d, wt) in named if s == me]
    weighted = w is not None
    new.dist_adj[me] = DistAdjacency(
        [s for s, _ in ins], [d for d, _ in outs],
        [wt for _, wt in ins] if weighted else None,
        [wt for _, wt in outs] if weighted else None, weighted)
    return new


def Cart_map(comm: Comm, dims: Sequence[int], periods: Any = None) -> int:
    """The calling process's rank in such a grid: its rank here, or ``UNDEFINED`` past
    ``prod(dims)`` (bsim does not reorder)."""
    vr = current()
    d = _ints(dims, "dims", "Cart_map")
    if periods is not None and not isinstance(periods, bool) and len(periods) != len(d):
        raise ValueError(f"Cart_map: expecting {len(d)} periods, got {len(periods)}")
    need, size = math.prod(d), comm.size_of(vr)
    if any(x < 1 for x in d) or need > size:
        raise MPIUsageError(f"rank {vr.rank}: Cart_map(dims={d}): needs {need} ranks, "
                            f"communicator has {size}")
    me = comm.rank_of(vr)
    return me if me < need else UNDEFINED


def Graph_map(comm: Comm, index: Sequence[int], edges: Sequence[int]) -> int:
    """The calling process's rank in such a graph: its rank here, or ``UNDEFINED`` past
    ``nnodes`` (bsim does not reorder)."""
    vr = current()
    idx, edg = _graph_arrays(index, edges, "Graph_map")
    _check_graph(vr.rank, idx, edg, comm.size_of(vr), "Graph_map")
    me = comm.rank_of(vr)
    return me if me < len(idx) else UNDEFINED


# -- neighbours of every topology ----------------------------------------------------------
def _occurrences(ranks: list[int]) -> list[int]:
    """For each entry, how many times the same rank came before it (pairs repeated edges
    in order, as MPI's non-overtaking rule pairs them)."""
    seen: dict[int, int] = {}
    out = []
    for r in ranks:
        out.append(seen.get(r, 0))
        seen[r] = out[-1] + 1
    return out


def cart_neighbors(comm: Any, me: int) -> list[int]:
    """``Shift(d, 1)``'s source and destination for each dimension d (PROC_NULL past an
    open edge): the in- and out-neighbours of a Cartesian rank."""
    coords = coords_of(comm, me)
    out = []
    for d, (n, periodic) in enumerate(zip(comm.cart_dims, comm.cart_periods)):
        for step in (-1, 1):
            c = list(coords)
            c[d] += step
            if not periodic and not 0 <= c[d] < n:
                out.append(PROC_NULL)
            else:
                out.append(Get_cart_rank(comm, c))
    return out


def inout(comm: Any, me: int) -> tuple[list[int], list[int]]:
    """In- and out-neighbours (communicator ranks) of rank *me* of a topology."""
    topo = comm.Get_topology()
    if topo == CART:
        nbrs = cart_neighbors(comm, me)
        return nbrs, list(nbrs)
    if topo == GRAPH:
        nbrs = Graph_neighbors(comm, me)
        return nbrs, list(nbrs)
    if topo == DIST_GRAPH:
        adj = comm.dist_adj[me]
        return list(adj.sources), list(adj.destinations)
    raise MPIUsageError(f"rank {current().rank}: neighbourhood call on {comm!r}, which has "
                        f"no topology")


def routes(comm: Any, me: int) -> tuple[list[int], list[int], list[int], list[int]]:
    """``(sources, recv tags, destinations, send tags)`` of rank *me*'s neighbourhood.

    Cartesian: the message to neighbour k has tag k and is received from neighbour k
    with tag ``k ^ 1`` (what that neighbour sent the opposite way, MPI 4.1 Sec. 8.6;
    it tells apart both neighbours of a periodic dimension of size 1 or 2, as MPICH
    does).  Graphs: the j-th edge to the same rank has tag j on both sides.
    """
    sources, dests = inout(comm, me)
    if comm.Get_topology() == CART:
        k = range(len(dests))
        return sources, [i ^ 1 for i in k], dests, list(k)
    return sources, _occurrences(sources), dests, _occurrences(dests)


class TopoInquiry:
    """mpi4py's ``Topocomm`` properties (mixin): degrees and neighbour lists."""

    __slots__ = ()

    @property
    def degrees(self) -> tuple[int, int]:
        """Number of incoming and outgoing neighbours."""
        ins, outs = self.inoutedges
        return len(ins), len(outs)

    @property
    def indegree(self) -> int:
        """Number of incoming neighbours."""
        return self.degrees[0]

    @property
    def outdegree(self) -> int:
        """Number of outgoing neighbours."""
        return self.degrees[1]

    @property
    def inoutedges(self) -> tuple[list[int], list[int]]:
        """Incoming and outgoing neighbours."""
        comm: Any = self
        return inout(comm, comm.rank_of(current()))

    @property
    def inedges(self) -> list[int]:
        """Incoming neighbours."""
        return self.inoutedges[0]

    @property
    def outedges(self) -> list[int]:
        """Outgoing neighbours."""
        return self.inoutedges[1]


# -- Graphcomm and Distgraphcomm inquiries -------------------------------------------------
def Graph_neighbors(comm: Any, rank: int) -> list[int]:
    """Neighbours of node *rank* of a graph communicator."""
    idx, edg = comm.graph_index, comm.graph_edges
    if not 0 <= rank < len(idx):
        raise MPIUsageError(f"rank {current().rank}: Get_neighbors({rank}): rank out of range "
                            f"0..{len(idx) - 1}")
    return list(edg[idx[rank - 1] if rank else 0:idx[rank]])


class GraphCalls:
    """The methods and properties of mpi4py's ``Graphcomm`` (mixin)."""

    __slots__ = ()
    graph_index: tuple[int, ...]
    graph_edges: tuple[int, ...]

    def Get_topology(self) -> int:
        """``GRAPH``."""
        return GRAPH

    def Get_dims(self) -> tuple[int, int]:
        """Number of nodes and edges."""
        return len(self.graph_index), len(self.graph_edges)

    def Get_topo(self) -> tuple[list[int], list[int]]:
        """``(index, edges)``."""
        return list(self.graph_index), list(self.graph_edges)

    def Get_neighbors_count(self, rank: int) -> int:
        """Number of neighbours of node *rank*."""
        return len(Graph_neighbors(self, rank))

    def Get_neighbors(self, rank: int) -> list[int]:
        """Neighbours of node *rank*."""
        return Graph_neighbors(self, rank)

    dims = property(Get_dims, doc="Number of nodes and edges.")
    topo = property(Get_topo, doc="``(index, edges)``.")
    nnodes = property(lambda self: len(self.graph_index), doc="Number of nodes.")
    nedges = property(lambda self: len(self.graph_edges), doc="Number of edges.")
    index = property(lambda self: list(self.graph_index), doc="Index.")
    edges = property(lambda self: list(self.graph_edges), doc="Edges.")
    nneighbors = property(lambda self: len(self.neighbors), doc="Number of neighbours.")
    neighbors = property(lambda self: Graph_neighbors(self, self.rank_of(current())),
                         doc="Neighbours of the calling rank.")


class DistGraphCalls:
    """The methods of mpi4py's ``Distgraphcomm`` (mixin)."""

    __slots__ = ()
    dist_adj: dict[int, DistAdjacency]

    def Get_topology(self) -> int:
        """``DIST_GRAPH``."""
        return DIST_GRAPH

    def _mine(self) -> DistAdjacency:
        comm: Any = self
        return self.dist_adj[comm.rank_of(current())]

    def Get_dist_neighbors_count(self) -> tuple[int, int, bool]:
        """``(indegree, outdegree, weighted)`` of the calling rank."""
        adj = self._mine()
        return len(adj.sources), len(adj.destinations), adj.weighted

    def Get_dist_neighbors(self) -> tuple[list[int], list[int],
                                          tuple[list[int], list[int]] | None]:
        """``(sources, destinations, (sourceweights, destweights) or None)``."""
        adj = self._mine()
        weights = None
        if adj.weighted:
            weights = (list(adj.sourceweights or []), list(adj.destweights or []))
        return list(adj.sources), list(adj.destinations), weights
