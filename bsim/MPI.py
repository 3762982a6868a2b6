"""``bsim.MPI``: the mpi4py-compatible namespace seen by simulated programs.

Inside a simulation ``from mpi4py import MPI`` resolves to this module, so
unmodified mpi4py programs run on virtual ranks.  Names, keywords and
constants follow mpi4py (``docs/architecture.md``); ``Wtime()`` returns the
calling rank's simulated clock.
"""

from __future__ import annotations

import math

from .constants import (
    ANY_SOURCE,
    ANY_TAG,
    BOTTOM,
    CART,
    COMM_TYPE_SHARED,
    CONGRUENT,
    DIST_GRAPH,
    ERR_OTHER,
    GRAPH,
    IDENT,
    IN_PLACE,
    KEYVAL_INVALID,
    PROC_NULL,
    ROOT,
    SIMILAR,
    SUCCESS,
    TAG_UB,
    THREAD_FUNNELED,
    THREAD_MULTIPLE,
    THREAD_SERIALIZED,
    THREAD_SINGLE,
    UNDEFINED,
    UNEQUAL,
)
from .engine.rank import current, current_or_none
from .errors import MPIUsageError
from .mpi.collectives.ops import (
    BAND,
    BOR,
    BXOR,
    LAND,
    LOR,
    LXOR,
    MAX,
    MAXLOC,
    MIN,
    MINLOC,
    NO_OP,
    OP_NULL,
    PROD,
    REPLACE,
    SUM,
    Op,
)
from .mpi.comms.comm import (
    COMM_NULL,
    COMM_SELF,
    COMM_WORLD,
    Cartcomm,
    Comm,
    Distgraphcomm,
    Graphcomm,
    Intercomm,
    Intracomm,
    Topocomm,
)
from .mpi.data.datatypes import PREDEFINED, Datatype
from .mpi.management.groups import GROUP_EMPTY, GROUP_NULL, Group
from .mpi.p2p.message import MESSAGE_NO_PROC, MESSAGE_NULL
from .mpi.p2p.message import MatchedMessage as Message
from .mpi.requests.request import REQUEST_NULL, Prequest, Request, Status
from .version import __version__

__all__ = [
    "Errhandler", "ERRHANDLER_NULL", "ERRORS_ABORT", "ERRORS_ARE_FATAL", "ERRORS_RETURN",
    "COMM_WORLD", "COMM_SELF", "COMM_NULL", "REQUEST_NULL", "Comm", "Intracomm", "Intercomm",
    "Request",
    "Prequest", "Message", "MESSAGE_NO_PROC", "MESSAGE_NULL",
    "Status", "Datatype", "ANY_SOURCE", "ANY_TAG", "PROC_NULL", "UNDEFINED", "TAG_UB", "ROOT",
    "IN_PLACE", "BOTTOM", "Wtime", "Wtick", "Get_processor_name", "Compute_dims", "Pcontrol",
    "Init", "Finalize", "Is_initialized", "Is_finalized", "Get_version", "Query_thread",
    "THREAD_SINGLE", "THREAD_FUNNELED", "THREAD_SERIALIZED", "THREAD_MULTIPLE", "Exception",
    "SUCCESS", "ERR_OTHER", "Op", "SUM", "PROD", "MAX", "MIN", "LAND", "LOR", "LXOR", "BAND",
    "BOR", "BXOR", "MAXLOC", "MINLOC", "REPLACE", "NO_OP", "OP_NULL", "Group", "GROUP_EMPTY",
    "GROUP_NULL", "IDENT", "CONGRUENT", "SIMILAR", "UNEQUAL", "COMM_TYPE_SHARED", "CART", "GRAPH",
    "DIST_GRAPH", "Cartcomm", "Topocomm", "Graphcomm", "Distgraphcomm", "KEYVAL_INVALID",
    "Init_thread", "Get_library_version",
    "NotSimulatedError",
] + list(PREDEFINED)

Exception = MPIUsageError  # mpi4py's MPI.Exception: our usage errors

