"""Addresses of buffers: ``MPI.Get_address``, ``MPI.Aint_add``, ``MPI.Aint_diff``.

An address is the host address of a buffer's first byte (all ranks share one process,
so it names the same memory for every rank, as an absolute address does on one node;
dynamic RMA windows use them as target displacements).  ``BOTTOM``, None and the memory
of a window without memory (:class:`NullMemory`) are at address 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...constants import BOTTOM
from .buffer_specs import raw_buffer
from .pickling import buffer

__all__ = ["NullMemory", "Get_address", "Aint_add", "Aint_diff"]


class NullMemory(buffer):
    """The memory of a window without any (``MPI.BOTTOM``; a dynamic window): address 0."""


def Get_address(location: Any) -> int:  # noqa: N802 - mpi4py's name
    """The address of a buffer's first byte (``MPI.Get_address``); ``BOTTOM``, None and a
    window's null memory: 0.  Any other buffer is read as a message's is
    (:func:`bsim.mpi.data.buffer_specs.raw_buffer`: DLPack and CUDA-array-interface objects
    checked the same way), so a bad one raises what mpi4py raises."""
    if location is None or location is BOTTOM or isinstance(location, NullMemory):
        return 0
    mem, _, _ = raw_buffer(location, False)
    if mem is None:
        return 0
    return int(np.frombuffer(mem, dtype=np.uint8).ctypes.data)


def Aint_add(base: int, disp: int) -> int:  # noqa: N802 - mpi4py's name
    """``base + disp`` (``MPI.Aint_add``)."""
    return int(base) + int(disp)


def Aint_diff(addr1: int, addr2: int) -> int:  # noqa: N802 - mpi4py's name
    """``addr1 - addr2`` (``MPI.Aint_diff``)."""
    return int(addr1) - int(addr2)
