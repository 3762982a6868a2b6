"""Persistent point-to-point requests: ``Send_init``, ``Ssend_init``, ``Rsend_init``,
``Recv_init`` (MPI 4.1 Sec. 3.9).

Each checks its peer and tag at the call, as MPICH does, and returns a
:class:`~bsim.mpi.requests.request.Prequest` whose ``Start`` posts the operation as its
nonblocking form would (:mod:`.calls`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...constants import ANY_SOURCE, ANY_TAG, PROC_NULL
from ...engine.rank import VirtualRank, current
from ..data.buffers import parse_buffer
from ..requests.request import RECV, SEND, Prequest
from .calls import _buf_send, _check_dest, _check_source, _irecv

if TYPE_CHECKING:
    from ..comms.comm import Comm

__all__ = ["Send_init", "Ssend_init", "Rsend_init", "Recv_init"]


def _check_init(comm: Comm, peer: Any, tag: Any, call: str, send: bool) -> VirtualRank:
    """The calling rank, after checking a persistent call's peer and tag at the call (MPI
    4.1 Sec. 3.9: MPICH refuses them there, with ``ERR_RANK``/``ERR_TAG``, not at
    ``Start``)."""
    vr = current()
    if peer != PROC_NULL:
        (_check_dest if send else _check_source)(comm, vr, peer, tag, call)
    return vr


def Send_init(comm: Comm, buf: Any, dest: int, tag: int = 0) -> Prequest:
    """Persistent standard-mode send (start with ``Start``)."""
    return Prequest(_check_init(comm, dest, tag, "Send_init", True), SEND, "Send_init",
                    lambda req: _buf_send(comm, buf, dest, tag, "Send_init", False, req))


def Ssend_init(comm: Comm, buf: Any, dest: int, tag: int = 0) -> Prequest:
    """Persistent synchronous-mode send."""
    return Prequest(_check_init(comm, dest, tag, "Ssend_init", True), SEND, "Ssend_init",
                    lambda req: _buf_send(comm, buf, dest, tag, "Ssend_init", True, req))


def Rsend_init(comm: Comm, buf: Any, dest: int, tag: int = 0) -> Prequest:
    """Persistent ready-mode send (a standard send here: the receive is posted)."""
    return Prequest(_check_init(comm, dest, tag, "Rsend_init", True), SEND, "Rsend_init",
                    lambda req: _buf_send(comm, buf, dest, tag, "Rsend_init", False, req))


def Recv_init(comm: Comm, buf: Any, source: int = ANY_SOURCE, tag: int = ANY_TAG) -> Prequest:
    """Persistent receive (start with ``Start``)."""
    vr = _check_init(comm, source, tag, "Recv_init", False)
    info = parse_buffer(vr, buf, "Recv_init")
    return Prequest(vr, RECV, "Recv_init",
                    lambda req: _irecv(comm, vr, info, False, source, tag, "Recv_init", req))
