"""Cartesian topologies (mpi4py's ``Create_cart`` and ``Cartcomm``'s methods).

Ranks are laid out in row-major (C) order: the last dimension varies fastest,
as MPI specifies.  ``reorder`` is accepted and ignored (ranks keep their order).
The functions are bound as methods of :class:`bsim.mpi.comms.comm.Cartcomm`
(``Create_cart`` of :class:`~bsim.mpi.comms.comm.Comm`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...constants import CART, ERR_ARG, ERR_RANK, PROC_NULL, UNDEFINED
from ...engine.rank import VirtualRank, current
from ...errors import MPIUsageError
from ..management import communicators as management

if TYPE_CHECKING:
    from ..comms.comm import Cartcomm, Comm, Intracomm

__all__ = ["Create_cart", "coords_of", "Get_coords", "Get_cart_rank", "Shift", "Sub"]


def _error(call: str, what: str, error_class: int = ERR_ARG) -> MPIUsageError:
    """The error of ``Cartcomm.<call>`` naming the calling rank: MPICH's classes
    (``ERR_ARG`` for a bad direction, coordinate or flag list, ``ERR_RANK`` for a rank)."""
    return MPIUsageError(f"rank {current().rank}: Cartcomm.{call}: {what}",
                         error_class=error_class)


def coords_of(cart: Cartcomm, rank: int) -> list[int]:
    """Coordinates of *rank* in the grid (row-major)."""
    coords = []
    for d in reversed(cart.cart_dims):
        coords.append(rank % d)
        rank //= d
    return coords[::-1]


def Get_coords(cart: Cartcomm, rank: int) -> list[int]:
    """Coordinates of *rank*."""
    size = math.prod(cart.cart_dims)
    if not 0 <= rank < size:
        raise _error(f"Get_coords({rank})", f"rank {rank} out of range 0..{size - 1}",
                     ERR_RANK)
    return coords_of(cart, rank)


def Get_cart_rank(cart: Cartcomm, coords: Sequence[int]) -> int:
    """Rank at *coords* (periodic dimensions wrap)."""
    if len(coords) != len(cart.cart_dims):
        raise _error(f"Get_cart_rank({list(coords)})", f"{len(coords)} coordinates for a "
                     f"grid of {len(cart.cart_dims)} dimensions")
    rank = 0
    for c, d, p in zip(coords, cart.cart_dims, cart.cart_periods):
        if p:
            c %= d
        elif not 0 <= c < d:
            raise _error(f"Get_cart_rank({list(coords)})", f"coordinate {c} outside "
                         f"non-periodic dimension of size {d}")
        rank = rank * d + c
    return rank


def Shift(cart: Cartcomm, direction: int, disp: int) -> tuple[int, int]:
    """``(source, dest)`` ranks *disp* steps along *direction* (PROC_NULL past an edge)."""
    ndims = len(cart.cart_dims)
    if not 0 <= direction < ndims:
        raise _error(f"Shift(direction={direction}, disp={disp})", f"direction {direction} "
                     f"out of range 0..{ndims - 1} (the grid has {ndims} dimension"
                     f"{'s' if ndims != 1 else ''})")
    me = coords_of(cart, cart.rank_of(current()))

    def neighbour(step: int) -> int:
        c = list(me)
        c[direction] += step
        d = cart.cart_dims[direction]
        if not cart.cart_periods[direction] and not 0 <= c[direction] < d:
            return PROC_NULL
        return cart.Get_cart_rank(c)

    return neighbour(-disp), neighbour(disp)


def Sub(cart: Cartcomm, remain_dims: Sequence[bool]) -> Cartcomm:
    """The sub-grid keeping the dimensions marked True (collective)."""
    if len(remain_dims) != len(cart.cart_dims):
        raise _error(f"Sub({list(remain_dims)})", f"{len(remain_dims)} flags for a grid of "
                     f"{len(cart.cart_dims)} dimensions")
    vr = current()
    me = cart.rank_of(vr)
    coords = coords_of(cart, me)
    color = 0
    for c, d, keep in zip(coords, cart.cart_dims, remain_dims):
        if not keep:
            color = color * d + c
    sub = management.Split(cart, color, me)
    dims = [d for d, keep in zip(cart.cart_dims, remain_dims) if keep]
    periods = [p for p, keep in zip(cart.cart_periods, remain_dims) if keep]
    return _as_cart(vr, sub, dims, periods)


def Get_topo(cart: Cartcomm) -> tuple[list[int], list[int], list[int]]:
    """``(dims, periods, coords)`` of the calling rank; periods as 0/1 ints, as MPI_Cart_get
    fills them and mpi4py returns them."""
    return (list(cart.cart_dims), [int(p) for p in cart.cart_periods],
            coords_of(cart, cart.rank_of(current())))


def Get_dim(cart: Cartcomm) -> int:
    """Number of dimensions."""
    return len(cart.cart_dims)


def Get_topology(cart: Cartcomm) -> int:
    """``CART``."""
    return CART


def dims(cart: Cartcomm) -> list[int]:
    """Grid extents."""
    return list(cart.cart_dims)


def periods(cart: Cartcomm) -> list[int]:
    """Periodicity per dimension."""
    return [int(p) for p in cart.cart_periods]   # 0/1, as mpi4py returns them


def coords(cart: Cartcomm) -> list[int]:
    """Coordinates of the calling rank."""
    return coords_of(cart, cart.rank_of(current()))


def ndim(cart: Cartcomm) -> int:
    """Number of dimensions."""
    return len(cart.cart_dims)


def topo(cart: Cartcomm) -> tuple[list[int], list[bool], list[int]]:
    """``(dims, periods, coords)``."""
    return cart.Get_topo()


def Create_cart(comm: Comm, dims: Sequence[int], periods: Sequence[bool] | bool | None = None,
                reorder: bool = False) -> Intracomm:
    """A Cartesian communicator over the first ``prod(dims)`` ranks (collective).

    Ranks beyond ``prod(dims)`` get ``COMM_NULL``.  Raises ValueError when
    *periods* and *dims* differ in length and :class:`MPIUsageError` when the
    grid needs more ranks than *comm* has.
    """
    vr = current()
    dims = [int(d) for d in dims]
    if periods is None or isinstance(periods, bool):   # one flag for every dimension
        periods = [bool(periods)] * len(dims)
    if len(periods) != len(dims):   # a ValueError, as mpi4py's
        raise MPIUsageError(f"rank {vr.rank}: Create_cart(dims={dims}): {len(periods)} periods "
                            f"for {len(dims)} dims", error_class=ERR_ARG)
    need = math.prod(dims)
    size = comm.size_of(vr)
    if any(d < 1 for d in dims) or need > size:
        raise MPIUsageError(f"rank {vr.rank}: Create_cart(dims={dims}): needs {need} ranks, "
                            f"communicator has {size}")
    me = comm.rank_of(vr)
    sub = management.Split(comm, 0 if me < need else UNDEFINED, me)
    if not sub:
        return sub
    return _as_cart(vr, sub, dims, list(periods))


def _as_cart(vr: VirtualRank, comm: Comm, dims: list[int], periods: list[bool]) -> Cartcomm:
    """The shared Cartcomm with *comm*'s context and group."""
    return comm.derive_cart(vr, ("cart", comm.context), comm.members(vr),
                            f"{comm.label}.cart", dims, periods)
