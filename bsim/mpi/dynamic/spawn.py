"""``Intracomm.Spawn``, ``Spawn_multiple`` and ``Comm.Get_parent`` (MPI 4.1, Sec. 11.8.2-3):
new processes started during the run, as new virtual ranks.

The processes a call starts are virtual ranks added to the running simulation
(``bsim/engine/spawning.py``): they get the engine ranks after every existing one,
their own ``MPI.COMM_WORLD`` (the processes of the same call, numbered from 0; a
``Spawn_multiple``'s commands in order, ``APPNUM`` telling which), and
``Comm.Get_parent()`` gives them the intercommunicator with the spawning group, whose
``Spawn`` returns the same one.  What they run must be Python: the interpreter
(``sys.executable`` or any ``python*``; its options are not read) with a script,
``-c CODE`` or ``-m MODULE`` (``mpi4py.futures``' workers), or a
Python script (``.py`` or a ``#!...python`` first line) as the command.  Each runs as
``python SCRIPT ARGS`` would, with ``__name__ == "__main__"``, its own ``sys.argv``
(installed at each switch when the run has private modules, the default) and its own
copies of the program's modules.  Anything else fails at the call with
:class:`NotSimulatedError`: bsim runs no host processes.

Timing (``docs/collectives.md``, "Intercommunicators"): process start-up is not
priced; the new ranks start at the root's simulated time of the call.  The
connection is ``Accept``/``Connect``'s (``connect.py``): the root sends the parents'
group to the first new rank, which replies with the children's group; then each side
broadcasts over its group, ``T = p2p + p2p + T_bcast``.  The network places the new
ranks as its mapping would place ranks ``n, n+1, ...`` of a larger run
(``NetworkModel.place_more``); a network without room refuses the call
(``ERR_SPAWN``).  Under ``contention='fluid'`` the links the new ranks bring (a flat
model's NICs, a ``twolevel`` model's new nodes) join the shared links
(``ContentionLayer.add_ranks``).  Not simulated: spawning over several host processes.
"""

from __future__ import annotations

import os
import re
import runpy
import shutil
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...constants import ERR_ARG, SUCCESS
from ...engine.rank import VirtualRank, current
from ...engine.spawning import SpawnedWorld, add_ranks
from ...errors import MPIUsageError
from ..common.info import Info, check_info
from ..common.namespace import NotSimulatedError
from .connect import call_key, checked_root, receive_group, send_group

if TYPE_CHECKING:
    from ..comms.comm import Comm, Intercomm

__all__ = ["Spawn", "Spawn_multiple", "parent_of"]

ERR_SPAWN = 42   # MPICH's value (bsim/mpi/common/namespace.py)
_PYTHON = re.compile(r"python[0-9.]*")


class _App:
    """One command of a spawn: what each of its *count* processes runs."""

    def __init__(self, vr: VirtualRank, call: str, command: Any, args: Any, count: Any,
                 info: Any) -> None:
        self.count = _count(vr, call, count)
        if info is not None:
            check_info(info, call)
        try:
            path = os.fsdecode(command)
        except TypeError:
            raise TypeError(f"rank {vr.rank}: {call}: the command must be a path, got "
                            f"{type(command).__name__}") from None
        argv = _argv(args)
        self.run, self.argv = _python_program(vr, call, path, argv)


def _count(vr: VirtualRank, call: str, count: Any) -> int:
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise MPIUsageError(f"rank {vr.rank}: {call}: maxprocs={count!r}: the number of "
                            f"processes must be an int >= 1", error_class=ERR_ARG)
    return count


def _argv(args: Any) -> list[str]:
    """mpi4py's reading of one command's *args*: None, a string, or a sequence of them."""
    if args is None:
        return []
    if isinstance(args, (str, bytes)):
        return [os.fsdecode(args)]
    return [os.fsdecode(a) for a in args]


def _python_program(vr: VirtualRank, call: str, path: str, argv: list[str]
                    ) -> tuple[Callable[[], Any], list[str]]:
    """``(run, sys.argv)`` of the Python program ``path argv`` (NotSimulatedError if none)."""
    if _is_interpreter(path):
        while argv and argv[0].startswith("-") and argv[0] not in ("-c", "-m"):
            argv = argv[1:]   # interpreter options (-O, -Wdefault, -Xdev, ...): not read
        if argv[:1] == ["-c"] and len(argv) > 1:
            code = compile(argv[1], "<string>", "exec")
            return _exec(code, "<string>"), ["-c", *argv[2:]]
        if argv[:1] == ["-m"] and len(argv) > 1:
            module = argv[1]

            def run_module() -> None:
                runpy.run_module(module, run_name="__main__")
            return run_module, [module, *argv[2:]]
        if not argv or argv[0].startswith("-"):
            raise NotSimulatedError(f"rank {vr.rank}: {call}: {path} {' '.join(argv)} is not "
                                    f"simulated: bsim runs a script, -c CODE or -m MODULE")
        path, argv = argv[0], argv[1:]
    elif not _is_script(path):
        raise NotSimulatedError(f"rank {vr.rank}: {call}({path!r}) is not simulated: bsim "
                                f"runs spawned processes as virtual ranks executing Python; "
                                f"{path!r} is not a Python interpreter or script")
    try:
        with open(path, encoding="utf-8") as f:
            code = compile(f.read(), path, "exec")
    except OSError as exc:
        raise MPIUsageError(f"rank {vr.rank}: {call}: cannot read the program {path!r}: "
                            f"{exc.strerror}", error_class=ERR_SPAWN) from None
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)   # as `python SCRIPT` puts the script's folder first
    return _exec(code, os.path.abspath(path)), [path, *argv]


