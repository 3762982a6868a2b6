"""Random OS detours that queue: Poisson arrivals served one after another by the CPU.

``detour:rate=10,mean=1e-4,seed=1`` (:class:`DetourNoise`): on each node, detours
(daemon wake-ups, interrupts) arrive as a Poisson process of *rate* per second and last
an exponential time of mean *mean* (or a fixed *duration*).  A detour arriving while
another runs waits its turn (a daemon woken during another runs after it), so the OS
holds the CPU over the busy periods of a single-server FIFO queue fed by the arrivals,
an M/G/1 queue (M/M/1 for exponential lengths; Kleinrock, *Queueing Systems* Vol. 1,
Ch. 5), and the CPU time stolen is the sum of the detours.  Over a long time the stolen
fraction is the queue's utilisation

    rho = rate * E[length]          (rate * mean, or rate * duration)

which is how noise is measured and quoted (Petrini, Kerbyson, Pakin, "The Case of the
Missing Supercomputer Performance", SC03: the noise of a node is the CPU time its
daemons and interrupts take).  ``rho >= 1`` is refused: the queue would never empty and
the CPU never be free.

Work *w* started at *t* ends at the first *E* with ``E = t + w + busy([t, E))``, busy
being the queue's busy time (the modeling tutorial, "Computational Noise").

Exactness and determinism: time is cut into intervals of *interval* seconds (default:
4 expected detours each); the arrivals of (node, interval i) are drawn from
``(seed, node, i, j)`` only (:func:`bsim.engine.noise_base.uniform`), so they never
depend on who asks first.  The queue starts empty at t = 0 and is served forward: the
time ``F_i`` at which the detours arrived before ``i * interval`` are all done is
``F_0 = 0`` and ``F_{i+1} = serve(F_i, arrivals of interval i)``, where each arrival
``a`` of length ``s`` starts at ``max(a, f)`` and frees the CPU at ``f = start + s``.
``F_i`` is kept every :attr:`DetourNoise.CHECKPOINT` intervals per node, so the first
query at time *t* on a node costs the ``rate * t`` draws of its history and later
queries only the intervals they cover.  The interval must hold between
``MIN_PER_INTERVAL`` and ``MAX_PER_INTERVAL`` expected detours: the cost of a query grows
as ``1 / interval`` (empty intervals) and as ``rate * interval`` (detours a query scans).
"""

from __future__ import annotations

import math

from .noise_base import OnNodes, _check_core, _check_cores, _check_rpn, _exponential, uniform

__all__ = ["DetourNoise"]

Segment = tuple[float, float]   # (start, end) of a busy stretch of the CPU, seconds


