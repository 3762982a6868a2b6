"""Targets of ``bsim run``: a registered skeleton name or a Python file.

A file's top-level code runs once per virtual rank, as ``mpiexec -n N python
FILE`` would run it: each rank executes the compiled module in a fresh module
named ``__main__``, which is ``sys.modules["__main__"]`` while that rank runs
(so what the file defines pickles by reference, as under mpiexec).  Inside the
simulation ``from mpi4py import MPI`` resolves to ``bsim.MPI`` (see
:func:`bsim.simulate.mpi4py_shim`).

A skeleton may also decide where its ranks run (MILC's ``layout``): its
``mapping`` gives a rank->node mapping spec that :func:`apply_mapping` sets
as the ``mapping`` parameter of the network model
(``Target.network_for(spec)``).

What a file program's run read is recorded (``Result.inputs``,
``netmodels/input_files.py``): the file itself (``program FILE.py``) and, when the
run ends, the program's local modules (:func:`note_program_modules`).
"""

from __future__ import annotations

import importlib.machinery
import inspect
import os
import sys
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from netmodels.input_files import note_input

from ..engine.private_modules import PrivateModules, _shared_roots
from ..engine.rank import current_or_none

if TYPE_CHECKING:
    from bsim.machines.kernels import MachineKernel

__all__ = ["Target", "load_target", "apply_mapping", "file_arguments",
           "note_program_modules"]


@dataclass
class Target:
    """What to run: a callable, its keyword parameters, and its natural rank count."""

    name: str
    main: Callable[..., Any]
    params: dict[str, Any]
    ranks: int | None
    mapping: str | None = None
    """Rank->node mapping spec the parameters ask for (e.g. a MILC layout), or None."""
    kernel_model: str = ""
    """Where the compute times came from on ``--machine`` (``bsim/machines/kernels.py``)."""
    flops: Callable[[list[Any]], float] | None = None
    """Every rank's return value -> floating-point operations of the run, when known."""
    is_file: bool = False
    """A Python file: its parameters reach it on its command line, not as keywords."""
    partition: str | None = None
    """The host-process partition the skeleton favours (``Skeleton.partition``), or None."""

    @property
    def recorded(self) -> dict[str, Any]:
        """The parameters a result records: all but ``verbose``, which only prints (and
        ``--quiet`` sets), so two runs of one prediction record the same parameters."""
        return {k: v for k, v in self.params.items() if k != "verbose"}

    @property
    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :attr:`main` (none for a file program)."""
        return {} if self.is_file else self.params

    def network_for(self, network: Any) -> Any:
        """*network* (spec string or model) with this target's mapping applied."""
        return apply_mapping(network, self.mapping)


def apply_mapping(network: Any, mapping: str | None) -> Any:
    """Set *mapping* as the ``mapping`` parameter of the network spec *network*.

    *network* is a spec string or a model (whose ``spec()`` is used; there a
    mapping equal to the model's default counts as not given).  Returns
    *network* unchanged when *mapping* is None or the spec already says the
    same mapping; otherwise the spec string with ``,mapping=...`` appended.
    Raises :class:`ValueError` when the model takes no ``mapping`` (naming
    those that do) or the spec sets a different mapping.
    """
    if mapping is None:
        return network
    from netmodels.base import REGISTRY, NetworkModel
    from netmodels.spec import parse_spec
    spec = network.spec() if isinstance(network, NetworkModel) else str(network)
    name, kwargs = parse_spec(spec)
    cls = REGISTRY.get(name)
    if isinstance(network, NetworkModel) and cls is not None and "mapping" in kwargs:
        # a model's spec() always names its mapping: its default counts as not given
        default = inspect.signature(cls).parameters.get("mapping")
        if default is not None and str(kwargs["mapping"]) == str(default.default):
            spec = ",".join(item for item in spec.split(",")
                            if not item.startswith("mapping=")).rstrip(":")
            name, kwargs = parse_spec(spec)
    if cls is None:
        raise ValueError(f"unknown network model {name!r}; valid models: "
                         f"{', '.join(sorted(REGISTRY))}")
    if "mapping" not in cls.parameters:
        able = ", ".join(sorted(n for n, c in REGISTRY.items() if "mapping" in c.parameters))
        raise ValueError(f"mapping {mapping!r} needs a network model with a mapping "
                         f"parameter ({able}); {name!r} has none")
    if "mapping" in kwargs:
        if str(kwargs["mapping"]) == mapping:
            return network
        raise ValueError(f"network spec sets mapping={kwargs['mapping']} but the skeleton's "
                         f"parameters ask for mapping={mapping}; give only one")
    return f"{spec}{',' if ':' in spec else ':'}mapping={mapping}"


