"""``simulate``: run a program on N virtual ranks and return the prediction."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import sys
import types
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from netmodels import build_network
from netmodels.base import NetworkModel
from netmodels.filesystem import build_filesystem
from netmodels.input_files import recording_inputs, records_inputs

from .engine.collective_rules import CollectiveCosts
from .engine.core import Engine
from .engine.fabric import build_fabric
from .engine.hooks import measure_compute
from .engine.host_memory import KIB_PER_RANK, check_rank_memory, reports_out_of_memory
from .engine.host_checks import fails_together
from .engine.leftovers import first_pending, first_unreceived
from .engine.matching import unreceived_messages
from .engine.model_defaults import model_settings
from .engine.network_noise import NoisyNetwork
from .engine.private_modules import PrivateModules
from .engine.protocols import Protocol, build_protocol
from .engine.rank_threads import cooperative_objects
from .machines import collective_spec, filesystem_spec, load_machine, naming_the_file, network_spec
from .machines.flags import note_network_flags, noted_flags
from .machines.layout import network_on_machine, record_nodes
from .mpi.common.rc import Rc
from .mpi.requests.request import Request
from .outputs.model_level import nearest_per_p_variant
from .outputs.result import Result, compute_spec, recorded_arguments

__all__ = ["simulate", "mpi4py_shim", "check_rank_memory", "KIB_PER_RANK", "DEFAULT_NETWORK"]

DEFAULT_NETWORK = "hockney:latency=1e-06,bandwidth=1000000000.0"
"""The network of a run that names none (``simulate`` and ``bsim run`` alike): Hockney,
1 us and 1 GB/s, a generic modern interconnect.  The papers' machines: ``--machine``."""

class _Mpi4pyShim(types.ModuleType):
    """The ``mpi4py`` package as a simulated program sees it."""

    MPI: types.ModuleType
    rc: Rc
    get_config: Callable[[], dict[str, str]]
    __version__: str


def _real_member(value: Any) -> bool:
    """A class or function of a real ``mpi4py.util``/``mpi4py.futures`` module (bound to the
    real MPI), as ``from mpi4py.futures import MPIPoolExecutor`` outside a run gives."""
    name = getattr(value, "__module__", None)
    return (isinstance(value, type) or inspect.isfunction(value)) and isinstance(name, str) \
        and name.startswith("mpi4py.") and name != "mpi4py.MPI" \
        and _real_submodule(sys.modules.get(name))


def _real_submodule(value: Any) -> bool:
    """A real ``mpi4py.util...`` module (bound to the real MPI), as imported outside a run."""
    return (isinstance(value, types.ModuleType) and value.__name__.startswith("mpi4py.")
            and value.__name__ != "mpi4py.MPI" and not isinstance(value, _Mpi4pyShim)
            and sys.modules.get(value.__name__) is value)