def _is_interpreter(path: str) -> bool:
    if _PYTHON.fullmatch(os.path.basename(path)):
        return True
    found = shutil.which(path)
    return found is not None and os.path.realpath(found) == os.path.realpath(sys.executable)


def _is_script(path: str) -> bool:
    if not os.path.isfile(path):
        return False
    if path.endswith(".py"):
        return True
    with open(path, "rb") as f:
        first = f.readline(200)
    return first.startswith(b"#!") and b"python" in first


def _exec(code: Any, file: str) -> Callable[[], Any]:
    def run() -> None:
        exec(code, {"__name__": "__main__", "__file__": file, "__builtins__": __builtins__})
    return run


def _child(app: _App, world: SpawnedWorld) -> Callable[[VirtualRank], Any]:
    """A spawned rank's program: connect to the parents (as ``MPI_Init`` does), then run."""
    def program(vr: VirtualRank) -> Any:
        comm, key, root, parents = world.info
        if vr.rank == world.base:
            receive_group(vr, ("spawn", key), root, "MPI_Init")
            send_group(vr, root, ("spawn", key, "reply"), (world.members,), "MPI_Init")
        ic = comm.derive_inter(vr, ("spawn", key), (parents, world.members), "Spawn")
        ic.local_comms[1].bcast(None, root=0)   # the connection, over the children
        world.parent = ic
        return app.run()
    return program


def _spawn(comm: Comm, vr: VirtualRank, root: Any, apps: Callable[[], list[_App]],
           call: str) -> tuple[Intercomm, list[int]]:
    """Start the processes of *apps* (made at the root only) and connect to them;
    ``(intercommunicator, processes per command)``."""
    me, root = checked_root(comm, vr, root, call)
    key = call_key(comm, vr)
    parents = tuple(comm.members(vr))
    got = None
    if me == root:
        engine = vr.engine
        if engine.host_of is not None:
            raise NotSimulatedError(f"rank {vr.rank}: {call} is not simulated here: the run "
                                    f"is spread over host processes")
        made = apps()
        counts = [a.count for a in made]
        base, total = len(engine.ranks), len(engine.ranks) + sum(counts)
        try:
            engine.network.place_more(total)
        except ValueError as exc:   # NetworkSpecError: no room, or it would move ranks
            raise MPIUsageError(f"rank {vr.rank}: {call}: cannot place {sum(counts)} more "
                                f"ranks: {exc}", error_class=ERR_SPAWN) from None
        if engine.fabric is not None:   # the links the new ranks bring, shared too
            engine.fabric.add_ranks(total)
        commands = [k for k, n in enumerate(counts) for _ in range(n)]
        appnum = {base + i: k for i, k in enumerate(commands)}
        world = SpawnedWorld(base, sum(counts), appnum, (comm, key, vr.rank, parents))
        programs = [_child(a, world) for a in made for _ in range(a.count)]
        argv = [a.argv for a in made for _ in range(a.count)]
        add_ranks(engine, programs, vr.clock, lambda r: world, argv)
        send_group(vr, base, ("spawn", key), (parents,), call)
        receive_group(vr, ("spawn", key, "reply"), base, call)
        got = (world.members, counts)
    children, counts = comm.bcast(got, root=root)
    return comm.derive_inter(vr, ("spawn", key), (parents, tuple(children)), "Spawn"), counts


def Spawn(comm: Comm, command: Any = None, args: Any = None, maxprocs: int = 1,
          info: Info | None = None, root: int = 0, errcodes: list[int] | None = None
          ) -> Intercomm:
    """Start *maxprocs* processes of the Python program *command* *args* (significant
    at *root*) and return the intercommunicator with them (collective over *comm*)."""
    vr = current()
    ic, counts = _spawn(comm, vr, root, lambda: [_App(vr, "Spawn", command, args, maxprocs,
                                                      info)], "Spawn")
    if errcodes is not None:
        errcodes[:] = [SUCCESS] * counts[0]
    return ic


def Spawn_multiple(comm: Comm, command: Any = None, args: Any = None, maxprocs: Any = None,
                   info: Any = None, root: int = 0, errcodes: list[list[int]] | None = None
                   ) -> Intercomm:
    """Start the processes of several Python programs (``command[i]`` with ``args[i]``,
    ``maxprocs[i]`` of them; significant at *root*); the intercommunicator with all of
    them, in that order (collective over *comm*)."""
    vr = current()

    def apps() -> list[_App]:
        if isinstance(command, (str, bytes, os.PathLike)):
            raise ValueError("expecting a sequence of path-like")
        commands = list(command)
        n = len(commands)
        argvs = ([args] * n if args is None or isinstance(args, (str, bytes))
                 else _items(args, n))
        counts = [1 if maxprocs is None else maxprocs] * n if (
            maxprocs is None or isinstance(maxprocs, int)) else _items(maxprocs, n)
        infos = [info] * n if info is None or isinstance(info, Info) else _items(info, n)
        return [_App(vr, "Spawn_multiple", c, a, k, i)
                for c, a, k, i in zip(commands, argvs, counts, infos, strict=True)]

    ic, counts = _spawn(comm, vr, root, apps, "Spawn_multiple")
    if errcodes is not None:
        errcodes[:] = [[SUCCESS] * k for k in counts]
    return ic


def _items(seq: Any, n: int) -> list[Any]:
    items = list(seq)
    if len(items) != n:
        raise ValueError(f"expecting {n} items, got {len(items)}")
    return items


def parent_of(vr: VirtualRank | None) -> Intercomm | None:
    """``Comm.Get_parent()`` of *vr*: the intercommunicator with the group that spawned
    it (None for the run's own ranks and outside a run)."""
    world = None if vr is None else vr.world
    return None if world is None else world.parent
