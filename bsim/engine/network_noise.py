"""Network noise: a network model whose messages take a random extra delay.

:class:`NoisyNetwork` wraps a network model and adds to ``cost`` and ``wire`` of the
k-th message from *src* to *dst* a delay drawn from ``(seed, src, dst, k)``
(``--noise net:mean=1e-6,prob=1,seed=1``): exponential of mean *mean* with
probability *prob*, else 0, from the counter-based generator of
`bsim.engine.noise_base` (the draws never depend on the order of calls).
"""

from __future__ import annotations

import math
from typing import Any

from netmodels.base import NetworkModel

from .noise_base import _exponential, uniform

__all__ = ["NoisyNetwork"]


class NoisyNetwork(NetworkModel):
    """A network model plus a random extra delay per message (network noise).

    The k-th call of ``cost`` (and, counted separately, of ``wire``) for the
    pair (src, dst) adds ``delay(src, dst, k)``: with probability *prob* an
    exponential of mean *mean* seconds, else 0, drawn from
    ``(seed, src, dst, k)``.  Everything else, including attributes such as
    ``node_of``, ``links`` or ``route``, is the inner model's.  ``min_cost`` is
    the inner one's (delays are >= 0, so it stays a lower bound).
    """

    name = "noisy"
    shared_state = ("its per-pair message counters would be advanced by whichever host "
                    "process asks for a cost, so draws would depend on the partition")

    def __init__(self, inner: NetworkModel, mean: float, prob: float = 1.0,
                 seed: int = 0) -> None:
        if not (math.isfinite(mean) and mean >= 0):
            raise ValueError(f"network noise: mean must be >= 0 seconds, got {mean!r}")
        if not 0 <= prob <= 1:
            raise ValueError(f"network noise: prob must be in [0, 1], got {prob!r}")
        self.inner, self.mean, self.prob, self.seed = inner, float(mean), float(prob), int(seed)
        self._count: dict[tuple[int, int, int], int] = {}

    def placement(self) -> list[int] | None:   # the inner's nodes, not the base's None
        return self.inner.placement()

    def __getattr__(self, attr: str) -> Any:
        # only reached for attributes this wrapper lacks: delegate to the inner model
        if attr == "inner" or "inner" not in self.__dict__:
            raise AttributeError(attr)
        return getattr(self.__dict__["inner"], attr)

    def delay(self, src: int, dst: int, k: int) -> float:
        """Extra seconds of the k-th message from *src* to *dst*."""
        if self.mean == 0.0:
            return 0.0
        if self.prob < 1.0 and uniform(self.seed, src, dst, k, 1) >= self.prob:
            return 0.0
        return _exponential(self.mean, self.seed, src, dst, k, 2)

    def _next(self, which: int, src: int, dst: int) -> float:
        key = (which, src, dst)
        k = self._count.get(key, 0)
        self._count[key] = k + 1
        return self.delay(src, dst, k)

    def prepare(self, nranks: int) -> None:
        self._count.clear()
        self.inner.prepare(nranks)

    def place_more(self, nranks: int) -> None:
        self.inner.place_more(nranks)   # the draws so far stand

    def cost(self, src: int, dst: int, nbytes: int) -> float:
        return self.inner.cost(src, dst, nbytes) + self._next(0, src, dst)

    def wire(self, src: int, dst: int, nbytes: int) -> float:
        return self.inner.wire(src, dst, nbytes) + self._next(1, src, dst)

    def send_overhead(self, nbytes: int) -> float:
        return self.inner.send_overhead(nbytes)

    def recv_overhead(self, nbytes: int) -> float:
        return self.inner.recv_overhead(nbytes)

    def pair_send_overhead(self, src: int, dst: int, nbytes: int) -> float:
        return self.inner.pair_send_overhead(src, dst, nbytes)

    def pair_recv_overhead(self, src: int, dst: int, nbytes: int) -> float:
        return self.inner.pair_recv_overhead(src, dst, nbytes)

    def gap(self, src: int, nbytes: int) -> float:
        return self.inner.gap(src, nbytes)

    def min_cost(self) -> float:
        return self.inner.min_cost()

    def min_wire(self) -> float:
        return self.inner.min_wire()

    def params(self) -> dict[str, Any]:
        return {**self.inner.params(), "noise_mean": self.mean, "noise_prob": self.prob,
                "noise_seed": self.seed}

    def spec(self) -> str:
        return f"{self.inner.spec()} + net:mean={self.mean!r},prob={self.prob!r},seed={self.seed}"

    def __repr__(self) -> str:
        return f"<NoisyNetwork {self.spec()}>"