def _real_mpi_globals(program: Any, real: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The module globals of *program* and the names in them bound to the real mpi4py.

    A program whose module did ``from mpi4py import MPI`` before :func:`simulate`
    holds the real module: those names are rebound to bsim's for the run.  A
    real MPI object made at import time (``comm = MPI.COMM_WORLD``) cannot be:
    :class:`ValueError` names it.
    """
    glob = getattr(program, "__globals__", None)
    if not isinstance(glob, dict):
        return {}, []
    modules = {id(m) for m in real.values() if m is not None}
    names = [k for k, v in glob.items()
             if id(v) in modules or _real_submodule(v) or _real_member(v)]
    for key, value in glob.items():
        if type(value).__module__ == "mpi4py.MPI" and id(value) not in modules:
            raise ValueError(
                f"{getattr(program, '__module__', '?')}.{key} is a real mpi4py object "
                f"({type(value).__name__}) made when the module was imported; inside a "
                f"simulation every rank needs bsim's: get it inside the program (comm = "
                f"MPI.COMM_WORLD in main), or run the file with bsim run FILE.py")
    return glob, names


def _real_package_path(real_pkg: Any) -> list[str]:
    """Where the installed mpi4py's Python subpackages are (``[]`` when not installed).

    Inside a simulation ``import mpi4py.util.pkl5`` loads mpi4py's own pure-Python
    modules, whose ``from .. import MPI`` then gives ``bsim.MPI``.
    """
    if real_pkg is not None:
        return list(getattr(real_pkg, "__path__", []))
    try:
        spec = importlib.util.find_spec("mpi4py")
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec is not None else []


_REAL_HELPERS: dict[str, Any] = {}


def _real_helper(path: list[str], name: str) -> Any:
    """``mpi4py.get_include`` or ``mpi4py.profile`` of the installed package (they touch
    no MPI), loaded once under a private name; None without mpi4py."""
    if name not in _REAL_HELPERS:
        init = next((os.path.join(p, "__init__.py") for p in path
                     if os.path.isfile(os.path.join(p, "__init__.py"))), None)
        module = None
        if init is not None:
            spec = importlib.util.spec_from_file_location("_bsim_real_mpi4py", init)
            if spec is not None and spec.loader is not None:
                module = importlib.util.module_from_spec(spec)
                try:
                    spec.loader.exec_module(module)
                except Exception:   # noqa: BLE001, S110 - its relative imports at the end
                    pass            # fail outside the package: the helpers come first
        for key in ("get_include", "profile"):
            _REAL_HELPERS[key] = getattr(module, key, None)
    return _REAL_HELPERS[name]


def _rebind(glob: dict[str, Any], rebound: dict[str, Any], real: dict[str, Any], mpi: Any,
            pkg: Any) -> None:
    """Bind the program's names that hold the real mpi4py (its ``MPI``, package, a
    ``mpi4py.util`` module, a class of ``mpi4py.futures``) to bsim's for the run."""
    for k, v in rebound.items():
        if v is real.get("mpi4py.MPI"):
            glob[k] = mpi
        elif v is real.get("mpi4py"):
            glob[k] = pkg
        elif isinstance(v, types.ModuleType):   # mpi4py.util.pkl5 imported at module
            glob[k] = importlib.import_module(v.__name__)   # level: its copy on bsim's MPI
        else:   # a class or function of one (mpi4py.futures.MPIPoolExecutor)
            glob[k] = getattr(importlib.import_module(v.__module__), v.__qualname__)


@contextmanager
def mpi4py_shim(program: Any = None) -> Iterator[None]:
    """Make ``import mpi4py`` / ``from mpi4py import MPI`` give ``bsim.MPI`` meanwhile.

    Names in *program*'s module that already hold the real ``mpi4py`` or
    ``mpi4py.MPI`` (a module-level import, as real applications do) are bound
    to bsim's for the run and restored after: never silently real.
    """
    from . import MPI
    real = {k: sys.modules.get(k) for k in ("mpi4py", "mpi4py.MPI")}
    if real["mpi4py.MPI"] is MPI:   # already inside a shim
        real = {}
    glob, names = _real_mpi_globals(program, real)
    pkg = _Mpi4pyShim("mpi4py")
    outer = sys.modules.get("mpi4py")
    pkg.__path__ = (list(outer.__path__) if isinstance(outer, _Mpi4pyShim)   # mpi4py.util,
                    else _real_package_path(outer))                       # on bsim's MPI
    pkg.MPI = MPI
    pkg.__spec__ = importlib.machinery.ModuleSpec("mpi4py", None, is_package=True)
    pkg.__spec__.submodule_search_locations = list(pkg.__path__)   # python -m mpi4py
    init = next((os.path.join(p, "__init__.py") for p in pkg.__path__
                 if os.path.isfile(os.path.join(p, "__init__.py"))), None)
    if init is not None:
        pkg.__file__ = init   # the installed package's files (typing stubs, headers) are there
    pkg.__version__ = "4.0.0+bsim"
    pkg.rc = Rc()
    pkg.get_config = dict   # no MPI compiler wrappers behind bsim
    for name in ("get_include", "profile"):   # host-level helpers: the real package's
        helper = _real_helper(list(pkg.__path__), name)
        if helper is not None:
            setattr(pkg, name, helper)
    saved = {k: sys.modules.get(k) for k in ("mpi4py", "mpi4py.MPI", "mpi4py.rc")}
    submodules = {k: sys.modules.pop(k) for k in list(sys.modules)   # real mpi4py.util...
                  if k.startswith("mpi4py.") and k not in saved}
    sys.modules["mpi4py"] = pkg
    sys.modules["mpi4py.MPI"] = MPI
    sys.modules["mpi4py.rc"] = pkg.rc   # type: ignore[assignment]   # as mpi4py does
    rebound = {k: glob[k] for k in names}
    try:
        with cooperative_objects():   # their module-level locks and locals, as in a run
            _rebind(glob, rebound, real, MPI, pkg)
        yield
    finally:
        glob.update(rebound)
        for k in [k for k in sys.modules if k.startswith("mpi4py.") and k not in saved]:
            del sys.modules[k]                    # the run's mpi4py.util modules go
        sys.modules.update(submodules)
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def _plain_call(main: Callable[..., Any], args: tuple[Any, ...], kw: dict[str, Any]
                ) -> Callable[[Any], Any]:
    """``program(vr)`` calling ``main(*args, **kw)`` with the arguments written out.

    A call with literal arguments runs in the caller's C frame, where one with
    ``*args``/``**kw`` enters a new one (CPython 3.11), and every suspended rank's
    greenlet keeps a copy of those C frames: writing the call out makes each idle rank
    ~370 bytes smaller (``docs/benchmarks.md``).
    """
    if not all(isinstance(k, str) and k.isidentifier() for k in kw):
        return lambda vr: main(*args, **kw)
    names: dict[str, Any] = {"main": main}
    actual = []
    for i, a in enumerate(args):
        names[f"_a{i}"] = a
        actual.append(f"_a{i}")
    for i, (k, v) in enumerate(kw.items()):
        names[f"_k{i}"] = v
        actual.append(f"{k}=_k{i}")
    source = f"def program(vr):\n    return main({', '.join(actual)})\n"
    exec(compile(source, __file__, "exec"), names)   # bsim's own frame in tracebacks
    program: Callable[[Any], Any] = names["program"]
    return program


