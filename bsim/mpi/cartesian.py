"""Cartesian topologies (mpi4py's ``Create_cart`` and ``Cartcomm``).

Ranks are laid out in row-major (C) order: the last dimension varies fastest,
as MPI specifies.  ``reorder`` is accepted and ignored (ranks keep their order).
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Sequence
from typing import Any

from ..engine.rank import current
from ..errors import MPIUsageError
from .comm import Intracomm
from .management import CommManagement
from .requests import PROC_NULL

__all__ = ["Cartcomm", "create_cart", "CART"]

CART = 1


class Cartcomm(Intracomm):
    """A communicator with a Cartesian process grid."""

    __slots__ = ("_dims", "_periods")
    _dims: tuple[int, ...]
    _periods: tuple[bool, ...]

    def _coords_of(self, rank: int) -> list[int]:
        coords = []
        for d in reversed(self._dims):
            coords.append(rank % d)
            rank //= d
        return coords[::-1]

    def Get_coords(self, rank: int) -> list[int]:
        """Coordinates of *rank*."""
        size = math.prod(self._dims)
        if not 0 <= rank < size:
            raise MPIUsageError(f"rank {current().rank}: Get_coords({rank}): rank out of "
                                f"range 0..{size - 1}")
        return self._coords_of(rank)

    def Get_cart_rank(self, coords: Sequence[int]) -> int:
        """Rank at *coords* (periodic dimensions wrap)."""
        if len(coords) != len(self._dims):
            raise MPIUsageError(f"Get_cart_rank({list(coords)}): need {len(self._dims)} "
                                f"coordinates")
        rank = 0
        for c, d, p in zip(coords, self._dims, self._periods):
            if p:
                c %= d
            elif not 0 <= c < d:
                raise MPIUsageError(f"Get_cart_rank({list(coords)}): coordinate {c} outside "
                                    f"non-periodic dimension of size {d}")
            rank = rank * d + c
        return rank

    def Shift(self, direction: int, disp: int) -> tuple[int, int]:
        """``(source, dest)`` ranks *disp* steps along *direction* (PROC_NULL past an edge)."""
        if not 0 <= direction < len(self._dims):
            raise MPIUsageError(f"Shift({direction}, {disp}): direction out of range "
                                f"0..{len(self._dims) - 1}")
        me = self._coords_of(self.rank_of(current()))

        def neighbour(step: int) -> int:
            c = list(me)
            c[direction] += step
            d = self._dims[direction]
            if not self._periods[direction] and not 0 <= c[direction] < d:
                return PROC_NULL
            return self.Get_cart_rank(c)

        return neighbour(-disp), neighbour(disp)

    def Sub(self, remain_dims: Sequence[bool]) -> Cartcomm:
        """The sub-grid keeping the dimensions marked True (collective)."""
        if len(remain_dims) != len(self._dims):
            raise MPIUsageError(f"Sub({list(remain_dims)}): need {len(self._dims)} flags")
        vr = current()
        me = self.rank_of(vr)
        coords = self._coords_of(me)
        color = 0
        for c, d, keep in zip(coords, self._dims, remain_dims):
            if not keep:
                color = color * d + c
        sub = CommManagement.Split(self, color, me)
        dims = [d for d, keep in zip(self._dims, remain_dims) if keep]
        periods = [p for p, keep in zip(self._periods, remain_dims) if keep]
        return _as_cart(vr, sub, dims, periods)

    # -- neighborhood collectives (bsim/mpi/neighbor.py) ------------------------------
    def _nbr_count(self) -> int:
        return 2 * len(self._dims)

    def neighbor_allgather(self, sendobj: Any) -> list[Any]:
        """Each neighbor's object (None from a PROC_NULL neighbor)."""
        from .neighbor import dumps, exchange
        payload = dumps(sendobj)
        got = exchange(current(), self, [(len(payload), payload)] * self._nbr_count(),
                       "neighbor_allgather")
        return [None if g is None else pickle.loads(g[1]) for g in got]

    def neighbor_alltoall(self, sendobj: Sequence[Any]) -> list[Any]:
        """Send item k to neighbor k; return what each neighbor sent to this rank."""
        from .neighbor import dumps, exchange
        vr = current()
        n = self._nbr_count()
        if sendobj is None or len(sendobj) != n:
            raise MPIUsageError(f"rank {vr.rank}: neighbor_alltoall: pass {n} objects, one "
                                f"per neighbor")
        out = [(len(p), p) for p in map(dumps, sendobj)]
        got = exchange(vr, self, out, "neighbor_alltoall")
        return [None if g is None else pickle.loads(g[1]) for g in got]

    def _neighbor_buffers(self, sendbuf: Any, recvbuf: Any, call: str,
                          alltoall: bool) -> None:
        from .buffers import parse_bufspec, parse_bufspecv
        from .neighbor import exchange
        vr = current()
        n = self._nbr_count()
        try:
            rinfo = parse_bufspecv(recvbuf, n)
            if alltoall:
                sv = parse_bufspecv(sendbuf, n)
                out = []
                for k in range(n):
                    off, size = sv.block(k)
                    out.append((size, bytes(sv.mem[off:off + size]) if sv.mem is not None
                                else None))
            else:
                si = parse_bufspec(sendbuf)
                raw = bytes(si.mem) if si.mem is not None else None
                out = [(si.nbytes, raw)] * n
        except (TypeError, ValueError) as exc:
            raise MPIUsageError(f"rank {vr.rank}: {call}: bad buffer: {exc}") from None
        got = exchange(vr, self, out, call)
        if rinfo.mem is not None:
            for k, g in enumerate(got):
                if g is not None and g[1] is not None:
                    off, size = rinfo.block(k)
                    rinfo.mem[off:off + min(size, len(g[1]))] = g[1][:size]

    def Neighbor_allgather(self, sendbuf: Any, recvbuf: Any) -> None:
        """Gather one block from each neighbor (block k of recvbuf from neighbor k)."""
        self._neighbor_buffers(sendbuf, recvbuf, "Neighbor_allgather", False)

    def Neighbor_alltoall(self, sendbuf: Any, recvbuf: Any) -> None:
        """Send block k of sendbuf to neighbor k; receive block k from neighbor k."""
        self._neighbor_buffers(sendbuf, recvbuf, "Neighbor_alltoall", True)

    def Get_topo(self) -> tuple[list[int], list[bool], list[int]]:
        """``(dims, periods, coords)`` of the calling rank."""
        return list(self._dims), list(self._periods), self._coords_of(self.rank_of(current()))

    def Get_dim(self) -> int:
        """Number of dimensions."""
        return len(self._dims)

    def Get_topology(self) -> int:
        """``CART``."""
        return CART

    @property
    def dims(self) -> list[int]:
        """Grid extents."""
        return list(self._dims)

    @property
    def periods(self) -> list[bool]:
        """Periodicity per dimension."""
        return list(self._periods)

    @property
    def coords(self) -> list[int]:
        """Coordinates of the calling rank."""
        return self._coords_of(self.rank_of(current()))

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self._dims)

    dim = ndim

    @property
    def topo(self) -> tuple[list[int], list[bool], list[int]]:
        """``(dims, periods, coords)``."""
        return self.Get_topo()


