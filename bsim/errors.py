"""Exceptions raised by bsim.

Every error raised inside a virtual rank names the rank and the call, e.g.
``rank 3: Send(dest=9, tag=0): invalid dest 9 for <Intracomm WORLD size=8>``.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = [
    "BsimError", "MPIUsageError", "TruncationError", "AddTimeError",
    "CollectiveMismatchError", "SimulationError", "DeadlockError", "RankError",
    "NotInSimulationError", "LookaheadError", "DistributedError", "LivelockError",
    "SimulationLimitError", "AbovePeakError", "MPIUsageTypeError", "HostBlockedError",
    "set_error_code_tables"]


class BsimError(Exception):
    """Base class of every error bsim raises on its own."""


class MPIUsageError(BsimError, ValueError):
    """An MPI call with invalid arguments: rank, tag, count, buffer, request.

    It is ``MPI.Exception`` inside a simulation, with mpi4py's accessors: the
    error class is ``ERR_OTHER`` (15, as MPICH numbers it) unless a subclass or the
    ``error_class`` argument says otherwise (``ERR_COMM`` for a null communicator,
    ...: ``bsim/constants.py``); bsim's message is the error string.

    As mpi4py's, ``MPI.Exception(code)`` made from an error code is that code: its
    string is the code's (``MPI.Get_error_string``), and it converts to, hashes and
    compares as the int (a negative code is ``ERR_UNKNOWN``).
    """

    error_class = 15   # MPI.ERR_OTHER
    _code: int | None = None   # the error code it was made from, if any

    def __init__(self, *args: object, error_class: int | None = None) -> None:
        if len(args) == 1 and type(args[0]) is int and error_class is None:
            code = args[0] if args[0] >= 0 else _ERR_UNKNOWN
            super().__init__()
            self._code = code
            self.error_class = _error_codes.class_of(code)
            return
        super().__init__(*args)
        if error_class is not None:
            self.error_class = error_class   # the MPI error class of this error

    def Get_error_class(self) -> int:
        """The MPI error class."""
        return self.error_class

    def Get_error_code(self) -> int:
        """The MPI error code (the class, unless made from a finer code)."""
        return self.error_code

    def Get_error_string(self) -> str:
        """What was wrong, naming the rank and the call."""
        return str(self)

    @property
    def error_code(self) -> int:
        """The MPI error code."""
        return self.error_class if self._code is None else self._code

    @property
    def error_string(self) -> str:
        """The error string."""
        return str(self)

    def __str__(self) -> str:
        return super().__str__() if self._code is None else _error_codes.string_of(self._code)

    def __repr__(self) -> str:
        if self._code is None:
            return super().__repr__()
        return f"MPI.Exception({self._code})"

    def __int__(self) -> int:
        return self.error_code

    def __index__(self) -> int:
        return self.error_code

    def __bool__(self) -> bool:
        return self.error_code != 0

    def __hash__(self) -> int:
        return hash(self.error_code)

    def _other(self, other: object) -> int | None:
        if isinstance(other, MPIUsageError):
            return other.error_code
        return other if isinstance(other, int) else None

    def __eq__(self, other: object) -> bool:
        code = self._other(other)
        return NotImplemented if code is None else self.error_code == code

    def __ne__(self, other: object) -> bool:
        code = self._other(other)
        return NotImplemented if code is None else self.error_code != code

    def __lt__(self, other: object) -> bool:
        code = self._other(other)
        return NotImplemented if code is None else self.error_code < code

    def __le__(self, other: object) -> bool:
        code = self._other(other)
        return NotImplemented if code is None else self.error_code <= code

    def __gt__(self, other: object) -> bool:
        code = self._other(other)
        return NotImplemented if code is None else self.error_code > code

    def __ge__(self, other: object) -> bool:
        code = self._other(other)
        return NotImplemented if code is None else self.error_code >= code


def _code_is_class(code: int) -> int:
    return code


def _plain_string(code: int) -> str:
    return f"MPI error {code}"


class _ErrorCodes:
    """How an error code maps to its class and string: set by ``bsim.mpi.common.error_codes``
    when it loads (:func:`set_error_code_tables`; it holds the tables, and this module
    must not import it)."""

    def __init__(self) -> None:
        self.class_of: Callable[[int], int] = _code_is_class
        self.string_of: Callable[[int], str] = _plain_string


_error_codes = _ErrorCodes()


def set_error_code_tables(class_of: Callable[[int], int], string_of: Callable[[int], str]
                          ) -> None:
    """Where ``MPI.Exception(code)`` finds the class and the string of *code*."""
    _error_codes.class_of = class_of
    _error_codes.string_of = string_of


_ERR_UNKNOWN = 13


class MPIUsageTypeError(MPIUsageError, TypeError):
    """An argument of the wrong type (mpi4py raises ``TypeError`` there: a list as a buffer)."""


class TruncationError(MPIUsageError):
    """A receive buffer smaller than the message matched to it."""

    error_class = 14   # MPI.ERR_TRUNCATE


class AddTimeError(MPIUsageError):
    """``add_time`` was given a negative, non-finite or non-numeric duration."""


class CollectiveMismatchError(MPIUsageError):
    """Ranks called different collectives, roots, ops or sizes at one position."""


class NotInSimulationError(BsimError, RuntimeError):
    """A simulated MPI object was used outside a running simulation."""


class SimulationError(BsimError, RuntimeError):
    """The simulation as a whole could not complete."""


class DeadlockError(SimulationError):
    """Every unfinished rank is blocked and no event is pending.

    ``blocked`` lists ``(world_rank, pending_call, source_location)`` for each
    blocked rank, in rank order.
    """

    def __init__(self, message: str, blocked: list[tuple[int, str, str]]) -> None:
        super().__init__(message)
        self.blocked = blocked


class LivelockError(DeadlockError):
    """Every unfinished rank is polling (Test, Iprobe, ...) or blocked, and nothing in
    flight can ever satisfy them: the run would poll forever.

    ``blocked`` lists ``(world_rank, call, source_location)`` as for a deadlock; a
    polling rank's call reads ``polling <call>``.
    """


class SimulationLimitError(SimulationError):
    """The run reached the simulated-time or event limit it was given."""


class RankError(SimulationError):
    """A virtual rank raised an exception that is not a :class:`BsimError`.

    The original exception is chained as ``__cause__``; ``rank`` is its world rank.
    """

    def __init__(self, message: str, rank: int) -> None:
        super().__init__(message)
        self.rank = rank


class HostBlockedError(RankError):
    """A virtual rank held the host thread in a blocking host call (socket, pipe, lock)
    while the process stayed idle: the rank it waits for could never run
    (``bsim/engine/host_watchdog.py``)."""


class LookaheadError(SimulationError):
    """A distributed run cannot be synchronised: the lookahead is zero, or an event
    for another host process would fall inside the current window."""


class DistributedError(SimulationError):
    """A distributed run cannot use this model or option (it cannot be partitioned)."""


class AbovePeakError(SimulationError):
    """The predicted flop rate exceeds the machine's peak: its kernel model is impossible."""