@records_inputs
@fails_together   # an error before the host processes meet reaches them all
@reports_out_of_memory
def simulate(main: Callable[..., Any], ranks: int,
             network: str | NetworkModel | None = None,
             protocol: str | Protocol | None = None,
             args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None,
             *, machine: str | None = None, kernel_model: str = "",
             flops: float | Callable[[list[Any]], float] | None = None,
             collectives: str | dict[str, str] | None = None,
             contention: str | None = None, level: str | None = None,
             filesystem: str | None = None, tracer: Any = None, noise: Any = None,
             progress: Callable[[Engine], None] | None = None,
             compute: str = "ignore", compute_scale: float = 1.0,
             name: str | None = None, params: dict[str, Any] | None = None,
             hosts: Any = None, partition: str = "block",
             max_sim_time: float | None = None, max_events: int | None = None,
             check_memory: bool = True, private_modules: bool = True) -> Result:
    """Run ``main(*args, **kwargs)`` on *ranks* virtual ranks; return a :class:`Result`.

    *network* is a model or a spec string (``"hockney:latency=1e-6,bandwidth=1e9"``,
    see ``bsim list networks``; default :data:`DEFAULT_NETWORK`, or *machine*'s network);
    *machine* names a preset or TOML file, with ``:VARIANT`` for one of its
    ``[network_variants]`` (``"power5:p1024"``), whose network and collectives are used
    where *network* and *collectives* are not given (a *network* spec beside it gets its
    ``cores_per_node`` as ``cores`` unless it says ``cores``, never more; more *ranks* than
    its ``[hardware] nodes`` hold are refused: ``bsim.machines.layout``); it, *kernel_model*
    (where the compute times came from) and the calibration flags of the fits the run takes
    from it (warned of: ``bsim/machines/flags.py``) are recorded in the result.  *flops* (the
    run's floating-point operations, when the program knows them, or a function of every
    rank's return value giving them) gives the result its achieved rate; on a *machine*
    with a peak, a rate above ``ranks * peak_flops_per_rank`` raises
    :class:`~bsim.errors.AbovePeakError`.  *protocol* is ``"bsim"`` (the BSIM paper's rules),
    ``"loggp[:...]"`` or ``"loggops[:...]"`` (``docs/protocols.md``); *contention* is
    ``"none"`` or ``"fluid[:...]"`` (``docs/networks.md``).  Naming neither runs the default
    model level, :data:`~bsim.engine.model_defaults.DEFAULT_PROTOCOL` with
    :data:`~bsim.engine.model_defaults.DEFAULT_CONTENTION` (the papers' rules without
    contention, chosen by measurement: ``docs/validation.md``, "Model levels"); a protocol
    named alone runs without contention (``protocol="bsim"``: the papers' level).  *level*
    names both at once (:data:`~bsim.engine.model_defaults.LEVELS`): ``"paper"`` (the
    papers' rules, no contention) or ``"smpi"`` (SimGrid SMPI's rules with its CM02
    sharing, the level that agrees with SMPI on ``docs/validation.md``'s cases); it is
    given alone, not beside *protocol* or *contention*.
    *collectives*
    chooses the cost source of collectives: ``"analytic"`` (default), ``"clog:c=..,d=.."``,
    ``"table:path=FILE"``, ``"algorithmic"`` (expanded into point-to-point
    messages), or a dict ``{"default": spec, "allreduce": spec, ...}``
    overriding per operation (see ``docs/collectives.md``).  Inside *main*, ``bsim.MPI`` (and
    ``mpi4py.MPI``) act for the calling virtual rank and ``bsim.add_time``
    charges calculation time.
    *filesystem* is the MPI-IO cost model (``"lustre:stripe_count=8,..."``, see
    ``docs/io.md``; default *machine*'s ``[filesystem]``, else ``lustre`` with its
    documented parameters), recorded in the result when given or when the program opens
    a file.

    *tracer*, *noise* and *progress* are the optional hooks of
    :mod:`bsim.engine.hooks`; *noise* may also be a spec string as ``--noise`` takes
    (``"periodic:period=1e-3,duration=2.5e-5;net:mean=1e-6"``).  ``compute="measure"``
    charges the host time each rank spends between MPI calls, times *compute_scale*, as
    calc (for unmodified programs; the default ``"ignore"`` counts only ``add_time``).

    *hosts* (an mpi4py communicator of real host processes, e.g. ``MPI.COMM_WORLD``
    under ``mpiexec -n K``) spreads the virtual ranks over its K processes,
    ``partition="block"`` (contiguous), ``"cyclic"``/``"cyclic:block=B"`` (blocks
    dealt in turn: pipelines) or ``"node"`` (whole simulated nodes);
    every process must call ``simulate`` with the same arguments and every one
    returns the same :class:`Result`, equal to the one-process result
    (``docs/distributed.md``).

    With *check_memory* (default) a rank count whose estimated memory
    (:data:`KIB_PER_RANK` each) exceeds the memory available is refused before
    anything is allocated.

    With *private_modules* (default) each rank gets its own copy of every module
    the program imports from its own files during the run, as separate processes
    would (:mod:`bsim.engine.private_modules`); ``False`` shares them (less memory
    and a little less time per switch for very large runs; recorded as
    ``Result.modules = "shared"``). *params* is what the result records as the run's
    parameters; without it, *kwargs* and *args* (``recorded_arguments``).

    *max_sim_time* (seconds of simulated time) and *max_events* stop a run that
    goes on longer with :class:`~bsim.errors.SimulationLimitError`; a run whose
    every unfinished rank polls (``Test``, ``Iprobe``) with nothing in flight
    that could satisfy it ends with :class:`~bsim.errors.LivelockError`.

    Raises :class:`~bsim.errors.DeadlockError` when ranks block forever,
    :class:`~bsim.errors.MPIUsageError` (and subclasses) for invalid calls,
    and :class:`~bsim.errors.RankError` wrapping any other exception of a rank.
    """
    if not callable(main):
        raise TypeError(f"main must be callable (the program every rank runs), got {main!r}")
    if isinstance(ranks, bool) or not isinstance(ranks, (int, np.integer)) or ranks < 1:
        raise ValueError(f"ranks must be an int >= 1, got {ranks!r}")
    ranks = int(ranks)
    protocol, contention = model_settings(protocol, contention, level)
    if check_memory:
        check_rank_memory(ranks)
    preset = None
    p_note = ""
    if machine is not None:
        preset = load_machine(machine)
        if network is None or (isinstance(network, str)   # the preset's own network (the
                               and network.startswith(network_spec(preset))):   # CLI's spec)
            p_note = nearest_per_p_variant(preset.name, list(preset.network_variants),
                                           preset.variant, ranks)
        machine = preset.recorded
        network = network_on_machine(preset, network, ranks)
        with naming_the_file(preset, "network"):
            if network is None:
                network = build_network(network_spec(preset))
                note_network_flags(preset)   # a flagged calibration: warned of, recorded
        with naming_the_file(preset, "collectives"):
            if collectives is None:
                collectives = collective_spec(preset)
                CollectiveCosts(collectives)   # checked here, where the file can be named
        with naming_the_file(preset, "filesystem"):
            if filesystem is None:
                filesystem = filesystem_spec(preset)
                if filesystem is not None:
                    build_filesystem(filesystem)   # checked here, where the file can be named
    net = build_network(DEFAULT_NETWORK if network is None else network)
    net.prepare(ranks)
    if isinstance(noise, str):   # a spec, as --noise takes: compute noise and/or net:...
        noise, net_noise = _build_noise(noise, preset, net)
        if net_noise is not None:
            net = NoisyNetwork(net, **net_noise)
            net.prepare(ranks)
    proto = build_protocol(protocol)
    engine = Engine(ranks, net, proto)
    engine.request_class = Request   # the engine makes requests of the surface's class
    if not private_modules:   # only __main__ stays per rank (a file program's own)
        engine.private_modules = PrivateModules(programs=False)
    engine.fabric = build_fabric(engine, contention)
    engine.collective_costs = CollectiveCosts(collectives)
    if filesystem is not None:
        engine.filesystem = build_filesystem(filesystem)
    selected = getattr(tracer, "ranks", None)
    if selected and min(selected) >= ranks:   # an empty trace, found only when read
        raise ValueError(f"trace: none of the ranks it records ({min(selected)} and up) is a "
                         f"rank of this {ranks}-rank run (0..{ranks - 1})")
    engine.tracer, engine.noise, engine.progress = tracer, noise, progress
    if compute == "measure":
        measure_compute(engine, compute_scale)
    elif compute != "ignore":
        raise ValueError(f"compute must be 'ignore' or 'measure', got {compute!r}")
    if max_sim_time is not None:
        if not (isinstance(max_sim_time, (int, float)) and not isinstance(max_sim_time, bool)
                and max_sim_time > 0):
            raise ValueError(f"max_sim_time must be a number of seconds > 0, got "
                             f"{max_sim_time!r}")
        engine.max_sim_time = float(max_sim_time)
    if max_events is not None:
        if isinstance(max_events, bool) or not isinstance(max_events, int) or max_events < 1:
            raise ValueError(f"max_events must be an int >= 1, got {max_events!r}")
        engine.max_events = max_events
    engine.lookahead = proto.lookahead(net)
    proto.bind(engine)
    kw = kwargs or {}

    program = _plain_call(main, args, kw)

    label = str(name or getattr(main, "__name__", "program"))
    if params is None:
        params = recorded_arguments(args, kw)
    if hosts is not None and hosts.Get_size() > 1:
        result = _simulate_distributed(engine, program, hosts, partition, label, params, main)
    else:
        with mpi4py_shim(main):
            engine.run_program(program)
        result = collect(engine, label, params)
    result.machine, result.kernel_model = machine or "", kernel_model
    if p_note:
        warnings.warn(p_note, stacklevel=2)
        result.notes.append(p_note)
    result.compute = compute_spec(compute, compute_scale)
    record_nodes(result, preset, engine.network)
    if flops is not None:
        from .machines.peak import check_peak
        check_peak(result, float(flops(result.returns) if callable(flops) else flops), preset,
                   engine.network, engine.calc_excess)
    return result


