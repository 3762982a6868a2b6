"""OS and network noise: models that stretch ``add_time`` and delay messages.

Compute noise implements the engine's ``noise`` hook
(:class:`bsim.engine.hooks.ComputeNoise`): ``stretch(rank, start, seconds)`` returns
how long *seconds* of work started at *start* take on the rank's node while
the OS steals the CPU.  All ranks of a node see the same noise (a daemon stops the
node), unless ``core=K`` puts the daemons on one core: then only the rank on core ``K``
is slowed.  Ranks are on the nodes the run's network puts them on (``layout=network``:
:class:`bsim.engine.noise_base.OnNodes`) when the network places ranks; otherwise they
fill the first ``ranks_per_node`` cores of each node (default: all ``cores_per_node``;
node ``rank // ranks_per_node``, core ``rank % ranks_per_node``), so with
``ranks_per_node=3,cores_per_node=4,core=3`` the daemons run on the idle core and meet
no rank: the ASCI Q lesson (three processes of a four-core node run clean while the
fourth core absorbs the daemons).  A ``ranks_per_node`` or ``layout=block`` that groups
ranks otherwise than the network is refused (:func:`bsim.engine.noise_base.check_block_agrees`).

* :class:`PeriodicNoise` (``periodic:period=1e-3,duration=2.5e-5``): a daemon
  runs for *duration* every *period* on each node, from the node's phase
  ``phi`` (busy on ``[phi + k*period, phi + k*period + duration)`` for every
  integer k).  ``phase=random`` (default) draws ``phi`` uniformly in
  ``[0, period)`` per node from *seed*; a number gives every node that phase
  (co-scheduled daemons).  Stolen fraction ``duration / period``.
* :class:`bsim.engine.detour_noise.DetourNoise` (``detour:rate=10,mean=1e-4,seed=1``):
  detours arrive on each node as a Poisson process of *rate* per second and last
  *duration* seconds (fixed) or an exponential time of mean *mean*; a detour arriving
  during another waits for it (an M/G/1 queue), so the stolen fraction is
  ``rate * mean`` (< 1).

Both are exact: work *w* started at *t* ends at the first time *E* with
``t + w + busy([t, E)) = E``, where ``busy`` is the daemon/detour time
overlapping the interval (modeling tutorial, "Computational Noise"; Petrini et al.,
SC03).  For the periodic model this is closed-form (:meth:`PeriodicNoise.end`).

Determinism: random draws come from a counter-based generator
(:func:`uniform`, SplitMix64 of the key) keyed by ``(seed, node, ...)``, so results
never depend on the order of calls.

Network noise (``net:mean=1e-6,prob=1,seed=1``) is
:class:`bsim.engine.network_noise.NoisyNetwork`, drawn from the same generator.
"""

from __future__ import annotations

import math
from typing import Any

from netmodels.spec import SpecError, parse_spec

from .detour_noise import DetourNoise
from .noise_base import OnNodes, _check_core, _check_cores, _check_rpn, check_block_agrees, uniform

__all__ = ["uniform", "OnNodes", "PeriodicNoise", "DetourNoise", "CombinedNoise",
           "build_noise", "parse_noise", "NOISE_KINDS"]

_CORES_UNKNOWN = 1 << 30   # bsim run's check before the run: any core number passes


