"""The skeleton registry: name -> program, parameters with defaults, rank count.

A skeleton module defines ``main(**params)`` (an mpi4py-style program whose
keyword defaults are the skeleton's defaults) and registers it with a help
line per parameter::

    def main(px: int = 32, py: int = 32, iterations: int = 10) -> float: ...

    SKELETON = register(Skeleton(
        name="halo2d", main=main, description="...",
        params={"px": Param("process columns"), "py": Param("process rows"),
                "iterations": Param("stencil sweeps")},
        ranks=lambda p: p["px"] * p["py"]))

Defaults are written once, in ``main``'s signature, and read from it; a
``Param`` names a default of its own only where ``bsim run`` must differ from
the program run under ``mpiexec`` (MILC's ``nprocs``: 0, the world size, for a
real run; 16 for ``bsim run milc_cg``).  Every keyword parameter of ``main``
needs a ``Param`` and every ``Param`` a keyword parameter, checked when the
skeleton registers.

``bsim run NAME --param k=v`` looks it up here.  Users add their own: a module
that calls :func:`register` when imported, named in ``$BSIM_SKELETONS``
(``BSIM_SKELETONS=mysk bsim run mysk``) or as an entry point of an installed
package (``[project.entry-points."bsim.skeletons"] mysk = "mypkg.mysk"``).

A skeleton whose parameters decide where ranks run (MILC's ``layout``) also
gives ``mapping``: a function
of the resolved parameters returning a rank->node mapping spec (or None),
which ``bsim run`` sets as the network model's ``mapping``
(:func:`bsim.cli.targets.apply_mapping`).
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bsim.machines.kernels import MachineKernel
from netmodels.registry import Registry

__all__ = ["Param", "Skeleton", "register", "get", "names", "grid", "BUILTIN_MODULES"]

# modules imported on first lookup so that their skeletons register themselves
BUILTIN_MODULES = ["skeletons.halo2d", "skeletons.sweep3d", "skeletons.milc", "skeletons.hpl",
                   "skeletons.phase", "skeletons.sage", "skeletons.dns3d"]


_FROM_MAIN: Any = inspect.Parameter.empty


def grid(nranks: int, ndims: int, *names: str) -> dict[str, int]:
    """A balanced process grid of *nranks* in *ndims* dimensions as ``{name: extent}``
    (MPI_Dims_create's rule: factors as equal as possible, largest first)."""
    from bsim.MPI import Compute_dims
    return dict(zip(names, Compute_dims(nranks, ndims), strict=True))


@dataclass(frozen=True)
class Param:
    """A skeleton parameter's help line; its default (and type) is ``main``'s.

    *default* is given only where ``bsim run`` must differ from ``main``'s own
    default (documented at the parameter).
    """

    help: str = ""
    default: Any = _FROM_MAIN
    minimum: float | None = None
    """Smallest valid value (checked for given values and defaults alike)."""


@dataclass(frozen=True)
class Skeleton:
    """A registered skeleton program."""

    name: str
    main: Callable[..., Any]
    description: str
    params: dict[str, Param] = field(default_factory=dict)
    ranks: Callable[[dict[str, Any]], int] | None = None
    mapping: Callable[[dict[str, Any]], str | None] | None = None
    """Resolved parameters -> rank->node mapping spec for the network model, or None."""
    machine_kernel: MachineKernel | None = None
    """How ``bsim run --machine M`` sets this skeleton's compute times from M (a table of
    M's file, else a generic model of M, else an error: ``bsim/machines/kernels.py``)."""
    scale: Callable[[int], dict[str, Any]] | None = None
    """``bsim run NAME -n N``: the parameters that give N ranks (a balanced process grid),
    used when the user set none of them."""
    flops: Callable[[dict[str, Any], list[Any]], float] | None = None
    """(resolved parameters, every rank's return value) -> floating-point operations of the
    whole run, when known: the result then states the achieved rate, and a rate above the
    machine's peak is an error."""
    partition: str | None = None
    """Under ``mpiexec -n K``, how its ranks are best spread over the host processes when
    the user does not say (``--partition``): ``"cyclic"`` for pipelines, whose wavefront
    would otherwise cross one host at a time (``docs/distributed.md``); None: ``block``."""
    assumed: dict[str, str] = field(default_factory=dict)
    """Parameter -> the compute it times, for compute times that stay an ASSUMED constant
    whatever the machine (PHASE's FFT flop time): ``--machine`` runs say so in the
    result's kernel model when the user did not set them."""
    defaults: dict[str, Any] = field(init=False, default_factory=dict)
    """Parameter -> default: ``main``'s keyword defaults (or the ``Param``'s own)."""

    def __post_init__(self) -> None:
        own = {k: p.default for k, p in inspect.signature(self.main).parameters.items()
               if p.default is not inspect.Parameter.empty}
        missing = sorted(set(own) - set(self.params))
        if missing:
            raise ValueError(f"skeleton {self.name!r}: main's keyword parameter(s) "
                             f"{', '.join(missing)} need a Param (help line)")
        extra = sorted(set(self.params) - set(own))
        if extra:
            raise ValueError(f"skeleton {self.name!r}: Param(s) {', '.join(extra)} are not "
                             f"keyword parameters of {self.main.__name__}()")
        self.defaults.update({k: own[k] if p.default is _FROM_MAIN else p.default
                              for k, p in self.params.items()})

    def resolve(self, given: dict[str, Any]) -> dict[str, Any]:
        """Defaults overridden by *given*; unknown names raise listing the valid ones."""
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            valid = ", ".join(sorted(self.params))
            raise ValueError(f"skeleton {self.name!r}: unknown parameter(s) "
                             f"{', '.join(unknown)}; valid: {valid}")
        out = dict(self.defaults)
        for k, v in given.items():
            out[k] = _coerce(self.name, k, v, self.defaults[k])
        for k, p in self.params.items():
            v = out[k]
            if isinstance(v, bool) and not isinstance(self.defaults[k], bool):
                raise ValueError(f"skeleton {self.name!r}: parameter {k}={v!r} is not a "
                                 f"number")
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"skeleton {self.name!r}: parameter {k}={v!r} must be a "
                                 f"finite number")
            if p.minimum is not None and isinstance(v, (int, float)) and v < p.minimum:
                raise ValueError(f"skeleton {self.name!r}: parameter {k}={v!r} must be >= "
                                 f"{p.minimum}")
        return out

    def describe(self) -> str:
        """Name, description and parameters with defaults, for ``bsim list skeletons``."""
        lines = [f"{self.name}: {self.description}"]
        for k, p in self.params.items():
            lines.append(f"    {k:<16} {self.defaults[k]!r:<14} {p.help}")
        return "\n".join(lines)