def _build_noise(spec: str, preset: Any, net: NetworkModel) -> tuple[Any, Any]:
    """The noise of *spec* on the run's layout: the machine's cores per node (else the
    most ranks the network puts on a node) and the network's placement of the ranks,
    unless the spec gives its own (``bsim/engine/noise.py``, :class:`OnNodes`)."""
    from .engine.noise import build_noise
    placement = net.placement()
    cores = preset.cores_per_node if preset is not None else None
    if cores is None and placement:
        cores = max(Counter(placement).values())
    return build_noise(spec, cores, placement)


def _simulate_distributed(engine: Engine, program: Callable[[Any], Any], hosts: Any,
                          partition: str, name: str, params: dict[str, Any],
                          main: Any = None) -> Result:
    """:func:`simulate` over the host processes of *hosts* (``bsim.engine.distributed``)."""
    from .engine import distributed, host_checks
    host_checks.check_same_run(hosts, {
        "program": name, "parameters": repr(sorted(params.items())),
        "ranks": str(engine.nranks), "network": engine.network.spec(),
        "protocol": engine.protocol.spec(), "collectives": engine.collective_costs.spec(),
        "contention": type(engine.fabric).__name__, "noise": _same_everywhere(engine.noise),
        "partition": partition, "limits": f"{engine.max_sim_time!r} s, "
                                          f"{engine.max_events!r} events"})
    host_checks.check_distributable(engine)
    K = hosts.Get_size()
    host_of = distributed.partition(engine.nranks, K, partition, engine.network)
    distributed.setup(engine, host_of, hosts.Get_rank(), K)
    stats = distributed.DistStats(K, partition)
    with mpi4py_shim(main):
        distributed.run_distributed(engine, program, hosts, stats)
    distributed.gather_accounts(engine, hosts)
    with recording_inputs() as files:   # simulate()'s, with what every host's ranks read
        files.update({k: v for other in hosts.allgather(dict(files)) for k, v in other.items()})
    engine.check_finish_limit()
    result = collect(engine, name, params)
    result.distributed = stats.to_dict()
    return result