globals().update(PREDEFINED)
# error handlers; handle values; mpi4py's private datatype helpers that mpi4py.util.dtlib
# calls (bsim/mpi/data/datatype_lookup.py); pickling, MPI.buffer and the internals
# mpi4py.util calls (bsim/mpi/data/pickling.py); MPICH's handle values; Grequest
from .mpi.common.errhandlers import (  # noqa: E402
    ERRHANDLER_NULL,
    ERRORS_ABORT,
    ERRORS_ARE_FATAL,
    ERRORS_RETURN,
    Errhandler,
)
from .mpi.common.handles import _addressof, _handleof, _sizeof  # noqa: E402, F401 - bsim.MPI's
from .mpi.data.datatype_lookup import (  # noqa: E402, F401 - names of bsim.MPI
    _typealign,
    _typecode,
    _typedict,
    _typedict_c,
    _typedict_f,
)
from .mpi.data.pickling import (  # noqa: E402, F401 - names of bsim.MPI
    Alloc_mem,
    Free_mem,
    Pickle,
    _comm_lock,
    _comm_lock_table,
    _commctx_inter,
    _commctx_intra,
    _set_abort_status,
    buffer,
    pickle,
)
from .mpi.handle_constants import VALUES as _HANDLE_VALUES  # noqa: E402, F401 - MPICH's values
from .mpi.requests.generalized import Grequest  # noqa: E402, F401 - generalized requests

memory = buffer   # mpi4py's older name of the same type

# error classes and codes, info objects, addresses, ports, sessions, MPI-IO, one-sided
# communication, buffered-mode sends (bsim/mpi/p2p/bsend.py), and every other public name of
# mpi4py.MPI, so that any program imports; the families bsim does not simulate raise
# NotSimulatedError where they are used (bsim/mpi/common/namespace.py).
from .mpi.common.error_codes import (  # noqa: E402, F401 - error classes, codes, strings
    Add_error_class,
    Add_error_code,
    Add_error_string,
    Get_error_class,
    Get_error_string,
    Remove_error_class,
    Remove_error_code,
    Remove_error_string,
)
from .mpi.common.info import INFO_ENV, INFO_NULL, Info  # noqa: E402, F401 - info objects
from .mpi.common.initialization import (  # noqa: E402, F401 - MPI.Init and thread levels
    Init, Init_thread, Is_initialized, Query_thread)
from .mpi.common.namespace import NAMES as _REST  # noqa: E402
from .mpi.common.namespace import NotSimulatedError  # noqa: E402
from .mpi.data.addresses import Aint_add, Aint_diff, Get_address  # noqa: E402, F401
from .mpi.dynamic.connect import (  # noqa: E402, F401 - ports and names
    Close_port,
    Lookup_name,
    Open_port,
    Publish_name,
    Unpublish_name,
)
from .mpi.dynamic.sessions import SESSION_NULL, Session  # noqa: E402, F401 - sessions
from .mpi.io.file import FILE_NULL, File  # noqa: E402, F401 - MPI-IO (docs/io.md)
from .mpi.io.views import Register_datarep  # noqa: E402, F401
from .mpi.onesided.window import WIN_NULL, Win  # noqa: E402, F401
from .mpi.p2p.bsend import (  # noqa: E402, F401 - names of bsim.MPI
    BUFFER_AUTOMATIC,
    Attach_buffer,
    BufferAutomaticType,
    Detach_buffer,
    Flush_buffer,
    Iflush_buffer,
)

globals().update({k: v for k, v in _REST.items() if k not in globals()})
# attribute keys, as mpi4py has them: the values come from Comm.Get_attr
# (bsim/mpi/common/attributes.py)
from .mpi.common.attributes import PREDEFINED_KEYS as _KEYS  # noqa: E402

globals().update(_KEYS)


WTIME_SPIN = 1_000_000
"""Calls of :func:`Wtime` in a row by one rank at one simulated time that mean a busy-wait."""

_last_wtime: list[float] = [0, -1.0, 0]   # id of the last caller, its clock, calls in a row


def Wtime() -> float:
    """The calling rank's simulated clock, in seconds.

    Only ``add_time`` and MPI calls advance a rank's clock, so a loop that waits for
    ``Wtime()`` to move (``while MPI.Wtime() - t0 < 1: pass``) would never end: after
    :data:`WTIME_SPIN` calls in a row at one time the call raises ``MPIUsageError``.
    Ranks run one at a time, so the rank that spins is the only caller meanwhile.
    """
    vr = current()
    t = vr.clock
    last = _last_wtime
    if last[1] == t and last[0] == id(vr):
        last[2] += 1
        if last[2] >= WTIME_SPIN:
            last[2] = 0
            raise MPIUsageError(
                f"rank {vr.rank}: MPI.Wtime() returned {t!r} {WTIME_SPIN:,} times in a row: "
                f"only add_time and MPI calls advance a rank's simulated clock, so a loop "
                f"waiting for Wtime to move never ends (charge the wait with bsim.add_time)")
    else:
        last[0], last[1], last[2] = id(vr), t, 1
    return t


def Wtick() -> float:
    """Resolution of ``Wtime`` (simulated time is a float)."""
    return 1e-9