class DetourNoise(OnNodes):
    """Poisson detours of *rate*/s, fixed or exponential lengths, queued on each node.

    The stolen fraction of the CPU is ``rate * mean`` (``rate * duration``), which must
    be < 1 (module docstring: an M/G/1 queue's utilisation; Petrini et al., SC03).
    """

    name = "detour"
    CHECKPOINT = 64              # intervals between the stored F_i of a node
    MIN_PER_INTERVAL = 1e-2      # expected detours per interval, rate * interval
    MAX_PER_INTERVAL = 1e3

    def __init__(self, rate: float, mean: float | None = None, duration: float | None = None,
                 seed: int = 0, cores_per_node: int = 1, interval: float | None = None,
                 core: int | None = None, ranks_per_node: int | None = None) -> None:
        if not (isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0):
            raise ValueError(f"detour noise: rate must be > 0 per second, got {rate!r}")
        if (mean is None) == (duration is None):
            raise ValueError("detour noise: give exactly one of mean= (exponential "
                             "durations) or duration= (fixed)")
        length = mean if mean is not None else duration
        if not (isinstance(length, (int, float)) and math.isfinite(length) and length >= 0):
            raise ValueError(f"detour noise: detour length must be >= 0 s, got {length!r}")
        rho = rate * length
        if rho >= 1:
            raise ValueError(f"detour noise: rate x {'mean' if mean is not None else 'duration'}"
                             f" = {rho:.6g} >= 1: the detours would keep the CPU busy forever "
                             f"(the stolen fraction of the CPU, rate x length, must be < 1)")
        self.rate, self.mean, self.duration = float(rate), mean, duration
        self.fixed = float(length)   # the detour length when durations are fixed
        self.seed, self.cores_per_node = int(seed), _check_cores(cores_per_node)
        self.core = _check_core(core, self.cores_per_node)
        self.ranks_per_node = _check_rpn(ranks_per_node, self.cores_per_node)
        if interval is None:
            interval = 4.0 / self.rate
        per = self.rate * interval if isinstance(interval, (int, float)) else math.nan
        if not self.MIN_PER_INTERVAL <= per <= self.MAX_PER_INTERVAL:
            raise ValueError(f"detour noise: interval must hold {self.MIN_PER_INTERVAL:g} to "
                             f"{self.MAX_PER_INTERVAL:g} expected detours (rate x interval; "
                             f"the cost grows as 1/interval and as rate x interval), got "
                             f"interval={interval!r} (rate x interval = {per:.3g})")
        self.interval = float(interval)
        self._served: dict[tuple[int, int], tuple[list[Segment], float]] = {}
        self._marks: dict[int, list[float]] = {}   # node -> F_{c * CHECKPOINT}, c = 0, 1, ...

    @property
    def stolen_fraction(self) -> float:
        """``rate * mean`` (or ``rate * duration``): the long-run fraction of the CPU."""
        return self.rate * self.fixed

    def arrivals(self, node: int, i: int) -> list[tuple[float, float]]:
        """``(arrival, length)`` of the detours arriving on *node* in interval *i*."""
        if i < 0:
            return []
        L = self.interval
        lo, hi = i * L, (i + 1) * L
        out: list[tuple[float, float]] = []
        t, j = lo, 0
        while True:
            t += _exponential(1.0 / self.rate, self.seed, node, i, 2 * j)
            if t >= hi:
                return out
            if self.mean is not None:
                length = -self.mean * math.log(uniform(self.seed, node, i, 2 * j + 1))
            else:
                length = self.fixed
            out.append((t, length))
            j += 1

    def _serve(self, node: int, i: int, free_at: float) -> tuple[list[Segment], float]:
        """The busy segments of interval *i* and ``F_{i+1}``, given ``F_i`` = *free_at*.

        The first segment is the queue left from earlier intervals, ``[i*L, F_i)``; each
        arrival then starts at ``max(arrival, F)`` (it waits for the detours before it).
        Cached per (node, i): ``F_i`` is a function of (node, i) alone.
        """
        key = (node, i)
        got = self._served.get(key)
        if got is not None:
            return got
        if len(self._served) > 1 << 16:
            self._served.clear()
        lo = i * self.interval
        segments: list[Segment] = [(lo, free_at)] if free_at > lo else []
        f = free_at
        for a, s in self.arrivals(node, i):
            if a <= f and segments:          # queued behind the running detour
                f += s
                segments[-1] = (segments[-1][0], f)
            else:                            # the CPU was free: a new busy segment
                f = a + s
                segments.append((a, f))
        got = (segments, f)
        self._served[key] = got
        return got

    def free_at(self, node: int, i: int) -> float:
        """``F_i``: when the detours arriving on *node* before ``i * interval`` are done
        (0 for ``i <= 0``: the queue starts empty at t = 0)."""
        if i <= 0:
            return 0.0
        got = self._served.get((node, i - 1))
        if got is not None:
            return got[1]
        C = self.CHECKPOINT
        marks = self._marks.setdefault(node, [0.0])
        while len(marks) <= i // C:          # extend the node's history forward
            f, base = marks[-1], (len(marks) - 1) * C
            for k in range(base, base + C):
                f = self._serve(node, k, f)[1]
            marks.append(f)
        f = marks[i // C]
        for k in range(i - i % C, i):
            f = self._serve(node, k, f)[1]
        return f

    def end(self, node: int, t: float, work: float) -> float:
        """Completion time of *work* seconds started at *t* on *node*.

        Walks the busy segments in time order from the interval holding *t*: a segment
        that starts after the current time leaves ``start - cur`` free seconds before it,
        one that holds the current time pushes it to its end.  Segments of interval k
        start at or after ``k * interval``, so once ``cur + rem <= k * interval`` the
        work is done.
        """
        if work <= 0.0:
            return t
        L = self.interval
        cur, rem = t, work
        k = max(math.floor(t / L), 0)
        f = self.free_at(node, k)
        while True:
            segments, f = self._serve(node, k, f)
            for a, b in segments:
                if b <= cur:
                    continue
                if a > cur:
                    free = a - cur
                    if rem <= free:
                        return cur + rem
                    rem -= free
                cur = b
            k += 1
            if cur + rem <= k * L:
                return cur + rem

    def spec(self) -> str:
        """Spec string that rebuilds this model."""
        length = f"mean={self.mean!r}" if self.mean is not None else f"duration={self.duration!r}"
        return (f"detour:rate={self.rate!r},{length},seed={self.seed},"
                f"cores_per_node={self.cores_per_node},interval={self.interval!r}"
                + (f",core={self.core}" if self.core is not None else "")
                + self.layout_spec())

    def __repr__(self) -> str:
        return f"<DetourNoise {self.spec()}>"
