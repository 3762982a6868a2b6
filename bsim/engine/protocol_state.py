# cython: annotation_typing=False
"""``ProtocolState``: what a protocol's per-message steps read, the base of ``Protocol``.

A protocol's engine, network model, contention layer and probe credits are kept in this
base (the rules are in ``protocol_base.py`` and ``protocols.py``), so that a compiled build
makes it an extension type (``protocol_state.pxd``, ``bsim.engine.compiled.TYPED``) whose
fields the hot path reads as C fields.  :meth:`ProtocolState.net_cost` is the network
model's ``cost``; when the model is exactly Hockney's (``netmodels.flat.Hockney``, not a
subclass) it computes Hockney's ``T(s) = latency + s / bandwidth`` itself, from the
latency and bandwidth read when the protocol is bound, with the same floating-point
operations as ``Hockney.cost``, so the result is the same to the last bit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from netmodels.flat import Hockney

try:   # compiled, CPython's conversion of an int to a C double in its place (the .pxd)
    import cython
except ImportError:
    from . import pure_cython as cython

if not cython.compiled:
    int_as_double = float

if TYPE_CHECKING:
    from netmodels.base import NetworkModel

__all__ = ["ProtocolState", "DEFERRED"]

#: ``Request.cost`` of a receive whose bytes move only when the receiver handles it
#: (``bsim`` protocol with contention): ``settle`` asks the protocol to ``transfer`` it.
DEFERRED = -1.0


class ProtocolState:
    """The fields of a protocol that its per-message steps read (``Protocol`` documents
    them), and the network cost of one message.

    ``exact_bsim``: the protocol is ``BsimProtocol`` itself, not a subclass, so the send
    path and :func:`~bsim.engine.matching.deliver` run its steps as the module functions
    ``bsim_send`` and ``bsim_matched`` (C calls when compiled) instead of its methods.
    """

    __slots__ = ("engine", "net", "fabric", "credits", "envelope", "poll_time", "hockney",
                 "latency", "bandwidth", "send_network", "send_seconds", "exact_bsim")

    def use_network(self, net: NetworkModel) -> None:
        """Charge messages on *net* (:meth:`net_cost`); a Hockney model's latency and
        bandwidth are read now."""
        self.net = net
        self.hockney = type(net) is Hockney
        self.latency = net.latency if self.hockney else 0.0
        self.bandwidth = net.bandwidth if self.hockney else 1.0

    def net_cost(self, src: int, dst: int, nbytes: int) -> float:
        """``net.cost(src, dst, nbytes)``: the time of one message of *nbytes* from world
        rank *src* to *dst* (0 to itself under Hockney's model, as ``Hockney.cost``)."""
        if self.hockney:
            if src == dst:
                return 0.0
            if cython.compiled and type(nbytes) is int:   # its value, no float object made
                size = int_as_double(nbytes)
            else:
                size = nbytes
            return self.latency + size / self.bandwidth
        return self.net.cost(src, dst, nbytes)