def _coerce(skel: str, key: str, value: Any, default: Any) -> Any:
    if not isinstance(value, str) or isinstance(default, str) or default is None:
        return value
    try:
        if isinstance(default, bool):
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
    except ValueError:
        raise ValueError(f"skeleton {skel!r}: parameter {key}={value!r} is not a "
                         f"{type(default).__name__}") from None
    return value


_REGISTRY: Registry[Skeleton] = Registry("skeleton", KeyError)
_loaded = False


def register(skeleton: Skeleton) -> Skeleton:
    """Add *skeleton* to the registry (names are unique)."""
    old = _REGISTRY.get(skeleton.name)
    if old is not None and old.main is skeleton.main:
        return old   # the module was imported again (e.g. run as __main__)
    return _REGISTRY.register(skeleton)


ENTRY_POINT_GROUP = "bsim.skeletons"
"""Installed packages register skeletons under this entry-point group (``name = "module"``)."""
ENV_MODULES = "BSIM_SKELETONS"
"""Comma-separated modules to import for their skeletons (``BSIM_SKELETONS=mysk,lab.sk``)."""


def _load_builtins() -> None:
    """Import the bundled skeleton modules, then the user's: the entry points of the group
    :data:`ENTRY_POINT_GROUP` and the modules named in ``$BSIM_SKELETONS`` (each module
    calls :func:`register` when imported)."""
    global _loaded
    if not _loaded:
        _loaded = True
        for mod in BUILTIN_MODULES:
            try:
                importlib.import_module(mod)
            except ModuleNotFoundError as exc:
                if exc.name != mod:   # only a skeleton module that does not exist yet is skipped
                    raise
        from importlib.metadata import entry_points
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            ep.load()
        import os
        for mod in filter(None, (m.strip() for m in os.environ.get(ENV_MODULES, "").split(","))):
            try:
                importlib.import_module(mod)
            except ModuleNotFoundError as exc:
                raise ValueError(f"${ENV_MODULES} names module {mod!r}, which cannot be "
                                 f"imported ({exc}); put its folder on PYTHONPATH") from None


def get(name: str) -> Skeleton:
    """The skeleton registered as *name*; raises ``KeyError`` listing valid names."""
    _load_builtins()
    return _REGISTRY.lookup(name)


def names() -> list[str]:
    """Registered skeleton names, sorted."""
    _load_builtins()
    return sorted(_REGISTRY)