class PeriodicNoise(OnNodes):
    """Periodic OS daemons: *duration* seconds every *period* seconds on each node."""

    name = "periodic"

    def __init__(self, period: float, duration: float, phase: float | str = "random",
                 seed: int = 0, cores_per_node: int = 1, core: int | None = None,
                 ranks_per_node: int | None = None) -> None:
        if not (math.isfinite(period) and period > 0):
            raise ValueError(f"periodic noise: period must be > 0 seconds, got {period!r}")
        if not (0 <= duration < period):
            raise ValueError(f"periodic noise: duration must be in [0, period), "
                             f"got {duration!r} (period {period!r})")
        if isinstance(phase, str) and phase != "random":
            raise ValueError(f"periodic noise: phase must be seconds or 'random', got {phase!r}")
        self.period, self.duration = float(period), float(duration)
        self.phase, self.seed = phase, int(seed)
        self.cores_per_node = _check_cores(cores_per_node)
        self.core = _check_core(core, self.cores_per_node)
        self.ranks_per_node = _check_rpn(ranks_per_node, self.cores_per_node)
        self._phases: dict[int, float] = {}

    def node_phase(self, node: int) -> float:
        """The node's phase in ``[0, period)``: the start of one of its daemon runs."""
        phi = self._phases.get(node)
        if phi is None:
            if self.phase == "random":
                phi = uniform(self.seed, node, 0x5EED) * self.period
            else:
                phi = float(self.phase) % self.period
            self._phases[node] = phi
        return phi

    def end(self, node: int, t: float, work: float) -> float:
        """Completion time of *work* seconds started at *t* on *node* (closed form).

        In cycle coordinates (``x = (t - phi) mod period``) the daemon holds
        ``[0, d)`` and the CPU is free on ``[d, P)``, ``a = P - d`` per cycle.
        From a free-segment start ``s``, work ``w`` ends at
        ``s + n*P + (w - n*a)`` with ``n = ceil(w/a) - 1`` whole cycles skipped.
        Boundaries met within ``1e-12 * period`` count as met, so decimal
        inputs (0.1 ms of 1 ms) give the hand-computed answer.
        """
        if work <= 0.0:
            return t
        P, d = self.period, self.duration
        if d == 0.0:
            return t + work
        a = P - d
        eps = 1e-12 * P     # boundaries met within eps count as met (decimal inputs)
        rel = t - self.node_phase(node)
        k = math.floor(rel / P)
        x = max(rel - k * P, 0.0)            # position in the cycle, [0, P)
        if x < d - eps:                      # inside a daemon run: free at cycle + d
            s = t + (d - x)
        else:                                # in the free part: r seconds left
            r = P - x
            if work <= r + eps:
                return t + work
            work -= r
            s = t + r + d
        n = max(math.ceil(work / a - 1e-12) - 1, 0)
        rest = work - n * a
        if rest > a + eps:                   # rounding of the division
            n += 1
            rest -= a
        return s + n * P + rest

    def spec(self) -> str:
        """Spec string that rebuilds this model."""
        return (f"periodic:period={self.period!r},duration={self.duration!r},"
                f"phase={self.phase},seed={self.seed},cores_per_node={self.cores_per_node}"
                + (f",core={self.core}" if self.core is not None else "")
                + self.layout_spec())

    def __repr__(self) -> str:
        return f"<PeriodicNoise {self.spec()}>"


class CombinedNoise:
    """Several compute-noise models at once: each stretches the previous one's duration."""

    def __init__(self, models: list[Any]) -> None:
        self.models = list(models)

    def stretch(self, rank: int, start: float, seconds: float) -> float:
        """Apply every model in turn (later models also delay earlier models' noise)."""
        for m in self.models:
            seconds = m.stretch(rank, start, seconds)
        return seconds

    def spec(self) -> str:
        """The models' spec strings joined by ``;``."""
        return ";".join(m.spec() for m in self.models)

    def __repr__(self) -> str:
        return f"<CombinedNoise {self.spec()}>"


NOISE_KINDS = {
    "periodic": "period=S,duration=S[,phase=S|random][,seed=N][,cores_per_node=C][,core=K]"
                "[,ranks_per_node=R|,layout=network|block]",
    "detour": "rate=PER_S,(mean=S|duration=S)[,seed=N][,cores_per_node=C][,interval=S]"
              "[,core=K][,ranks_per_node=R|,layout=network|block]",
    "net": "mean=S[,prob=P][,seed=N]  (extra per-message delay, exponential)",
}


def parse_noise(spec: str) -> tuple[str, dict[str, Any]]:
    """``"periodic:period=1e-3,duration=2.5e-5"`` -> ``("periodic", {...})``; checks names."""
    kind, kw = parse_spec(spec, "noise spec")
    if kind == "network":
        kind = "net"
    if kind not in NOISE_KINDS:
        raise SpecError(f"unknown noise model {kind!r} in {spec!r}; valid: "
                        + "; ".join(f"{k}:{v}" for k, v in NOISE_KINDS.items()))
    if "cores" in kw:
        kw["cores_per_node"] = kw.pop("cores")
    for key, value in kw.items():   # a word where a number belongs: name the key
        number = _NUMBERS.get(key)
        if number is not None and (isinstance(value, bool) or not isinstance(value, number)):
            if not (key == "phase" and value == "random"):
                kind_of = "an integer" if number is int else "a number"
                raise SpecError(f"noise spec {spec!r} (--noise): {key} must be {kind_of}, "
                                f"got {value!r}")
    return kind, kw