def _file_program(path: Path, argv: list[str]) -> Callable[[], None]:
    """The program of file *path*: each call runs it as ``python FILE *argv*`` would.

    Each call (each rank) executes the compiled file in a fresh module named
    ``__main__`` that is ``sys.modules["__main__"]`` while the rank runs
    (:meth:`~bsim.engine.private_modules.PrivateModules.set_main`): what the file
    defines pickles by reference and unpickles as the receiving rank's own.
    """
    source = path.read_text(encoding="utf-8")
    note_input("program", path.name, source)
    code = compile(source, str(path), "exec")
    folder = str(path.parent)

    def run_file() -> None:
        module = _main_module(path)
        saved_argv, saved_main = sys.argv, sys.modules.get("__main__")
        sys.argv = [str(path), *argv]
        sys.modules["__main__"] = module
        vr = current_or_none()
        if vr is not None:
            engine = vr.engine
            if engine.private_modules is not None:
                engine.private_modules.set_main(vr.rank, module)
            if "bsim.program_modules" not in engine.user_state:   # once per run
                engine.user_state["bsim.program_modules"] = path
                engine.user_state.setdefault("bsim.at_finish", []).append(
                    lambda: note_program_modules(path, engine.private_modules))
        try:
            exec(code, module.__dict__)
        finally:
            sys.argv = saved_argv
            if sys.modules.get("__main__") is module and saved_main is not None:
                sys.modules["__main__"] = saved_main

    if folder not in sys.path:
        sys.path.insert(0, folder)
    return run_file


def note_program_modules(program: Path, private: PrivateModules | None) -> None:
    """Note the program's local modules as the run's inputs (``module NAME``).

    A local module is one whose file (``__file__``: ``helper.py``, a package's
    ``pkg/__init__.py``) lies in the folder of *program* or below it, but not the
    program itself, nor bsim's own files, the standard library or an installed
    package (what :mod:`bsim.engine.private_modules` never makes private, should the
    folder hold them).  Candidates are the modules in ``sys.modules`` when the run
    ends and every rank's private copies (*private*'s ``by_rank``, gone from
    ``sys.modules`` by then); each is named by its path relative to the folder and
    recorded by the file's bytes as the first run that used that module object read
    them (a module kept in ``sys.modules`` is not executed again by the next run, so
    an edit since then did not shape it).  Called once per run, when the engine
    finishes (``user_state["bsim.at_finish"]``).
    """
    folder = os.path.join(str(program.parent), "")
    modules = list(sys.modules.values())
    if private is not None:
        modules += [m for mine in private.by_rank.values() for m in mine.values()]
    by_file: dict[str, list[types.ModuleType]] = {}
    for module in modules:
        file = getattr(module, "__file__", None) if isinstance(module, types.ModuleType) \
            else None
        if isinstance(file, str) and file.startswith(folder):
            by_file.setdefault(file, []).append(module)
    roots = _shared_roots()
    for file, used in sorted(by_file.items()):
        real = os.path.realpath(file)
        if real == str(program) or real.startswith(roots):
            continue
        content = next((_READ[m] for m in used if m in _READ), None)
        if content is None:
            try:
                with open(file, "rb") as fh:
                    content = fh.read()
            except OSError:   # removed since it was imported: nothing left to record
                continue
        for module in used:
            if sys.modules.get(module.__name__) is module:   # may serve the next run
                _READ[module] = content
        note_input("module", file, content, name=Path(os.path.relpath(file, folder)).as_posix())