def _as_cart(vr: Any, comm: Any, dims: list[int], periods: list[bool]) -> Cartcomm:
    """The shared Cartcomm with *comm*'s context and group."""
    ctx = ("cart", comm.context)
    cart = vr.engine.comms.get(ctx)
    if cart is None:
        from .comm import _KIND_GROUP
        cart = Cartcomm(ctx, _KIND_GROUP, comm.members(vr), name=f"{comm.Get_name()}.cart")
        cart._dims = tuple(dims)
        cart._periods = tuple(bool(p) for p in periods)
        vr.engine.comms[ctx] = cart
    return cart


def create_cart(comm: Intracomm, dims: Sequence[int], periods: Sequence[bool] | None = None,
                reorder: bool = False) -> Intracomm:
    """``comm.Create_cart``: ranks beyond ``prod(dims)`` get ``COMM_NULL``."""
    from .. import MPI
    vr = current()
    dims = [int(d) for d in dims]
    if periods is None:
        periods = [False] * len(dims)
    if len(periods) != len(dims):
        raise ValueError(f"Create_cart: {len(periods)} periods for {len(dims)} dims")
    need = math.prod(dims)
    size = comm.size_of(vr)
    if any(d < 1 for d in dims) or need > size:
        raise MPIUsageError(f"rank {vr.rank}: Create_cart(dims={dims}): needs {need} ranks, "
                            f"communicator has {size}")
    me = comm.rank_of(vr)
    sub = CommManagement.Split(comm, 0 if me < need else MPI.UNDEFINED, me)
    if not sub:
        return MPI.COMM_NULL
    return _as_cart(vr, sub, dims, list(periods))
