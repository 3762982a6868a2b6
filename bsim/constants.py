"""MPI's constants and bsim's handle kinds, in one leaf module (it imports nothing of bsim).

The engine (matching, collective rules) and the mpi4py surface (``bsim.MPI``,
``bsim.mpi``) both use these, so they live below both.  Values follow MPICH
where a program could notice them (``PROC_NULL = -1``, ``ANY_SOURCE = -2``, as
mpi4py's ``MPI`` module on MPICH has them); ``bsim.MPI`` re-exports MPI's names
here with mpi4py's spelling.
``COLLECTIVE``, ``WORLD_CONTEXT``, ``SELF_CONTEXT``, :class:`CommKind` and
:class:`ReqKind` are bsim's own and stay out of ``bsim.MPI``.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    "ANY_SOURCE", "ANY_TAG", "PROC_NULL", "ROOT", "UNDEFINED", "TAG_UB", "COLLECTIVE",
    "WORLD_CONTEXT", "SELF_CONTEXT", "COMM_TYPE_SHARED", "CART", "GRAPH", "DIST_GRAPH",
    "IDENT", "CONGRUENT", "SIMILAR", "UNEQUAL", "THREAD_SINGLE", "THREAD_FUNNELED",
    "THREAD_SERIALIZED", "THREAD_MULTIPLE", "SUCCESS", "ERR_OTHER", "KEYVAL_INVALID",
    "ERR_TYPE", "ERR_COMM", "ERR_GROUP", "ERR_OP", "ERR_ARG", "ERR_REQUEST", "ERR_INFO",
    "ERR_INFO_KEY", "ERR_INFO_VALUE", "ERR_INFO_NOKEY", "ERR_KEYVAL", "ERR_ERRHANDLER",
    "ERR_TRUNCATE", "ERR_IN_STATUS", "ERR_PENDING",
    "IN_PLACE", "BOTTOM", "ORDER_C", "ORDER_FORTRAN", "CommKind", "ReqKind",
]

# -- point-to-point wildcards and null process --------------------------------------------
ANY_SOURCE = -2          # MPICH's values (mpi4py on MPICH: PROC_NULL -1, ANY_SOURCE -2)
ANY_TAG = -1
PROC_NULL = -1
ROOT = -3
TAG_UB = 2**29 - 1       # MPICH's (536870911): a larger tag is ERR_TAG, as there
UNDEFINED = -32766
COLLECTIVE = -3          # the source of a collective's request, in reports

# -- array orders of Create_subarray (MPICH's values) --------------------------------------
ORDER_C = 56
ORDER_FORTRAN = 57

# -- communicators -------------------------------------------------------------------------
WORLD_CONTEXT = 0        # point-to-point context of COMM_WORLD (its collectives use 1)
SELF_CONTEXT = 2
COMM_TYPE_SHARED = 1
GRAPH, CART, DIST_GRAPH = 1, 2, 3   # Get_topology(), MPICH's numbers; UNDEFINED for none
IDENT, CONGRUENT, SIMILAR, UNEQUAL = 0, 1, 2, 3   # Comm.Compare, Group.Compare

# -- environment ---------------------------------------------------------------------------
THREAD_SINGLE, THREAD_FUNNELED, THREAD_SERIALIZED, THREAD_MULTIPLE = 0, 1, 2, 3
SUCCESS = 0
ERR_OTHER = 15             # MPICH's MPI_ERR_OTHER (16 is MPI_ERR_INTERN)
# MPI error classes as mpi4py 4.1.2 on MPICH numbers them (checked against bsim.MPI's table
# in tests/test_errors.py); an MPIUsageError carries one (bsim/errors.py)
ERR_TYPE, ERR_COMM, ERR_GROUP, ERR_OP, ERR_ARG, ERR_REQUEST = 3, 5, 8, 9, 12, 19
ERR_INFO, ERR_INFO_KEY, ERR_INFO_VALUE, ERR_INFO_NOKEY = 28, 29, 30, 31
ERR_KEYVAL, ERR_ERRHANDLER = 48, 80
ERR_TAG, ERR_RANK, ERR_ROOT = 4, 6, 7
ERR_TRUNCATE, ERR_IN_STATUS, ERR_PENDING = 14, 17, 18
ERR_SESSION = 75
KEYVAL_INVALID = -1


class _InPlace:
    """``MPI.IN_PLACE``: the receive buffer is also the send buffer."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MPI.IN_PLACE"


class _Bottom:
    """``MPI.BOTTOM``: absolute addresses; a placeholder of ``count`` elements in bsim."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MPI.BOTTOM"


IN_PLACE = _InPlace()
BOTTOM = _Bottom()


class CommKind(IntEnum):
    """Which ranks a communicator object stands for (see ``bsim.mpi.comms.comm.Comm``)."""

    WORLD = 0    # every rank, in world order
    SELF = 1     # the calling rank alone
    GROUP = 2    # an explicit group of world ranks (Dup, Split, Create...)
    NULL = 3     # COMM_NULL


class ReqKind(IntEnum):
    """What a request stands for: a send, a receive, or nothing left to do."""

    SEND = 0
    RECV = 1
    DONE = 2