_READ: weakref.WeakKeyDictionary[types.ModuleType, bytes] = weakref.WeakKeyDictionary()
"""A local module kept in ``sys.modules`` -> its file's bytes when a run first used it."""


def _main_module(path: Path) -> types.ModuleType:
    """A fresh ``__main__`` module for the script *path*, as ``python FILE`` makes it."""
    module = types.ModuleType("__main__")
    module.__dict__.update(__file__=str(path), __builtins__=__builtins__, __spec__=None,
                           __package__=None, __loader__=importlib.machinery.SourceFileLoader(
                               "__main__", str(path)))
    return module


def file_arguments(params: dict[str, Any]) -> list[str]:
    """``--param K=V`` for a file program: ``--K=V`` on its command line, in the given order.

    An ``argparse`` program then takes the same parameters from ``bsim run FILE --param
    nx=64`` as from ``mpiexec -n N python FILE --nx=64``; arguments after ``--`` follow.
    """
    out = []
    for key, value in params.items():
        if not key.replace("-", "_").isidentifier():
            raise ValueError(f"--param {key}={value}: a file program's parameter becomes "
                             f"--{key}=VALUE on its command line; {key!r} is not an option "
                             f"name")
        out.append(f"--{key}={value}")
    return out


def _given_table(kernel: MachineKernel, value: Any) -> str:
    """``Target.kernel_model`` for a skeleton that reads a machine's kernel table itself
    (*kernel* without ``key``: MILC's ``machine``, HPL's ``kernel``) when the user named
    the machine: ``machine = mine.toml (given): mine [kernels.milc]``, as ``--machine``
    says ``machine = bgp: bgp [kernels.milc]``.  A value that names no machine with that
    table (``table:path=k.csv``, ``flat:rate=1e9``, a file that does not load: the
    skeleton reports it) is said as given; a bare name (no ``=``) that is neither a
    preset nor a file is a misspelt machine, refused here as ``--machine`` refuses it,
    before any rank runs (or any point of a sweep)."""
    from bsim.machines import MachineError, list_machines, load_machine, split_variant
    account = f"{kernel.param} = {value} (given)"
    if not isinstance(value, str):
        return account
    base = str(split_variant(value)[0])
    if base.lower() not in list_machines() and not Path(base).is_file():
        if "=" not in value and value.partition(":")[0] not in kernel.spec_kinds:
            try:
                load_machine(value)   # raises, naming the valid machines
            except MachineError as exc:
                raise MachineError(f"--param {kernel.param}={value}: {exc}") from None
        return account
    try:
        m = load_machine(value)
    except (MachineError, OSError, ValueError):
        return account
    return f"{account}: {m.name} [kernels.{kernel.table}]" if m.kernels.get(kernel.table) \
        else account


def _module_program(module: str, argv: list[str]) -> Callable[[], None]:
    """The program ``python -m MODULE *argv*``: each call (each rank) runs *module* as
    ``__main__`` (``runpy.run_module``, which sets ``sys.argv[0]`` to its file), as
    ``mpiexec -n N python -m mpi4py.futures prog.py`` runs it on every process."""
    import runpy

    def run_module() -> None:
        saved = sys.argv
        sys.argv = [module, *argv]
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        finally:
            sys.argv = saved
    return run_module


