"""``mpi4py.rc`` as a simulated program sees it: the same options, checked the same way.

The options are accepted and kept (a program may read back what it set).  These
change a simulation as they change a real run: ``irecv_bufsz``, the receive buffer
``comm.irecv()`` posts without one (a larger pickle is ``ERR_TRUNCATE``);
``initialize``, ``threads`` and ``thread_level``, whether MPI is initialized at import
and the thread level ``Query_thread`` reports (:mod:`.initialization`).  The others do
not: finalization is bsim's (``docs/mpi_coverage.md``), and object reductions are
always folded in rank order.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Rc", "IRECV_BUFSZ"]

IRECV_BUFSZ = 32768   # mpi4py's default receive buffer of irecv() without one


class Rc:
    """Runtime configuration options, with mpi4py 4.x's names and defaults."""

    initialize: bool = True
    threads: bool = True
    thread_level: str = "multiple"
    finalize: bool | None = None
    fast_reduce: bool = True
    recv_mprobe: bool = True
    irecv_bufsz: int = IRECV_BUFSZ
    errors: str = "exception"

    def __init__(self, **kwargs: Any) -> None:
        self(**kwargs)

    def __setattr__(self, name: str, value: Any) -> None:
        if not hasattr(self, name):
            raise TypeError(f"mpi4py.rc has no option {name!r}")
        super().__setattr__(name, value)

    def __call__(self, **kwargs: Any) -> None:
        """Update options; an unknown one is a ``TypeError`` and changes nothing."""
        for key in kwargs:
            if not hasattr(self, key):
                raise TypeError(f"unexpected argument {key!r}")
        for key, value in kwargs.items():
            setattr(self, key, value)

    def __repr__(self) -> str:
        return "<mpi4py.rc>"