def Get_processor_name() -> str:
    """Name of the simulated node the calling rank runs on."""
    vr = current()
    node_of = getattr(vr.engine.network, "node_of", None)
    node = node_of(vr.rank) if node_of is not None else vr.rank
    return f"node{node}"


def Compute_dims(nnodes: int, dims: int | list[int]) -> list[int]:
    """Balanced Cartesian dimensions for *nnodes* processes (MPI_Dims_create).

    *dims* is the number of dimensions or a list where non-zero entries are
    fixed.  The free dimensions get the prime factors of the remaining count,
    largest first, each to the currently smallest dimension; the result is
    non-increasing among free entries, as MPICH and Open MPI return.
    """
    def bad(why: str) -> MPIUsageError:   # MPI.Exception ERR_DIMS, as MPICH's (11)
        return MPIUsageError(f"Compute_dims: {why}", error_class=11)

    if isinstance(dims, int):
        if dims < 0:
            raise bad(f"negative number of dimensions {dims}")
        dims = [0] * dims
    dims = list(dims)
    if not dims:   # no dimensions: nothing to fill (MPICH returns them, whatever nnodes)
        return dims
    if nnodes < 1:
        raise bad(f"nnodes must be >= 1, got {nnodes}")
    fixed = math.prod(d for d in dims if d > 0)
    if any(d < 0 for d in dims) or nnodes % fixed:
        raise bad(f"{nnodes} processes cannot fill fixed dims {dims}")
    free = [i for i, d in enumerate(dims) if d == 0]
    rest = nnodes // fixed
    if not free:
        if rest != 1:
            raise bad(f"dims {dims} do not multiply to {nnodes}")
        return dims
    factors = []
    n, p = rest, 2
    while p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    if n > 1:
        factors.append(n)
    sizes = [1] * len(free)
    for f in sorted(factors, reverse=True):
        i = min(range(len(sizes)), key=lambda k: sizes[k])
        sizes[i] *= f
    sizes.sort(reverse=True)
    for i, s in zip(free, sizes):
        dims[i] = s
    return dims


def Pcontrol(level: int) -> None:
    """Profiling control (a no-op)."""


def Finalize() -> None:
    """Finalize MPI for the calling rank: any later MPI call of that rank is an error."""
    vr = current()
    vr.finalized = True


def Is_finalized() -> bool:
    """Whether the calling rank has called :func:`Finalize`."""
    vr = current_or_none()
    return vr is not None and bool(vr.finalized)   # (a C char when compiled)


def Get_version() -> tuple[int, int]:
    """What the MPI library reports at run time (MPI 4.1 Sec. 9.1.1): (5, 0), as MPICH
    5.0.2 answers under mpi4py 4.1.2, against which bsim is compared; ``MPI.VERSION`` and
    ``MPI.SUBVERSION`` stay 4 and 1, as mpi4py 4.1.2 gives them there (the standard the
    API mirrors).  What is not simulated is listed in ``docs/mpi_coverage.md``."""
    return (5, 0)


def Is_thread_main() -> bool:
    """Whether the caller runs on the host's main thread, where every virtual rank runs."""
    import threading
    return threading.current_thread() is threading.main_thread()


def Get_hw_resource_info() -> Info:
    """MPI 4.1's hardware resource information of the calling process: its simulated
    node, as ``mpi_hw_resource_type = mpi_shared_memory`` (the one resource type
    ``Split_type`` guides by) and the node's name (``Get_processor_name``)."""
    return Info.Create({"mpi_hw_resource_type": "mpi_shared_memory",
                        "mpi_shared_memory": Get_processor_name()})


def Get_abi_version() -> tuple[int, int]:
    """The MPI ABI version: ``(-1, -1)``, bsim follows no binary ABI (MPI 5.0's
    ``MPI_Abi_get_version`` says so for an implementation without one)."""
    return (-1, -1)


def Get_abi_info() -> Info:
    """The sizes of the address, count and offset integers (``mpi_aint_size``, ...),
    as ``MPI.AINT``, ``MPI.COUNT`` and ``MPI.OFFSET`` have them."""
    names = globals()   # the datatypes come from bsim/mpi/common/namespace.py
    return Info.Create({f"mpi_{k}_size": str(names[k.upper()].Get_size())
                        for k in ("aint", "count", "offset")})


def Get_abi_fortran_info() -> Info:
    """Fortran ABI information: ``INFO_NULL`` (bsim has no Fortran binding)."""
    return INFO_NULL


def Get_library_version() -> str:
    """Name of the MPI library: bsim."""
    return f"bsim {__version__} (simulated MPI)"