def load_target(target: str | None, params: dict[str, Any], argv: list[str] | None = None,
                machine: str | None = None, ranks: int | None = None,
                quiet: bool = False, module: str | None = None) -> Target:
    """Resolve *target* (skeleton name or ``.py`` path) with *params* (``--param k=v``).

    A file's *params* become ``--k=v`` arguments before *argv* (:func:`file_arguments`);
    the result records them, and the whole command line as ``argv``.

    With *machine* (``--machine``), a skeleton that declares ``machine_kernel``
    takes its compute times from that machine (its table, else the generic model,
    else an error naming what the machine file lacks), unless the user set the
    parameter; ``Target.kernel_model`` says which.  With *quiet* a skeleton's
    ``verbose`` parameter defaults to False.  With *ranks* (``-n``), a
    skeleton that declares ``scale`` gets the process grid for that many ranks
    unless the user set one of its parameters.
    """
    if module is not None:   # bsim run -m MODULE [ARGS]: python -m MODULE ARGS per rank
        command_line = ([target] if target else []) + file_arguments(params) + list(argv or [])
        recorded = dict(params, module=module)
        if command_line:
            recorded["argv"] = " ".join(command_line)
        if target and os.path.isfile(target):
            note_input("program", Path(target).name, Path(target).read_text(encoding="utf-8"))
            folder = str(Path(target).resolve().parent)
            if folder not in sys.path:
                sys.path.insert(0, folder)
        return Target(f"-m {module}", _module_program(module, command_line), recorded, None,
                      is_file=True)
    if target is None:
        raise ValueError("bsim run needs a skeleton name, a Python file or -m MODULE")
    path = Path(target)
    if target.endswith(".py") or os.sep in target or path.is_file():
        if path.is_dir():
            raise ValueError(f"{target} is a directory: give a Python file or a skeleton name")
        if not path.is_file():
            raise FileNotFoundError(f"no such program file: {target}")
        command_line = file_arguments(params) + list(argv or [])
        recorded: dict[str, Any] = dict(params)
        if command_line:
            recorded["argv"] = " ".join(command_line)
        return Target(path.name, _file_program(path.resolve(), command_line), recorded, None,
                      is_file=True)
    from skeletons import registry
    skel = registry.get(target)
    if argv:
        raise ValueError(f"skeleton {target!r} takes --param K=V, not program arguments "
                         f"({' '.join(argv)})")
    if quiet and "verbose" in skel.params and "verbose" not in params:
        params = {**params, "verbose": False}   # --quiet silences a skeleton's own print
    if ranks is not None and skel.scale is not None:
        sized = skel.scale(ranks)
        if not set(sized) & set(params):
            params = {**params, **sized}
    account = ""
    if skel.machine_kernel is not None and skel.machine_kernel.key is None \
            and skel.machine_kernel.param in params:   # names the machine whose table is read
        account = _given_table(skel.machine_kernel, params[skel.machine_kernel.param])
    elif machine is not None and skel.machine_kernel is not None:
        from bsim.machines.kernels import choose
        kernel = skel.machine_kernel
        value, account = choose(kernel, machine, params)
        if value is not None:
            params = {**params, kernel.param: value}
        if kernel.follows and kernel.param in params:   # from the machine or given
            ratio = float(params[kernel.param]) / skel.defaults[kernel.param]
            scaled = [k for k in kernel.follows if k not in params]
            params.update({k: skel.defaults[k] * ratio for k in scaled})
            if scaled:
                account += (f"; {', '.join(scaled)} scaled with {kernel.param} "
                            f"(x{ratio:.4g} of the default)")
    resolved = skel.resolve(params)
    if machine is not None:   # compute no machine times: say it stays an assumed constant
        for key, what in skel.assumed.items():
            if key not in params:
                account += (f"{'; ' if account else ''}{what}: {key} = {resolved[key]!r} "
                            f"(ASSUMED, the same on every machine)")
    ranks = skel.ranks(resolved) if skel.ranks is not None else None
    mapping = skel.mapping(resolved) if skel.mapping is not None else None
    flops = None
    if skel.flops is not None:
        count = skel.flops

        def flops(returns: list[Any]) -> float:
            return count(resolved, returns)
    return Target(skel.name, skel.main, resolved, ranks, mapping, account, flops,
                  partition=skel.partition)
