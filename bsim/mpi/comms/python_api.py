"""What mpi4py's communicators offer at the Python level: properties and pickling.

:class:`CommPythonAPI` is mixed into :class:`bsim.mpi.comms.comm.Comm`: the properties that
mirror the MPI calls (``name``, ``is_inter``, ``is_intra``, ``is_topo``, ``topology``,
``group``, ``info``), pickling as mpi4py does it (``COMM_NULL``, ``COMM_SELF`` and
``COMM_WORLD`` by name, copies of them to equal objects, any other communicator not
at all: a handle of its process), (integer handles are ``bsim/mpi/common/handles.py``).

Names (MPI 4.1 Sec. 7.8): ``Get_name`` gives what MPICH gives, ``MPI_COMM_WORLD``,
``MPI_COMM_SELF`` and ``MPI_COMM_NULL`` for the predefined communicators and ``''`` for
a new one (``Dup``, ``Split``, ``Create``, an intercommunicator ...), until the
process names it with ``Set_name``: a name is local to the process that sets it.  bsim's
own label (``WORLD.Dup``, ``WORLD.Split(0)``), which ``repr`` and error messages show,
is kept apart (``_name``); ``Set_name`` renames it too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...constants import ERR_COMM, UNDEFINED
from ...constants import CommKind as Kind
from ...engine.rank import current_or_none
from ...errors import MPIUsageError

__all__ = ["CommPythonAPI", "PICKLED_BY_NAME", "on_null", "on_freed"]

PICKLED_BY_NAME: dict[str, Any] = {}
_NAMES = "bsim.comm.names"   # engine.user_state: {(world rank, context): name}
_PREDEFINED_NAMES = {Kind.WORLD: "MPI_COMM_WORLD", Kind.SELF: "MPI_COMM_SELF",
                     Kind.NULL: "MPI_COMM_NULL"}
"""The predefined communicators by name (filled by ``bsim/mpi/comms/comm.py``)."""


class CommPythonAPI:
    """Properties and pickling of a communicator (see the module docstring)."""

    __slots__ = ()
    _name: str
    _handle: object
    context: Any
    kind: Kind

    if TYPE_CHECKING:
        def _null_here(self) -> bool: ...
        def _copy_from(self, other: Any) -> None: ...
        def Free(self) -> None: ...

    def Get_name(self) -> str:
        """The name the calling process gave the communicator with ``Set_name``, else
        MPICH's: ``MPI_COMM_WORLD``, ``MPI_COMM_SELF``, ``MPI_COMM_NULL``, and ``''`` for
        any other (MPI 4.1 Sec. 7.8: a new communicator has an empty name)."""
        vr = current_or_none()
        names = vr.engine.user_state.get(_NAMES, {}) if vr is not None else {}
        default = _PREDEFINED_NAMES.get(self.kind, "")
        return names.get((vr.rank, self.context), default) if vr is not None else default

    def Set_name(self, name: str) -> None:
        """Name the communicator on the calling process (MPI 4.1 Sec. 7.8); bsim's label
        in ``repr`` and error messages becomes *name* too."""
        if not isinstance(name, str):
            raise TypeError(f"Set_name: expected a str, got {type(name).__name__}")
        vr = current_or_none()
        if vr is not None:
            vr.engine.user_state.setdefault(_NAMES, {})[(vr.rank, self.context)] = name
        self._name = name  # type: ignore[misc]  # a slot of Comm, which mixes this in

    @property
    def label(self) -> str:
        """bsim's label of the communicator (``WORLD.Dup``), for messages and ``repr``."""
        return self._name

    @property
    def name(self) -> str:
        """``Get_name()``."""
        return self.Get_name()

    @name.setter
    def name(self, name: str) -> None:
        self.Set_name(name)

    is_inter = property(lambda self: self.Is_inter(), doc="``Is_inter()``")
    is_intra = property(lambda self: self.Is_intra(), doc="``Is_intra()``")
    is_topo = property(lambda self: self.Get_topology() != UNDEFINED,
                       doc="Whether the communicator has a virtual topology")
    topology = property(lambda self: self.Get_topology(), doc="``Get_topology()``")
    group = property(lambda self: self.Get_group(), doc="``Get_group()``")
    info = property(lambda self: self.Get_info(), lambda self, info: self.Set_info(info),
                    doc="``Get_info()`` / ``Set_info(info)``")

    def free(self) -> None:
        """mpi4py's ``free``: nothing for the predefined objects and null handles, a copy of
        a predefined communicator becomes null, any other communicator is ``Free``d."""
        if self._null_here() or any(self is c for c in PICKLED_BY_NAME.values()):
            return
        if any(self._handle is c._handle for c in PICKLED_BY_NAME.values()):
            self._copy_from(PICKLED_BY_NAME["COMM_NULL"])
            return
        self.Free()

    def __reduce__(self) -> Any:
        """``COMM_NULL``, ``COMM_SELF`` and ``COMM_WORLD`` pickle to themselves (copies to
        equal objects); any other communicator is a handle of its process (``ValueError``)."""
        for name, const in PICKLED_BY_NAME.items():
            if self is const:
                return name
            if self._handle is const._handle:
                return (type(self), (const,))
        raise ValueError(f"cannot serialize {self!r}: a communicator is a handle of its "
                         f"process")


def on_null(vr: Any) -> MPIUsageError:
    """The error of a call on ``COMM_NULL``, naming the call (``rank 3: Barrier on
    COMM_NULL``): the communicator's queries that find it do not know the call."""
    from ...engine.failures import called_from
    call = called_from()[0] or "an operation"
    return MPIUsageError(f"rank {vr.rank}: {call} on COMM_NULL", error_class=ERR_COMM)


def on_freed(comm: Any, vr: Any) -> MPIUsageError:
    """The error of a call on a communicator the calling rank has freed (a null handle
    now, in mpi4py), naming the call as :func:`on_null` does (``rank 0: Isend on
    <Intracomm WORLD.Split(0)> after its Free()``)."""
    from ...engine.failures import called_from
    call = called_from()[0] or "an operation"
    return MPIUsageError(f"rank {vr.rank}: {call} on {comm!r} after its Free()",
                         error_class=ERR_COMM)