# the noise parameters that are numbers, and their type (float: int or float)
_NUMBERS: dict[str, Any] = {
    "period": (int, float), "duration": (int, float), "phase": (int, float),
    "rate": (int, float), "mean": (int, float), "prob": (int, float),
    "interval": (int, float), "seed": int, "cores_per_node": (int, float), "core": int,
    "ranks_per_node": int}


def build_noise(specs: str | list[str] | None, cores_per_node: int | None = None,
                placement: list[int] | None = None, layout_known: bool = True
                ) -> tuple[Any, dict[str, Any] | None]:
    """Build compute noise and network-noise parameters from spec strings.

    *specs* is one spec, a ``;``-separated list, or a list of them.  Returns
    ``(compute_noise_or_None, net_kwargs_or_None)``; wrap the network with
    ``NoisyNetwork(net, **net_kwargs)``.  *cores_per_node* is the default of
    the compute models' ``cores_per_node`` (the machine's).  *placement*, the node of
    each rank when the run's network places ranks, is their layout: a ``ranks_per_node``
    or ``layout=block`` that groups the ranks otherwise is refused (a daemon must stop
    the ranks that share a node in the run), one that agrees is the same layout, and a
    given ``cores_per_node`` must hold the most ranks the network puts on a node.
    Raises ValueError naming the bad spec or parameter.  *layout_known* False is the
    check before the run (``bsim run``): the machine's cores and the network's placement
    are not known yet, so ``layout=network``, ``core=K`` and ``ranks_per_node`` are
    checked against them later, by :func:`bsim.simulate`.
    """
    if specs is None:
        return None, None
    items = [specs] if isinstance(specs, str) else list(specs)
    flat = [s.strip() for item in items for s in item.split(";") if s.strip()]
    models: list[Any] = []
    net: dict[str, Any] | None = None
    for spec in flat:
        kind, kw = parse_noise(spec)
        try:
            if kind == "net":
                if net is not None:
                    raise ValueError("network noise given twice")
                net = dict(kw)
                _check_keys(spec, net, ("mean", "prob", "seed"))
                continue
            if cores_per_node is not None:
                kw.setdefault("cores_per_node", cores_per_node)
            elif not layout_known:   # the run's cores come later: check the rest now
                kw.setdefault("cores_per_node", _CORES_UNKNOWN)
            layout = kw.pop("layout", None)
            if layout not in (None, "block", "network"):
                raise ValueError(f"noise spec {spec!r}: layout must be network or block, "
                                 f"got {layout!r}")
            if layout == "network" and placement is None and layout_known:
                raise ValueError(f"noise spec {spec!r}: layout=network needs a network that "
                                 f"places ranks on nodes (torus, fat-tree, twolevel, ...)")
            cls = PeriodicNoise if kind == "periodic" else DetourNoise
            model = cls(**kw)
            if placement is not None:
                if layout == "block" or (layout is None and "ranks_per_node" in kw):
                    asked = ("layout=block" if layout == "block"
                             else f"ranks_per_node={model.ranks_per_node}")
                    check_block_agrees(spec, model.ranks_per_node, asked, placement)
                model.place(placement)
            models.append(model)
        except TypeError as exc:   # a missing or unknown parameter
            reason = str(exc).split("__init__() ", 1)[-1]
            raise ValueError(f"noise spec {spec!r}: {reason}; {kind} takes "
                             f"{NOISE_KINDS[kind]}") from None
    compute = None if not models else models[0] if len(models) == 1 else CombinedNoise(models)
    return compute, net


def _check_keys(spec: str, kw: dict[str, Any], valid: tuple[str, ...]) -> None:
    unknown = sorted(set(kw) - set(valid))
    if unknown:
        raise SpecError(f"noise spec {spec!r}: unknown parameter(s) {', '.join(unknown)}; "
                         f"valid: {', '.join(valid)}")
    if "mean" not in kw:
        raise ValueError(f"noise spec {spec!r}: needs mean=SECONDS")
