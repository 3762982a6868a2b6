"""``Status``: source, tag and size of a received message (mpi4py's ``MPI.Status``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...constants import ANY_SOURCE, ANY_TAG, ERR_TYPE, UNDEFINED
from ...errors import MPIUsageError

__all__ = ["Status"]


class Status:
    """Source, tag and size of a received message (mpi4py's ``MPI.Status``)."""

    __slots__ = ("source", "tag", "count", "error", "cancelled", "__weakref__")

    def __init__(self, status: Status | None = None) -> None:
        if status is not None and not isinstance(status, Status):
            raise TypeError(f"Status(status): expected a Status, got {type(status).__name__}")
        self.source = ANY_SOURCE
        self.tag = ANY_TAG
        self.count = 0      # bytes
        self.error = 0
        self.cancelled = False
        if status is not None:   # mpi4py's Status(status): a copy
            self.source, self.tag, self.count, self.error, self.cancelled = (
                status.source, status.tag, status.count, status.error, status.cancelled)

    def Get_source(self) -> int:
        """Rank of the sender in the communicator of the receive."""
        return self.source

    def Get_tag(self) -> int:
        """Tag of the message."""
        return self.tag

    def Get_count(self, datatype: Any = None) -> int:
        """Number of elements of *datatype* received (bytes by default); ``UNDEFINED``
        when the bytes are not a whole number of them (MPI 4.0 Sec. 3.2.5)."""
        if datatype is None:
            return self.count
        _typed(datatype, "Get_count")
        size = datatype.Get_size()
        if not size:
            return 0
        return self.count // size if self.count % size == 0 else UNDEFINED

    def Get_elements(self, datatype: Any) -> int:
        """Number of basic elements received (MPI 4.0 Sec. 4.1.11): whole copies of
        *datatype* times the basic elements of one (its type signature: a vector of 3
        blocks of 2 doubles holds 6, a pair type 2), plus the leading basic elements of a
        partial copy; ``UNDEFINED`` when the bytes end inside a basic element."""
        from ..data.packing import signature  # (packing imports the datatypes, which import us)
        _typed(datatype, "Get_elements")
        size = datatype.Get_size()
        if not size:
            return 0
        basics = signature(datatype._rec)
        full, rest = divmod(self.count, size)
        elements = full * len(basics)
        for basic in basics:
            if rest <= 0:
                break
            step = basic.layout.size
            if rest < step:
                return UNDEFINED
            rest -= step
            elements += 1
        return elements

    def Get_error(self) -> int:
        """Error code (always 0: errors raise)."""
        return self.error

    def Is_cancelled(self) -> bool:
        """Whether the request was cancelled."""
        return bool(self.cancelled)

    def Set_source(self, source: int) -> None:
        """Set the source."""
        self.source = source

    def Set_tag(self, tag: int) -> None:
        """Set the tag."""
        self.tag = tag

    def Set_error(self, error: int) -> None:
        """Set the error code."""
        self.error = error

    def Set_elements(self, datatype: Any, count: int) -> None:
        """Set the size to *count* elements of *datatype*."""
        _typed(datatype, "Set_elements")
        self.count = int(count) * datatype.Get_size()

    def Set_cancelled(self, flag: bool) -> None:
        """Set the cancelled flag."""
        self.cancelled = bool(flag)

    def tomemory(self) -> _StatusMemory:
        """The status as MPICH lays it out (``count_lo``, ``count_hi_and_cancelled``,
        ``MPI_SOURCE``, ``MPI_TAG``, ``MPI_ERROR``): a view of ints that reads and
        writes this status (mpi4py's ``Status.tomemory``)."""
        return _StatusMemory(self)

    def py2f(self) -> list[int]:
        """The Fortran status: its ``F_STATUS_SIZE`` ints (``F_SOURCE``, ``F_TAG`` and
        ``F_ERROR`` index them), as MPICH lays them out."""
        return list(self.tomemory())

    @classmethod
    def f2py(cls, arg: list[int]) -> Status:
        """A status from a Fortran status (``py2f``'s list)."""
        status = cls()
        memory = status.tomemory()
        for i, value in enumerate(list(arg)[:5]):
            memory[i] = value
        return status

    def __eq__(self, other: object) -> bool:
        """Statuses are equal when every field is (mpi4py compares the C structs)."""
        if not isinstance(other, Status):
            return NotImplemented
        return list(self.tomemory()) == list(other.tomemory())

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return not self == other

    def __hash__(self) -> int:
        """mpi4py's handles are unhashable."""
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __reduce__(self) -> Any:
        """A copy with the same fields (of the same class)."""
        return (_status_from, (type(self), list(self.tomemory())))

    def _fill(self, source: int, tag: int, nbytes: int) -> None:
        self.source, self.tag, self.count = source, tag, nbytes

    def __repr__(self) -> str:
        return f"<Status source={self.source} tag={self.tag} count={self.count}>"


class _StatusMemory:
    """Five C ints over a :class:`Status`, read and written through to it."""

    __slots__ = ("status",)
    _FIELDS = ("count_lo", "count_hi", "source", "tag", "error")

    def __init__(self, status: Status) -> None:
        self.status = status

    def __len__(self) -> int:
        return 5

    def _get(self, i: int) -> int:
        st = self.status
        return (st.count & 0x7FFFFFFF, (st.count >> 31) << 1 | int(st.cancelled), st.source,
                st.tag, st.error)[i]

    def __getitem__(self, i: int) -> int:
        if not -5 <= i < 5:
            raise IndexError("status memory index out of range")
        return self._get(i % 5)

    def __setitem__(self, i: int, value: int) -> None:
        if not -5 <= i < 5:
            raise IndexError("status memory index out of range")
        i %= 5
        st = self.status
        if i == 0:
            st.count = (st.count & ~0x7FFFFFFF) | (int(value) & 0x7FFFFFFF)
        elif i == 1:
            st.count = (st.count & 0x7FFFFFFF) | ((int(value) >> 1) << 31)
            st.cancelled = bool(int(value) & 1)
        else:
            setattr(st, self._FIELDS[i], int(value))

    def __iter__(self) -> Iterator[int]:
        return (self._get(i) for i in range(5))


def _status_from(cls: type[Status], fields: list[int]) -> Status:
    """Unpickle a status."""
    return cls.f2py(fields)


def _typed(datatype: Any, call: str) -> None:
    """``ERR_TYPE`` for ``DATATYPE_NULL`` (or a datatype without data)."""
    if getattr(datatype, "label", None) == "DATATYPE_NULL":
        raise MPIUsageError(f"Status.{call}(DATATYPE_NULL): not a datatype of data",
                            error_class=ERR_TYPE)
