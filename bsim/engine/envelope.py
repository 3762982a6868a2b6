"""A network model seen through a per-message envelope: every message is a few bytes longer.

Real MPI libraries put a header in front of each message (source, tag,
communicator, size: 16 to 64 bytes), so the wire carries ``s + envelope``
bytes for an ``s``-byte payload.  The protocols' ``envelope`` parameter
(default 0: the papers' models have none) wraps the run's network in
:class:`Enveloped`, which adds it to every size the protocol asks about;
received sizes, truncation checks and the result's byte counts stay the
payload's.  SimGrid's SMPI moves 16 bytes more than the payload per message
(measured: +16 ns per message at 1 GB/s), so the comparison with it
(``docs/validation.md``) uses ``envelope=16``.
"""

from __future__ import annotations

from typing import Any

from netmodels.base import NetworkModel, Rank, SimTime

__all__ = ["Enveloped"]


class Enveloped(NetworkModel):
    """*inner* with ``envelope`` bytes added to every message size.

    ``cost(src, dst, s) = inner.cost(src, dst, s + envelope)`` and likewise for
    ``wire``, ``gap`` and the overheads; everything else is the inner model's.
    """

    name = "enveloped"

    def __init__(self, inner: NetworkModel, envelope: int) -> None:
        self.inner = inner
        self.envelope = int(envelope)

    def place_more(self, nranks: int) -> None:
        self.inner.place_more(nranks)

    def placement(self) -> list[int] | None:
        return self.inner.placement()

    def __getattr__(self, attr: str) -> Any:
        # only reached for attributes this adapter lacks: the inner model's
        if attr == "inner" or "inner" not in self.__dict__:
            raise AttributeError(attr)
        return getattr(self.__dict__["inner"], attr)

    def cost(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        return self.inner.cost(src, dst, nbytes + self.envelope)

    def wire(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        return self.inner.wire(src, dst, nbytes + self.envelope)

    def gap(self, src: Rank, nbytes: int) -> SimTime:
        return self.inner.gap(src, nbytes + self.envelope)

    def send_overhead(self, nbytes: int) -> SimTime:
        return self.inner.send_overhead(nbytes + self.envelope)

    def recv_overhead(self, nbytes: int) -> SimTime:
        return self.inner.recv_overhead(nbytes + self.envelope)

    def pair_send_overhead(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        return self.inner.pair_send_overhead(src, dst, nbytes + self.envelope)

    def pair_recv_overhead(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        return self.inner.pair_recv_overhead(src, dst, nbytes + self.envelope)

    def min_cost(self) -> SimTime:
        return self.inner.min_cost()

    def min_wire(self) -> SimTime:
        return self.inner.min_wire()

    def spec(self) -> str:
        return self.inner.spec()
