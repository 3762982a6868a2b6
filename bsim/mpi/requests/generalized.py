"""``MPI.Grequest``: generalized requests (MPI 4.1, section 13.2; mpi4py's ``Grequest``).

A generalized request stands for an operation the program carries out itself.
``Grequest.Start(query_fn, free_fn, cancel_fn, args, kwargs)`` returns a pending request
of the calling rank; ``Complete()`` (or mpi4py's ``complete(obj)``, whose *obj* the
lowercase ``wait``/``test`` return) marks it complete at the caller's simulated clock,
waking the owner if it waits on it.  Completing it through ``Wait``/``Test`` calls
``query_fn(status, *args, **kwargs)`` on a status that starts as ``ANY_SOURCE``,
``ANY_TAG``, ``SUCCESS``, then ``free_fn(*args, **kwargs)``; ``Cancel()`` calls
``cancel_fn(completed, *args, **kwargs)``.  A callback that raises prints its traceback
and makes the call raise ``MPI.Exception``: its own error class for an ``MPI.Exception``,
``ERR_OTHER`` otherwise (mpi4py's rule).  It charges no simulated time of its own: the
work it stands for is the program's (``add_time``).  A ``Wait`` on a request nothing will
complete ends the run with a deadlock report.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from ...constants import ANY_SOURCE, ANY_TAG, ERR_OTHER
from ...engine.rank import current
from ...errors import MPIUsageError
from .request import SEND, Request, hand_out
from .status import Status

__all__ = ["Grequest"]

_UNSET = object()


class Grequest(Request):
    """A generalized request (see the module docstring)."""

    __slots__ = ("_query", "_free", "_cancel", "_args", "_kwargs", "_completed", "_result")

    def __init__(self, request: Any = None, *args: Any) -> None:
        if isinstance(request, Request) and request and not isinstance(request, Grequest):
            raise TypeError(f"Grequest(): expected a generalized request, got {request!r}")
        super().__init__(request, *args)
        other = request if isinstance(request, Grequest) else None   # a copy: its handle
        self._query: Callable[..., Any] | None = other._query if other else None
        self._free: Callable[..., Any] | None = other._free if other else None
        self._cancel: Callable[..., Any] | None = other._cancel if other else None
        self._args: tuple[Any, ...] = other._args if other else ()
        self._kwargs: dict[str, Any] = other._kwargs if other else {}
        self._completed: bool = other._completed if other else False
        self._result: Any = other._result if other else None

    @classmethod
    def Start(cls, query_fn: Callable[..., Any] | None = None,
              free_fn: Callable[..., Any] | None = None,
              cancel_fn: Callable[..., Any] | None = None,
              args: tuple[Any, ...] | None = None,
              kwargs: dict[str, Any] | None = None) -> Grequest:
        """A new pending generalized request of the calling rank."""
        vr = current()
        for name, fn in (("query_fn", query_fn), ("free_fn", free_fn),
                         ("cancel_fn", cancel_fn)):
            if fn is not None and not callable(fn):
                raise TypeError(f"rank {vr.rank}: Grequest.Start: {name} is not callable")
        greq = cls(vr, SEND, "Grequest")
        greq._query, greq._free, greq._cancel = query_fn, free_fn, cancel_fn
        greq._args = tuple(args) if args is not None else ()
        greq._kwargs = dict(kwargs) if kwargs is not None else {}
        vr.ops += 1
        hand_out(greq)
        return greq

    def Complete(self) -> None:
        """The operation is done: the request completes at the caller's clock."""
        self._not_null("Complete")
        if self._completed or not self:
            raise MPIUsageError(f"rank {current().rank}: Grequest.Complete: the request is "
                                f"already complete")
        self._completed = True
        t = current().clock
        self.resolve(t, 0.0, t)

    def complete(self, obj: Any = None) -> None:
        """:meth:`Complete`, with the object the lowercase ``wait``/``test`` return."""
        self._result = obj
        self.Complete()

    def _callback(self, fn: Callable[..., Any] | None, call: str, *first: Any) -> None:
        if fn is None:
            return
        try:
            fn(*first, *self._args, **self._kwargs)
        except MPIUsageError:
            traceback.print_exc()
            raise
        except Exception as exc:
            traceback.print_exc()
            raise MPIUsageError(f"rank {current().rank}: Grequest {call} raised "
                                f"{type(exc).__name__}: {exc}", error_class=ERR_OTHER) from exc

    def finish(self, status: Status | None) -> Any:
        """Complete: the query callback fills the status, then the free callback runs."""
        super().finish(None)
        st = status if status is not None else Status()
        st._fill(ANY_SOURCE, ANY_TAG, 0)
        st.error = 0
        st.cancelled = False
        result, self._result = self._result, None
        self._callback(self._query, "query_fn", st)
        self._callback(self._free, "free_fn")
        return result

    def Cancel(self) -> None:
        """Call the cancel callback with whether the request is complete already."""
        self._not_null("Cancel")
        if self:
            self._callback(self._cancel, "cancel_fn", self._completed)

    cancel = Cancel
