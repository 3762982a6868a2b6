"""Flat (topology-free) network models: Hockney and LogGP.

Both charge the same time between any two distinct ranks.  A message from a
rank to itself costs nothing on the wire (it never leaves the process) in every
model of this package; overheads still apply under ``loggp``.
"""

from __future__ import annotations

from .base import NetworkModel, Rank, SimTime, check_nonnegative, check_positive, register

__all__ = ["Hockney", "LogGP", "Zero"]


@register
class Hockney(NetworkModel):
    """Hockney's model: ``T(s) = latency + s / bandwidth``.

    The BSIM paper (Sec. 3.C) models the PRIMEQUEST receive time as ``l + s/w`` with
    ``l = 40 us`` and ``w = 100 MB/s``.  Under the ``loggp`` protocol the model
    has no CPU overheads, the NIC is busy ``s / bandwidth`` per message and the
    wire time is ``latency + s / bandwidth``.
    """

    name = "hockney"
    parameters = {
        "latency": "seconds per message (l)",
        "bandwidth": "bytes per second (w)",
    }

    def __init__(self, latency: float = 1e-6, bandwidth: float = 1e9) -> None:
        check_nonnegative(self.name, latency=latency)
        check_positive(self.name, bandwidth=bandwidth)
        self.latency = float(latency)
        self.bandwidth = float(bandwidth)

    def cost(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        if src == dst:
            return 0.0
        return self.latency + nbytes / self.bandwidth

    def gap(self, src: Rank, nbytes: int) -> SimTime:
        return nbytes / self.bandwidth

    def wire(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        if src == dst:
            return 0.0
        return self.latency + nbytes / self.bandwidth

    def min_cost(self) -> SimTime:
        return self.latency


@register
class LogGP(NetworkModel):
    """LogGP (Alexandrov et al. 1995) as used by the MILC paper (Sec. IV, Table IV).

    * ``L``: wire latency (seconds), ``o``: CPU overhead per send and per
      receive (seconds), ``g``: minimum gap between two injections (seconds),
      ``G``: gap per byte (seconds per byte).
    * End-to-end time of one message: ``o + (s-1)*G + L + o``  (for ``s >= 1``).
    * The sender's NIC is busy ``max(g, (s-1)*G)`` per message.
    """

    name = "loggp"
    parameters = {
        "L": "wire latency, seconds",
        "o": "CPU overhead per send and per receive, seconds",
        "g": "minimum gap between injections, seconds",
        "G": "gap per byte, seconds/byte",
    }

    def __init__(self, L: float = 1e-6, o: float = 0.0, g: float = 0.0, G: float = 1e-9) -> None:
        check_nonnegative(self.name, L=L, o=o, g=g, G=G)
        self.L = float(L)
        self.o = float(o)
        self.g = float(g)
        self.G = float(G)

    def _bytes_time(self, nbytes: int) -> SimTime:
        return max(nbytes - 1, 0) * self.G

    def cost(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        if src == dst:
            return 2 * self.o
        return 2 * self.o + self._bytes_time(nbytes) + self.L

    def send_overhead(self, nbytes: int) -> SimTime:
        return self.o

    def recv_overhead(self, nbytes: int) -> SimTime:
        return self.o

    def gap(self, src: Rank, nbytes: int) -> SimTime:
        return max(self.g, self._bytes_time(nbytes))

    def inert(self, contention: bool, protocol: str) -> list[str]:
        if self.g and protocol != "loggp":   # only the loggp protocol spaces injections
            return [f"g={self.g!r} (only --protocol loggp spaces a rank's injections by g)"]
        return []

    def wire(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        if src == dst:
            return 0.0
        return self._bytes_time(nbytes) + self.L

    def min_cost(self) -> SimTime:
        return 2 * self.o + self.L

    def min_wire(self) -> SimTime:
        return self.L


@register
class Zero(NetworkModel):
    """A network where every message is free: isolates calculation and wait time.

    Used to check pipeline models (e.g. Sweep3D's ``(px + py - 1 + Nsweep - 1) * Tcpu``).
    Its lookahead is zero, so distributed runs refuse it.
    """

    name = "zero"
    parameters = {}

    def cost(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        return 0.0

    def wire(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        return 0.0

    def min_cost(self) -> SimTime:
        return 0.0
