# cython: annotation_typing=False
"""The point-to-point hot path, flattened: :func:`flat_call`.

``Isend``, ``Irecv``, ``Send``, ``Recv`` and ``Sendrecv`` (``calls.py``) first offer their
call here.  A placeholder (:class:`~bsim.mpi.data.buffers.Buffer`) or a numpy array sent
to or received from (no wildcard) a plain int rank of the world or of an
intracommunicator's group, with a plain int tag in range, is posted without the general
path's parsing, conversions and communicator lookups: the request and the message are
made, and the protocol's send or the matching's post called, directly.  To or from
``PROC_NULL`` (a halo's edges), the request is made complete at once.  Anything else
(including every bad argument) gets None back and takes the general path, which checks
and raises; ``tests/test_p2p_fast_path.py`` holds the two to the same predictions.

Compiled (``fast_path.pxd``, ``bsim/engine/compiled.py``), every step is a C call:
greenlet's C API for the current greenlet and the rank's slot read in C
(``rank.pxd``), the request and the message made without a type call
(``new_request``, ``new_message``), ``bsim_send`` when the run's protocol is exactly
``BsimProtocol``, and ``MPI.COMM_WORLD`` itself recognised by identity, its kind and
context known without reading them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from greenlet import getcurrent

from ...constants import ANY_TAG, PROC_NULL, TAG_UB, WORLD_CONTEXT, CommKind
from ...engine.matching import Message, post_receive
from ...engine.protocols import bsim_send
from ...engine.rank import RankGreenlet
from ...engine.request_state import new_request
from ...engine.synchronous import SELF_EAGER_LIMIT
from ..data.buffers import Buffer, parse_buffer
from ..requests.request import SEND, Request

try:   # C types of the hot path's locals when compiled (bsim/engine/compiled.py, TYPED)
    import cython
except ImportError:
    from ...engine import pure_cython as cython

if TYPE_CHECKING:
    from ...constants import ReqKind
    from ...engine.rank import VirtualRank
    from ..comms.comm import Comm
    from ..comms.comm_identity import CommIdentity  # (compiled: cimported, fast_path.pxd)
    from ..data.buffer_info import BufInfo

__all__ = ["flat_call", "know_world"]

if not cython.compiled:   # compiled, C calls in their place (fast_path.pxd)
    from ...engine.rank import running_rank, vrank_of  # (not called as Python: flat_call)
    green_current = getcurrent
    new_message = Message     # (its C twin takes the same arguments)
    int_or_least = int        # (not called as Python)

_WORLD, _GROUP = CommKind.WORLD, CommKind.GROUP
_NDARRAY = np.ndarray   # (a global: compiled, a module attribute is a lookup per call)
_world: Any = None      # MPI.COMM_WORLD, given by know_world
_NULL_ENVELOPE = (PROC_NULL, ANY_TAG, 0)   # a receive from PROC_NULL: its status
# flat_call compares a rank and a tag with literals (compiled, as C integers): the largest
# rank MPI can name (a C int), MPICH's largest tag and PROC_NULL
if TAG_UB != 536870911 or PROC_NULL != -1:
    raise ImportError(f"bsim.mpi.p2p.fast_path: flat_call's literals are not TAG_UB {TAG_UB} "
                      f"and PROC_NULL {PROC_NULL}")


def know_world(comm: Comm) -> None:
    """Recognise *comm*, ``MPI.COMM_WORLD``, by identity: its kind is the world's and its
    context :data:`~bsim.constants.WORLD_CONTEXT`, fixed when it is made.  Called by
    ``bsim.mpi.comms.comm`` once it has made it (that module imports this one)."""
    global _world
    _world = comm


def _group_peer(comm: CommIdentity, vr: VirtualRank, crank: int) -> int:
    """World rank of rank *crank* (>= 0) of an intracommunicator's group when the flattened
    path may take a call on it (in range, the caller a member); -1 otherwise."""
    if comm.kind is _GROUP and not comm.freed_by and crank < len(comm._group) \
            and vr.rank in comm._index and comm.group_p2p:
        return comm._group[crank]
    return -1


@cython.boundscheck(False)   # (compiled: its one list index, the peer's rank, is in range)
@cython.wraparound(False)
def flat_call(comm: Comm, buf: Any, peer: Any, tag: Any, call: str, kind: ReqKind,
              hand: bool = False) -> Request | None:
    """Post a send (*kind* ``SEND``) of *buf* to rank *peer* of *comm*, or a receive
    (``RECV``) from it, and return its request; None when the general path must take the
    call (module docstring).  *hand*: the request is handed to the program
    (``hand_out``, inlined: a nonblocking call)."""
    if cython.compiled:   # type() is Py_TYPE there; as Python, __class__ is the faster
        cls = type(buf)
        if type(peer) is not int or type(tag) is not int:
            return None
        ipeer = int_or_least(peer)   # C integers, compared in C (fast_path.pxd)
        itag = int_or_least(tag)
        # (MPI's ranks are C ints; a rank or tag beyond a C long long reads as the least)
        if not -1 <= ipeer <= 2147483647 or not 0 <= itag <= 536870911:
            return None
        vr = running_rank()   # the rank the engine switched into (rank.py)
        if vr is None:
            g = green_current()
            if type(g) is not RankGreenlet:
                return None
            vr = vrank_of(g)   # (a slot read in C: rank.pxd)
    else:
        g = green_current()
        cls = buf.__class__
        if g.__class__ is not RankGreenlet or peer.__class__ is not int \
                or tag.__class__ is not int or not 0 <= tag <= 536870911 or peer < -1:
            return None
        ipeer = peer
        itag = tag
        vr = g.vrank
    if cls is not Buffer and cls is not _NDARRAY:
        return None
    eng = vr.engine
    if vr.finalized or eng.measure is not None:
        return None
    if ipeer != -1:   # (PROC_NULL, on any communicator: no peer, as in calls._isend)
        if comm is _world:
            world = True
            ctx = WORLD_CONTEXT
        else:   # (compiled, its fields read in C: a Comm is a CommIdentity)
            ident = cython.cast(CommIdentity, comm, typecheck=True) if cython.compiled \
                else comm
            world = ident.kind is _WORLD
            ctx = ident.context
        if world and ipeer < eng.nranks and vr.world is None:
            wpeer = ipeer
        elif world:   # a rank beyond the world, or a spawned rank's: the general path
            return None
        else:
            wpeer = _group_peer(ident, vr, ipeer)
            if wpeer < 0:
                return None
        iw = wpeer   # (compiled, a C integer: the ranks list indexed in C)
    payload = None
    if cls is Buffer:   # (a BufInfo: compiled, not type-tested against its base)
        info = cython.cast(BufInfo, buf) if cython.compiled else buf
    else:   # an array: parsed (what is wrong raises as it would anyway)
        info = parse_buffer(vr, buf, call)
        if kind is SEND and info.mem is not None:
            payload = bytes(info.mem)
        elif info.mem is not None and info.mem.readonly:
            return None   # (_irecv refuses it)
    vr.ops += 1
    # compiled, the request and the message are made in C (request_state.pxd, matching.pxd)
    req = new_request(Request, vr, kind, call) if cython.compiled else Request(vr, kind, call)
    if ipeer == -1:   # complete at once, nothing sent or received (MPI 4.1 Sec. 3.11)
        if kind is not SEND:
            req.raw_envelope = _NULL_ENVELOPE
        req.resolve(vr.clock, 0.0, vr.clock)
    elif kind is SEND:
        nbytes = info.nbytes
        me = vr.rank if world else ident._index[vr.rank]
        msg = new_message(ctx, vr.rank, wpeer, me, itag, nbytes, payload, False)
        vr.msgs += 1
        sent = nbytes   # (compiled, a C integer added to the rank's C count)
        vr.nbytes += sent
        proto = eng.protocol
        dst = eng.ranks[iw]
        if proto.exact_bsim:   # BsimProtocol's send as a C call when compiled
            bsim_send(proto, vr, dst, msg, req, dst is vr and nbytes > SELF_EAGER_LIMIT)
        else:
            proto.send(vr, dst, msg, req, dst is vr and nbytes > SELF_EAGER_LIMIT)
    else:
        req.ctx = ctx
        req.src = wpeer
        req.tag = itag
        req.rinfo = info
        req.t_post = vr.clock
        post_receive(vr, req, not hand)   # not handed: a blocking receive
    if hand:
        req.handed = True
        vr.open_requests += 1
    return req