def _same_everywhere(noise: Any) -> str:
    """A compute-noise model as host processes can compare it: its spec, or its type (a
    model of the user's own has no spec; its repr may hold an address)."""
    return _noise_spec(noise) if noise is None or callable(getattr(noise, "spec", None)) \
        else type(noise).__name__


def _noise_spec(noise: Any) -> str:
    """What to record of a compute-noise model: its spec, or its repr if it has none."""
    if noise is None:
        return ""
    spec = getattr(noise, "spec", None)
    return str(spec()) if callable(spec) else repr(noise)


def collect(engine: Engine, name: str, params: dict[str, Any]) -> Result:
    """Gather the per-rank accounts of a finished engine into a :class:`Result`."""
    rs = engine.ranks
    calc = np.fromiter((r.calc for r in rs), float, len(rs))
    wait = np.fromiter((r.wait for r in rs), float, len(rs))
    comm = np.fromiter((r.comm for r in rs), float, len(rs))
    finish = np.fromiter((r.clock for r in rs), float, len(rs))
    return Result(
        ranks=len(rs), finish=finish, calc=calc, wait=wait, comm=comm,
        ops=np.fromiter((r.ops for r in rs), np.int64, len(rs)),
        messages=np.fromiter((r.msgs for r in rs), np.int64, len(rs)),
        bytes=np.fromiter((r.nbytes for r in rs), np.int64, len(rs)),
        network=engine.network.spec(), protocol=engine.protocol.spec(),
        collectives=engine.collective_costs.spec(),
        contention=engine.fabric.spec() if engine.fabric is not None else "none",
        program=name, params=dict(params), events=engine.events, host_seconds=engine.host_seconds,
        returns=[engine.returns.get(r) for r in rs], noise=_noise_spec(engine.noise),
        filesystem=engine.filesystem.spec() if engine.filesystem is not None else "",
        pending_requests={r.rank: r.open_requests for r in rs if r.open_requests},
        unreceived=unreceived_messages(engine), unreceived_first=first_unreceived(engine),
        pending_first=first_pending(engine, Request),
        spawned=len(rs) - engine.nranks, calibration_flags=noted_flags(),   # machines/flags.py
        formula_collectives=engine.formula_collectives
        if engine.fabric is not None or isinstance(engine.network, NoisyNetwork) else 0,
        inert=_inert_settings(engine),
        collective_algorithms=engine.collective_costs.algorithm_record(),
        modules="" if engine.private_modules is None or engine.private_modules.programs
        else "shared")


def _inert_settings(engine: Engine) -> list[str]:
    """The network model's settings that cannot act under this run's protocol and
    contention (``NetworkModel.inert``; through the envelope and noise wrappers)."""
    net: Any = engine.network
    while hasattr(net, "inner"):
        net = net.inner
    return list(net.inert(engine.fabric is not None, engine.protocol.name))
