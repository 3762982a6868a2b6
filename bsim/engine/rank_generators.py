"""Each virtual rank its own global random generators, as separate processes have.

Under ``mpiexec`` every rank is a process with its own ``random`` module and its own
``numpy.random`` legacy generator: ``random.seed(rank)`` then ``random.random()`` draws
the rank's own stream, whatever the other ranks seed or draw meanwhile.  Every virtual
rank shares one interpreter, so the modules' one hidden instance (``random._inst``,
``numpy.random.mtrand._rand``) would be seeded and drawn by all ranks in turn.

While a run is going, :class:`RankGenerators` puts a dispatcher in place of each of the
module-level functions that draw from or set that instance (``random.random``,
``random.seed``, ``numpy.random.rand``, ``numpy.random.seed``, ``get_state``...): called
from a rank (or one of its threads, which share their process's generator) it calls the
same method of the rank's own instance, made on the rank's first use as a fresh
interpreter makes it (seeded from the operating system's entropy, so an unseeded program
draws differently on each rank, as under ``mpiexec``); called from the host it is the
module's own.  Names bound before the run (``from random import random`` in a module
imported before :func:`bsim.simulate`) keep the shared instance; a file program's own
imports happen in the ranks, after the swap.  ``numpy.random.default_rng()`` and
``random.Random()`` make new generators in any case, so they need nothing.

Cost: nothing at a rank switch; one dictionary look-up per call of a swapped function.
"""

from __future__ import annotations

import functools
import random
import sys
from collections.abc import Callable
from typing import Any

import greenlet

from .rank import RankGreenlet

__all__ = ["RankGenerators"]


def _rank_of_caller() -> int | None:
    g = greenlet.getcurrent()
    return g.vrank.rank if g.__class__ is RankGreenlet else None


def _bound_names(module: Any, instance: Any) -> list[str]:
    """The module attributes that are methods bound to *instance* (sorted)."""
    return sorted(name for name, value in vars(module).items()
                  if getattr(value, "__self__", None) is instance and callable(value))


class _Generator:
    """One module's hidden instance, one per rank while armed."""

    def __init__(self, modules: list[Any], host: Any, make: Callable[[], Any],
                 extra: dict[str, str]) -> None:
        self.modules = modules   # where the functions are found (numpy.random, its mtrand)
        self.host = host         # the module's own instance: the host's calls use it
        self.make = make
        self.extra = extra       # module function -> method of the instance it stands for
        self.by_rank: dict[int, Any] = {}
        self.saved: list[tuple[Any, str, Any]] = []

    def instance(self) -> Any:
        rank = _rank_of_caller()
        if rank is None:
            return self.host
        inst = self.by_rank.get(rank)
        if inst is None:
            inst = self.by_rank[rank] = self.make()
        return inst

    def dispatcher(self, name: str, method: str, original: Any) -> Callable[..., Any]:
        @functools.wraps(original)
        def dispatch(*args: Any, **kwargs: Any) -> Any:
            return getattr(self.instance(), method)(*args, **kwargs)
        return dispatch

    def arm(self) -> None:
        made: dict[int, Callable[..., Any]] = {}
        for module in self.modules:
            names = {n: n for n in _bound_names(module, self.host)}
            names.update({k: v for k, v in self.extra.items() if hasattr(module, k)})
            for name, method in names.items():
                original = getattr(module, name)
                fn = made.get(id(original))
                if fn is None:
                    fn = made[id(original)] = self.dispatcher(name, method, original)
                self.saved.append((module, name, original))
                setattr(module, name, fn)

    def disarm(self) -> None:
        for module, name, original in reversed(self.saved):
            setattr(module, name, original)
        self.saved.clear()
        self.by_rank.clear()


def _numpy_generator() -> _Generator | None:
    """numpy.random's legacy generator (``mtrand._rand``), when numpy.random imports."""
    try:
        import numpy.random
        from numpy.random import mtrand
    except ImportError:   # pragma: no cover - numpy is a core dependency
        return None
    host = getattr(mtrand, "_rand", None)
    if host is None:   # pragma: no cover
        return None
    extra = {"seed": "seed", "sample": "random_sample", "ranf": "random_sample"}
    return _Generator([numpy.random, mtrand], host, numpy.random.RandomState, extra)


class RankGenerators:
    """Swaps the module-level generator functions for per-rank dispatchers during a run
    (``arm`` / ``disarm``)."""

    def __init__(self) -> None:
        self.generators: list[_Generator] = []

    def arm(self) -> None:
        if self.generators:
            return
        inst = getattr(random, "_inst", None)
        if inst is not None:
            self.generators.append(_Generator([random], inst, random.Random, {}))
        if "numpy" in sys.modules:
            numpy_gen = _numpy_generator()
            if numpy_gen is not None:
                self.generators.append(numpy_gen)
        for gen in self.generators:
            gen.arm()

    def disarm(self) -> None:
        for gen in self.generators:
            gen.disarm()
        self.generators.clear()
